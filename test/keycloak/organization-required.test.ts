import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { decodeJwt } from 'jose';
import { dialects } from '../helpers/db.js';
import { startTestServer, basic, REALM, type TestServer } from '../helpers/server.js';
import { runAuthorization, tokenRequest } from '../helpers/flow.js';
import { createUser } from '../../src/admin/operations.js';

for (const dialect of dialects()) {
  describe(`organization required, per realm (${dialect})`, () => {
    let ts: TestServer;
    before(async () => {
      ts = await startTestServer({ dialect });
      await createUser(ts.store, { realmId: REALM, username: 'bob', password: 'bob password 1' });
    });
    after(() => ts.close());

    async function accessClaims(code: string): Promise<Record<string, unknown>> {
      const res = await tokenRequest(ts, { grant_type: 'authorization_code', code, redirect_uri: ts.client.redirectUri }, { authorization: basic(ts.client.id, ts.client.secret) });
      assert.equal(res.statusCode, 200, res.body);
      return decodeJwt((res.json() as { access_token: string }).access_token);
    }

    test('on (the default for realms Realmgate creates): a user of no organization gets access_denied', async () => {
      assert.equal((await ts.store.realms.get(REALM))!.organizationRequired, true);
      const r = await runAuthorization(ts, { username: 'bob', password: 'bob password 1' });
      assert.deepEqual(r.pages, ['login', 'no-organization']);
      assert.equal(r.params.get('error'), 'access_denied');
    });

    test('off: a user of no organization signs in without the claim; a member still chooses one', async () => {
      await ts.store.realms.update(REALM, { organizationRequired: false });
      const bob = await runAuthorization(ts, { username: 'bob', password: 'bob password 1' });
      assert.deepEqual(bob.pages, ['login', 'consent']);
      const claims = await accessClaims(bob.code!);
      assert.equal(claims.organization, undefined);
      assert.equal(claims.sub, (await ts.store.users.findByUsername(REALM, 'bob'))!.id);
      // The consent is remembered: the next request asks nothing (prompt=none succeeds).
      const again = await runAuthorization(ts, { jar: bob.jar, query: { prompt: 'none' } });
      assert.ok(again.code, again.location.toString());
      assert.equal((await accessClaims(again.code)).organization, undefined);
      const alice = await runAuthorization(ts);
      assert.deepEqual(alice.pages, ['login', 'consent', 'organization']);
      assert.deepEqual((await accessClaims(alice.code!)).organization, ['acme']);
    });
  });
}
