import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { dialects } from '../helpers/db.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { Harness, assertTokenError, redirectedError } from './helpers.js';

for (const dialect of dialects()) {
  describe(`RFC 6749 3.3 access token scope (${dialect})`, () => {
    let ts: TestServer;
    let h: Harness;
    before(async () => {
      ts = await startTestServer({ dialect });
      h = new Harness(ts);
    });
    after(() => ts.close());

    const authError = async (scope: string | undefined): Promise<string | null> => redirectedError(await h.authorize({ scope }), ts.client.redirectUri).get('error');

    test('RFC 6749 3.3: scope values are case-sensitive; unknown ones are invalid_scope', async () => {
      for (const scope of ['OPENID', 'openid Core_Data', 'openid admin', 'openid core_data_']) assert.equal(await authError(scope), 'invalid_scope', scope);
    });

    test('RFC 6749 3.3: scope-token characters are %x21 / %x23-5B / %x5D-7E', async () => {
      for (const scope of ['openid "core_data"', 'openid core\\data', 'openid\tcore_data', 'openid core_dàta', 'openid\u0000']) assert.equal(await authError(scope), 'invalid_scope', scope);
    });

    test('RFC 6749 3.3: an omitted scope is refused with invalid_scope (this server has no default scope)', async () => {
      assert.equal(await authError(undefined), 'invalid_scope');
      assert.equal(await authError(' '), 'invalid_scope');
    });

    test('RFC 6749 3.3: the order of scope values does not matter', async () => {
      const t = await h.tokens({ scope: 'offline_access core_data openid' });
      assert.deepEqual(t.scope.split(' ').sort(), ['core_data', 'offline_access', 'openid']);
    });

    test('RFC 6749 3.3 / 6: a scope with no scope-token is malformed at refresh too (invalid_scope)', async () => {
      const t = await h.tokens();
      assertTokenError(await h.refresh(t.refresh_token, { scope: ' ' }), 400, 'invalid_scope');
      assertTokenError(await h.refresh(t.refresh_token, { scope: '   ' }), 400, 'invalid_scope');
    });
  });
}
