import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { dialects } from '../helpers/db.js';
import { startTestServer, REALM, type TestServer } from '../helpers/server.js';
import { runAuthorization } from '../helpers/flow.js';
import { changeClient, createClient } from '../../src/admin/operations.js';
import { runProgram, type ProgramResult } from '../helpers/program.js';

// Debian's Authlib (python3-authlib) as an independent client: the seed's path (E2 code exchange, E3
// refresh with HTTP Basic) with its defaults, and the access token verified by Authlib's own JOSE
// against our JWKS. Authlib sends Basic credentials raw (not form-urlencoded, RFC 7617), so a secret
// with '+', '%' and ':' exercises that reading too.
const PYTHON = '/usr/bin/python3';

const SCRIPT = `
import json, sys
from authlib.integrations.requests_client import OAuth2Session
from authlib.jose import JsonWebKey, jwt
import requests
a = json.loads(sys.argv[1])
s = OAuth2Session(a['client_id'], a['secret'], redirect_uri=a['redirect_uri'])
tok = s.fetch_token(a['token_url'], code=a['code'], grant_type='authorization_code')
again = s.refresh_token(a['token_url'], refresh_token=tok['refresh_token'])
keys = JsonWebKey.import_key_set(requests.get(a['jwks_url']).json())
claims = jwt.decode(again['access_token'], keys)
claims.validate()
print(json.dumps({'first': tok, 'second': again, 'claims': dict(claims)}))
`;

// RFC 8693 2.1 with Authlib's generic fetch_token (client_secret_basic, its default).
const EXCHANGE = `
import json, sys
from authlib.integrations.requests_client import OAuth2Session
a = json.loads(sys.argv[1])
s = OAuth2Session(a['client_id'], a['secret'])
extra = {'scope': a['scope']} if 'scope' in a else {}
tok = s.fetch_token(a['token_url'], grant_type='urn:ietf:params:oauth:grant-type:token-exchange', subject_token=a['subject_token'], subject_token_type='urn:ietf:params:oauth:token-type:access_token', **extra)
print(json.dumps(dict(tok)))
`;

function authlib(args: Record<string, string>): Promise<ProgramResult> {
  return runProgram(PYTHON, ['-c', SCRIPT, JSON.stringify(args)]);
}

const available = fs.existsSync(PYTHON) && (await authlib({}).then((r) => !/No module named/.test(r.err)));

for (const dialect of dialects()) {
  describe(`Authlib as the client (${dialect})`, { skip: available ? false : 'python3-authlib is not installed (.ci/run installs it)' }, () => {
    let ts: TestServer;
    before(async () => {
      ts = await startTestServer({ dialect, listen: true });
    });
    after(() => ts.close());

    async function run(clientId: string, secret: string): Promise<{ first: Record<string, unknown>; second: Record<string, unknown>; claims: Record<string, unknown> }> {
      const r = await runAuthorization(ts, { query: { client_id: clientId, scope: 'core_data exports offline_access' } });
      const base = `${ts.baseUrl}/auth/realms/${REALM}/protocol/openid-connect`;
      const res = await authlib({ client_id: clientId, secret, redirect_uri: ts.client.redirectUri, code: r.code!, token_url: `${base}/token`, jwks_url: `${base}/certs` });
      assert.equal(res.code, 0, res.err);
      return JSON.parse(res.out) as { first: Record<string, unknown>; second: Record<string, unknown>; claims: Record<string, unknown> };
    }

    test('code exchange and refresh with its defaults; the access token verifies with its JOSE', async () => {
      const { first, second, claims } = await run(ts.client.id, ts.client.secret);
      for (const t of [first, second]) {
        assert.equal(t.token_type, 'Bearer');
        assert.equal(typeof t.expires_in, 'number');
        assert.equal(typeof t.refresh_expires_in, 'number');
        assert.equal(typeof t['not-before-policy'], 'number');
        assert.match(String(t.scope), /core_data/);
      }
      assert.notEqual(first.refresh_token, second.refresh_token, 'every refresh returns a new refresh token');
      assert.equal(claims.iss, `${ts.baseUrl}/auth/realms/${REALM}`);
      assert.equal(claims.azp, ts.client.id);
    });

    test('a secret with +, % and : (sent raw by Authlib) authenticates', async () => {
      const secret = 'p+q%41:r-s3cret-value';
      await createClient(ts.store, { realmId: REALM, clientId: 'authlib-app', redirectUris: [ts.client.redirectUri], secret });
      const { second } = await run('authlib-app', secret);
      assert.equal(typeof second.access_token, 'string');
    });

    test('RFC 8693 token exchange through fetch_token with the grant type and its parameters', async () => {
      const secret = 'exchanger-secret-0123456789abcdef';
      await createClient(ts.store, { realmId: REALM, clientId: 'authlib-exchanger', redirectUris: [], standardFlowEnabled: false, standardTokenExchange: true, secret });
      const user = await run(ts.client.id, ts.client.secret);
      const base = `${ts.baseUrl}/auth/realms/${REALM}/protocol/openid-connect`;
      // The user's token was issued to web-app: web-app may exchange it once enabled (Keycloak: the token's azp).
      await changeClient(ts.store, { realmId: REALM, clientId: ts.client.id, changes: { standardTokenExchange: true } });
      const ok = await runProgram(PYTHON, ['-c', EXCHANGE, JSON.stringify({ client_id: ts.client.id, secret: ts.client.secret, token_url: `${base}/token`, subject_token: user.second.access_token, scope: 'core_data' })]);
      assert.equal(ok.code, 0, ok.err);
      const got = JSON.parse(ok.out) as Record<string, unknown>;
      assert.equal(got.issued_token_type, 'urn:ietf:params:oauth:token-type:access_token');
      assert.equal(got.token_type, 'Bearer');
      assert.equal(got.scope, 'core_data');
      // A client the token was not meant for: Authlib raises the RFC 6749 error.
      const denied = await runProgram(PYTHON, ['-c', EXCHANGE, JSON.stringify({ client_id: 'authlib-exchanger', secret, token_url: `${base}/token`, subject_token: user.second.access_token })]);
      assert.notEqual(denied.code, 0);
      assert.match(denied.err, /access_denied/);
    });
  });
}
