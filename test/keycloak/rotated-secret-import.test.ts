import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { dialects } from '../helpers/db.js';
import { startTestServer, basic, type TestServer } from '../helpers/server.js';
import { importKeycloakRealms } from '../../src/admin/operations/realm-import.js';
import { cliActor } from '../../src/admin/operations/common.js';

const actor = { ...cliActor(), via: 'import' as const };

// Keycloak's rotated client secret (its client.secret.rotated attributes, the previous secret in plain
// text) moves as the client's previous secret while it is still valid: applications still on it keep
// working after the move.
for (const dialect of dialects()) {
  describe(`Keycloak import: a client's rotated secret (${dialect})`, () => {
    let ts: TestServer;
    before(async () => {
      ts = await startTestServer({ dialect });
    });
    after(() => ts.close());

    test('a rotated secret still valid is kept until its time (at most 30 days); an expired one is left out, with a note', async () => {
      const now = Math.floor(ts.clock.nowMs() / 1000);
      const client = (clientId: string, rotated: string, expiresAt: string | number) => ({
        clientId,
        secret: `${clientId} current secret`,
        serviceAccountsEnabled: true,
        standardFlowEnabled: false,
        attributes: { 'client.secret.rotated': rotated, 'client.secret.rotated.expiration.time': expiresAt, 'client.secret.rotated.creation.time': String(now - 60) },
      });
      const rep = {
        realm: 'rotations',
        enabled: true,
        clients: [client('still', 'still previous secret', String(now + 3600)), client('expired', 'expired previous secret', now - 1), client('far', 'far previous secret', now + 90 * 86_400)],
      };
      const r = (await importKeycloakRealms(ts.store, [rep], { ifExists: 'fail' }, actor)).realms[0]!;
      assert.equal(r.status, 'imported', JSON.stringify(r));
      const line = (id: string): string => r.lines.find((x) => x.element === `client ${id}`)?.reason ?? '';
      assert.match(line('still'), /its rotated secret is still accepted until/);
      assert.match(line('expired'), /rotated secret .* has expired/);

      const status = async (clientId: string, secret: string): Promise<number> => {
        const res = await ts.app.inject({ method: 'POST', url: '/auth/realms/rotations/protocol/openid-connect/token', headers: { authorization: basic(clientId, secret), 'content-type': 'application/x-www-form-urlencoded' }, payload: 'grant_type=client_credentials' });
        return res.statusCode;
      };
      assert.equal(await status('still', 'still current secret'), 200);
      assert.equal(await status('still', 'still previous secret'), 200);
      assert.equal(await status('expired', 'expired current secret'), 200);
      assert.equal(await status('expired', 'expired previous secret'), 401);
      assert.equal((await ts.store.clients.get('rotations', 'still'))!.rotatedSecret!.expiresAt, now + 3600);
      const far = (await ts.store.clients.get('rotations', 'far'))!.rotatedSecret!.expiresAt;
      // The import caps it by the system's clock (as every admin operation), not the test server's.
      assert.ok(far >= now + 30 * 86_400 && far <= Math.floor(Date.now() / 1000) + 30 * 86_400, `${far}: 30 days from the import`);
      assert.equal(await status('far', 'far previous secret'), 200);
      // Past its time, refused.
      ts.clock.advance(3601);
      assert.equal(await status('still', 'still previous secret'), 401);
      assert.equal(await status('still', 'still current secret'), 200);
    });
  });
}
