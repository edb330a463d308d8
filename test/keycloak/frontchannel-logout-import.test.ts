import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { dialects } from '../helpers/db.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { importKeycloakRealms } from '../../src/admin/operations/realm-import.js';
import { exportRealm } from '../../src/admin/keycloak/export.js';
import { cliActor } from '../../src/admin/operations/common.js';

const actor = { ...cliActor(), via: 'import' as const };
type Json = Record<string, unknown>;

// Keycloak's frontchannelLogout switch and frontchannel.logout.* client attributes move with a realm
// (kept, reported), and back out.
for (const dialect of dialects()) {
  describe(`Keycloak import and export: front-channel logout (${dialect})`, () => {
    let ts: TestServer;
    before(async () => {
      ts = await startTestServer({ dialect });
    });
    after(() => ts.close());

    const client = (clientId: string, frontchannelLogout: unknown, attributes: Json, extra: Json = {}): Json => ({
      clientId,
      protocol: 'openid-connect',
      publicClient: false,
      secret: 'a-generated-looking-secret-of-32-chars-0123',
      redirectUris: ['https://app.example.com/cb'],
      ...(frontchannelLogout !== undefined ? { frontchannelLogout } : {}),
      attributes,
      ...extra,
    });

    test('the switch and attributes are kept and reported; a relative URL is resolved against rootUrl; a bad one is left out, the client kept; export writes them back', async () => {
      const realm = {
        realm: 'fcl',
        enabled: true,
        clients: [
          client('spa', true, { 'frontchannel.logout.url': 'https://spa.example.com/logout?x=1', 'frontchannel.logout.session.required': 'false' }),
          client('apache', true, { 'frontchannel.logout.url': '/protected/redirect_uri?logout=https%3A%2F%2Fapache.example.com%2F' }, { rootUrl: 'https://apache.example.com/' }),
          client('broken', true, { 'frontchannel.logout.url': 'https://broken.example.com/logout#frag' }),
          client('script', true, { 'frontchannel.logout.url': 'javascript:alert(1)' }),
          // Keycloak's admin console turns the switch on for new clients, often with no URL: kept, nothing framed.
          client('plain', true, {}),
          client('old', undefined, { 'frontchannel.logout.url': 'https://old.example.com/logout' }),
        ],
      };
      const report = await importKeycloakRealms(ts.store, [realm], { ifExists: 'fail' }, actor);
      const r = report.realms[0]!;
      assert.equal(r.status, 'imported', JSON.stringify(r));
      const text = JSON.stringify(r.lines);
      const spa = (await ts.store.clients.get('fcl', 'spa'))!;
      assert.deepEqual(spa.frontchannelLogout, { enabled: true, url: 'https://spa.example.com/logout?x=1', sessionRequired: false });
      assert.match(text, /front-channel logout to https:\/\/spa\.example\.com\/logout\?x=1 \(without iss and sid\)/);
      assert.deepEqual((await ts.store.clients.get('fcl', 'apache'))!.frontchannelLogout, {
        enabled: true,
        url: 'https://apache.example.com/protected/redirect_uri?logout=https%3A%2F%2Fapache.example.com%2F',
        sessionRequired: true,
      });
      assert.equal((await ts.store.clients.get('fcl', 'broken'))!.frontchannelLogout.url, null);
      const line = r.lines.find((l) => l.element === 'client broken frontchannel.logout.url https://broken.example.com/logout#frag');
      assert.equal(line?.outcome, 'skipped', text);
      assert.match(line?.reason ?? '', /fragment/);
      assert.equal((await ts.store.clients.get('fcl', 'script'))!.frontchannelLogout.url, null);
      assert.match(r.lines.find((l) => l.element.startsWith('client script frontchannel.logout.url'))?.reason ?? '', /http or https/);
      assert.deepEqual((await ts.store.clients.get('fcl', 'plain'))!.frontchannelLogout, { enabled: true, url: null, sessionRequired: true });
      // No switch in the file (older Keycloak exports): the URL is kept, front-channel logout stays off.
      assert.deepEqual((await ts.store.clients.get('fcl', 'old'))!.frontchannelLogout, { enabled: false, url: 'https://old.example.com/logout', sessionRequired: true });

      const exported = await exportRealm(ts.store, 'fcl', { withSecrets: true });
      const out = (exported.clients as Json[]).find((c) => c.clientId === 'spa')!;
      assert.equal(out.frontchannelLogout, true);
      assert.deepEqual(Object.fromEntries(Object.entries(out.attributes as Json).filter(([k]) => k.startsWith('frontchannel.'))), {
        'frontchannel.logout.url': 'https://spa.example.com/logout?x=1',
        'frontchannel.logout.session.required': 'false',
      });
      assert.equal((exported.clients as Json[]).find((c) => c.clientId === 'old')!.frontchannelLogout, false);
      const again = await importKeycloakRealms(ts.store, [{ ...exported, realm: 'fcl2' }], { ifExists: 'fail' }, actor);
      assert.equal(again.realms[0]!.status, 'imported', JSON.stringify(again.realms[0]));
      for (const id of ['spa', 'apache', 'plain', 'old']) {
        assert.deepEqual((await ts.store.clients.get('fcl2', id))!.frontchannelLogout, (await ts.store.clients.get('fcl', id))!.frontchannelLogout, id);
      }
    });

    test('a switch that is not a boolean, or a session required that is not "true" or "false", refuses the client, saying which', async () => {
      const report = await importKeycloakRealms(
        ts.store,
        [{ realm: 'fcl3', enabled: true, clients: [client('odd', 'yes', {}), client('odder', true, { 'frontchannel.logout.session.required': 'maybe' })] }],
        { ifExists: 'fail' },
        actor,
      );
      const r = report.realms[0]!;
      const odd = r.lines.find((l) => l.element.startsWith('client odd'));
      assert.equal(odd?.outcome, 'skipped', JSON.stringify(r.lines));
      assert.match(odd?.reason ?? '', /frontchannelLogout must be true or false/);
      const odder = r.lines.find((l) => l.element.startsWith('client odder'));
      assert.equal(odder?.outcome, 'skipped', JSON.stringify(r.lines));
      assert.match(odder?.reason ?? '', /frontchannel\.logout\.session\.required must be "true" or "false"/);
      assert.equal(await ts.store.clients.get('fcl3', 'odd'), undefined);
    });
  });
}
