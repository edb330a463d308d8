import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { dialects } from '../helpers/db.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { importKeycloakRealms } from '../../src/admin/operations/realm-import.js';
import { exportRealm } from '../../src/admin/keycloak/export.js';
import { cliActor } from '../../src/admin/operations/common.js';

const actor = { ...cliActor(), via: 'import' as const };
type Json = Record<string, unknown>;

// Keycloak's backchannel.logout.* client attributes move with a realm (kept, reported), and back out.
for (const dialect of dialects()) {
  describe(`Keycloak import and export: back-channel logout (${dialect})`, () => {
    let ts: TestServer;
    before(async () => {
      ts = await startTestServer({ dialect });
    });
    after(() => ts.close());

    const client = (clientId: string, attributes: Json, extra: Json = {}): Json => ({
      clientId,
      protocol: 'openid-connect',
      publicClient: false,
      secret: 'a-generated-looking-secret-of-32-chars-0123',
      redirectUris: ['https://app.example.com/cb'],
      attributes,
      ...extra,
    });

    test('the attributes are kept and reported; a relative URL is resolved against rootUrl; a bad one is left out, the client kept', async () => {
      const realm = {
        realm: 'bcl',
        enabled: true,
        clients: [
          client('spring', { 'backchannel.logout.url': 'https://spring.example.com/logout/connect/back-channel/keycloak', 'backchannel.logout.session.required': 'false', 'backchannel.logout.revoke.offline.tokens': 'true' }),
          client('apache', { 'backchannel.logout.url': '/protected/redirect_uri?logout=backchannel', 'backchannel.logout.session.required': 'true' }, { rootUrl: 'https://apache.example.com/' }),
          client('broken', { 'backchannel.logout.url': 'https://broken.example.com/logout#frag' }),
          client('adapter', { 'backchannel.logout.url': 'http://${application.session.host}/k_logout' }),
          // Keycloak writes the two switches on every client, with no URL: nothing to report.
          client('plain', { 'backchannel.logout.session.required': 'true', 'backchannel.logout.revoke.offline.tokens': 'false' }, { frontchannelLogout: true }),
        ],
      };
      const report = await importKeycloakRealms(ts.store, [realm], { ifExists: 'fail' }, actor);
      const r = report.realms[0]!;
      assert.equal(r.status, 'imported', JSON.stringify(r));
      const text = JSON.stringify(r.lines);
      const spring = (await ts.store.clients.get('bcl', 'spring'))!;
      assert.deepEqual(spring.backchannelLogout, { url: 'https://spring.example.com/logout/connect/back-channel/keycloak', sessionRequired: false, revokeOfflineTokens: true });
      assert.match(text, /back-channel logout to https:\/\/spring\.example\.com\/logout\/connect\/back-channel\/keycloak \(without sid\), revoking offline tokens/);
      assert.equal((await ts.store.clients.get('bcl', 'apache'))!.backchannelLogout.url, 'https://apache.example.com/protected/redirect_uri?logout=backchannel');
      const broken = (await ts.store.clients.get('bcl', 'broken'))!;
      assert.equal(broken.backchannelLogout.url, null);
      const line = r.lines.find((l) => l.element === 'client broken backchannel.logout.url https://broken.example.com/logout#frag');
      assert.equal(line?.outcome, 'skipped', text);
      assert.match(line?.reason ?? '', /fragment/);
      assert.equal((await ts.store.clients.get('bcl', 'adapter'))!.backchannelLogout.url, null);
      assert.match(r.lines.find((l) => l.element.startsWith('client adapter backchannel.logout.url'))?.reason ?? '', /placeholder/);
      assert.deepEqual((await ts.store.clients.get('bcl', 'plain'))!.backchannelLogout, { url: null, sessionRequired: true, revokeOfflineTokens: false });

      // Export writes Keycloak's attributes, and an import of the export gives the same settings.
      const exported = await exportRealm(ts.store, 'bcl', { withSecrets: true });
      const clients = exported.clients as Json[];
      const out = clients.find((c) => c.clientId === 'spring')!;
      assert.deepEqual(
        Object.fromEntries(Object.entries(out.attributes as Json).filter(([k]) => k.startsWith('backchannel.'))),
        { 'backchannel.logout.url': 'https://spring.example.com/logout/connect/back-channel/keycloak', 'backchannel.logout.session.required': 'false', 'backchannel.logout.revoke.offline.tokens': 'true' },
      );
      assert.equal(out.frontchannelLogout, false);
      const again = await importKeycloakRealms(ts.store, [{ ...exported, realm: 'bcl2' }], { ifExists: 'fail' }, actor);
      assert.equal(again.realms[0]!.status, 'imported', JSON.stringify(again.realms[0]));
      assert.deepEqual((await ts.store.clients.get('bcl2', 'spring'))!.backchannelLogout, spring.backchannelLogout);
    });

    test('a switch that is not "true" or "false" refuses the client, saying which', async () => {
      const report = await importKeycloakRealms(ts.store, [{ realm: 'bcl3', enabled: true, clients: [client('odd', { 'backchannel.logout.session.required': 'yes' })] }], { ifExists: 'fail' }, actor);
      const r = report.realms[0]!;
      const line = r.lines.find((l) => l.element.startsWith('client odd'));
      assert.equal(line?.outcome, 'skipped', JSON.stringify(r.lines));
      assert.match(line?.reason ?? '', /backchannel\.logout\.session\.required must be "true" or "false"/);
      assert.equal(await ts.store.clients.get('bcl3', 'odd'), undefined);
    });
  });
}
