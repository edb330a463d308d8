import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { dialects } from '../helpers/db.js';
import { basic } from '../helpers/server.js';
import { runAuthorization, tokenRequest } from '../helpers/flow.js';
import { decodeJwt } from 'jose';
import { startAdminServer, type AdminTestServer } from './helpers.js';

// With a long cache time (REALMGATE_CACHE_TTL_MS), a change made through this server's admin API still
// applies to the very next login: the API clears the server's own cache. (Other processes see it within
// the cache time; that is the documented bound.)
for (const dialect of dialects()) {
  describe(`admin API changes within the cache window (${dialect})`, () => {
    let ts: AdminTestServer;
    before(async () => {
      ts = await startAdminServer({ dialect, config: { cacheTtlMs: 3_600_000 } });
    });
    after(() => ts.close());

    test('whitelisting a redirect URI, disabling a client and rotating its secret apply at once', async () => {
      const extra = 'https://app.example.com/second';
      // Warm the caches first.
      assert.ok((await runAuthorization(ts)).code);
      await assert.rejects(runAuthorization(ts, { query: { redirect_uri: extra } }));
      await ts.kc.clients.update({ realm: 'test', id: 'web-app' }, { redirectUris: [ts.client.redirectUri, extra] });
      const r = await runAuthorization(ts, { query: { redirect_uri: extra } });
      assert.ok(r.code);
      const { value } = await ts.kc.clients.generateNewClientSecret({ realm: 'test', id: 'web-app' });
      const old = await tokenRequest(ts, { grant_type: 'authorization_code', code: r.code!, redirect_uri: extra }, { authorization: basic(ts.client.id, ts.client.secret) });
      assert.equal(old.statusCode, 401);
      const r2 = await runAuthorization(ts);
      const fresh = await tokenRequest(ts, { grant_type: 'authorization_code', code: r2.code!, redirect_uri: ts.client.redirectUri }, { authorization: basic(ts.client.id, value!) });
      assert.equal(fresh.statusCode, 200);
      await ts.kc.clients.update({ realm: 'test', id: 'web-app' }, { enabled: false });
      await assert.rejects(runAuthorization(ts));
    });

    test('a protocol mapper added, changed or removed through the API applies to the next token', async () => {
      const token = async (): Promise<Record<string, unknown>> => {
        const r = await runAuthorization(ts);
        const res = await tokenRequest(ts, { grant_type: 'authorization_code', code: r.code!, redirect_uri: ts.client.redirectUri }, { authorization: basic(ts.client.id, ts.client.secret) });
        assert.equal(res.statusCode, 200, res.body);
        return decodeJwt(res.json().access_token);
      };
      await ts.kc.clients.update({ realm: 'test', id: 'web-app' }, { enabled: true });
      ts.client.secret = (await ts.kc.clients.generateNewClientSecret({ realm: 'test', id: 'web-app' })).value!;
      // Warm the cache: the realm has no mappers.
      assert.equal((await token()).plan, undefined);
      const config = { 'claim.name': 'plan', 'claim.value': 'gold', 'access.token.claim': 'true' };
      await ts.kc.clients.addProtocolMapper({ realm: 'test', id: 'web-app' }, { name: 'plan', protocol: 'openid-connect', protocolMapper: 'oidc-hardcoded-claim-mapper', config });
      assert.equal((await token()).plan, 'gold');
      const [m] = await ts.kc.clients.listProtocolMappers({ realm: 'test', id: 'web-app' });
      await ts.kc.clients.updateProtocolMapper({ realm: 'test', id: 'web-app', mapperId: m!.id! }, { ...m!, config: { ...config, 'claim.value': 'silver' } });
      assert.equal((await token()).plan, 'silver');
      await ts.kc.clients.delProtocolMapper({ realm: 'test', id: 'web-app', mapperId: m!.id! });
      assert.equal((await token()).plan, undefined);
    });
  });
}
