import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import * as oidc from 'openid-client';
import { dialects } from '../helpers/db.js';
import { startTestServer, basic, REALM, type TestServer } from '../helpers/server.js';
import { runAuthorization, tokenRequest } from '../helpers/flow.js';
import { createClient, updateClient } from '../../src/admin/operations.js';

/** Runs the real curl binary; returns the HTTP status and the parsed JSON body. */
function curl(args: string[]): Promise<{ status: number; body: Record<string, unknown> }> {
  return new Promise((resolve, reject) => {
    const p = spawn('curl', ['-s', '-w', '\n%{http_code}', ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    p.stdout.on('data', (d: Buffer) => (out += d.toString('utf8')));
    p.on('error', reject);
    p.on('close', (code) => {
      if (code !== 0) return reject(new Error(`curl exited with ${code}`));
      const nl = out.lastIndexOf('\n');
      resolve({ status: Number(out.slice(nl + 1)), body: JSON.parse(out.slice(0, nl)) as Record<string, unknown> });
    });
  });
}

// RFC 6749 2.3.1 and RFC 7617: clients authenticate as they really do. openid-client's default is
// client_secret_post; curl -u sends Basic credentials raw (not form-urlencoded).
for (const dialect of dialects()) {
  describe(`client authentication as clients send it (${dialect})`, () => {
    let ts: TestServer;
    let tokenUrl: string;
    let introspectUrl: string;
    before(async () => {
      ts = await startTestServer({ dialect, listen: true });
      tokenUrl = `${ts.baseUrl}/auth/realms/${REALM}/protocol/openid-connect/token`;
      introspectUrl = `${tokenUrl}/introspect`;
    });
    after(() => ts.close());

    async function refreshTokenFor(clientId: string, authorization: string): Promise<string> {
      const r = await runAuthorization(ts, { query: { client_id: clientId, scope: 'core_data offline_access' } });
      const res = await tokenRequest(ts, { grant_type: 'authorization_code', code: r.code!, redirect_uri: ts.client.redirectUri }, { authorization });
      assert.equal(res.statusCode, 200, res.body);
      return res.json().refresh_token;
    }

    async function relyingParty(clientId: string, secret: string): Promise<oidc.Configuration> {
      // A client secret as the metadata argument: openid-client v6 then uses client_secret_post.
      return oidc.discovery(new URL(`${ts.baseUrl}/auth/realms/${REALM}`), clientId, secret, undefined, { execute: [oidc.allowInsecureRequests] });
    }

    test('discovery lists the methods the token endpoint accepts', async () => {
      const doc = (await (await fetch(`${ts.baseUrl}/auth/realms/${REALM}/.well-known/openid-configuration`)).json()) as Record<string, string[]>;
      assert.deepEqual([...doc.token_endpoint_auth_methods_supported!].sort(), ['client_secret_basic', 'client_secret_post', 'none', 'private_key_jwt']);
      assert.deepEqual([...doc.introspection_endpoint_auth_methods_supported!].sort(), ['client_secret_basic', 'client_secret_post', 'private_key_jwt']);
      assert.deepEqual([...doc.revocation_endpoint_auth_methods_supported!].sort(), ['client_secret_basic', 'client_secret_post', 'none', 'private_key_jwt']);
      // Asymmetric algorithms only: client_secret_jwt (HMAC) cannot be verified against a hashed secret.
      for (const key of ['token_endpoint_auth_signing_alg_values_supported', 'introspection_endpoint_auth_signing_alg_values_supported', 'revocation_endpoint_auth_signing_alg_values_supported']) {
        assert.ok(doc[key]!.includes('RS256') && doc[key]!.includes('PS256') && doc[key]!.includes('ES256') && doc[key]!.includes('EdDSA'), key);
        assert.ok(!doc[key]!.some((a) => a === 'none' || a.startsWith('HS')), key);
      }
    });

    test("openid-client v6's default (client_secret_post) works for a client created the usual way", async () => {
      const rt = await refreshTokenFor(ts.client.id, basic(ts.client.id, ts.client.secret));
      const config = await relyingParty(ts.client.id, ts.client.secret);
      const tokens = await oidc.refreshTokenGrant(config, rt);
      assert.equal(typeof tokens.access_token, 'string');
      assert.equal(typeof tokens.refresh_token, 'string');
      const info = await oidc.tokenIntrospection(config, tokens.access_token);
      assert.equal(info.active, true);
      // And HTTP Basic still works for the same client.
      const res = await tokenRequest(ts, { grant_type: 'refresh_token', refresh_token: tokens.refresh_token! }, { authorization: basic(ts.client.id, ts.client.secret) });
      assert.equal(res.statusCode, 200, res.body);
    });

    const SECRETS = ['p+q%41:r s', 'plus+only', '%zz%:colon', 'a:b:c%2B+'];

    test('curl -u with raw secrets containing +, % and : (RFC 7617), and the form-encoded reading of the same (RFC 6749 2.3.1)', async () => {
      for (const [i, secret] of SECRETS.entries()) {
        const clientId = `curl-app-${i}`;
        await createClient(ts.store, { realmId: REALM, clientId, redirectUris: [ts.client.redirectUri], secret });
        // Introspection answers 200 once the client is authenticated, 401 otherwise.
        const intro = await curl(['-u', `${clientId}:${secret}`, '-d', 'token=not-a-token', introspectUrl]);
        assert.equal(intro.status, 200, `${secret}: ${JSON.stringify(intro.body)}`);
        assert.deepEqual(intro.body, { active: false });
        // A whole refresh with curl's raw Basic.
        const rt = await refreshTokenFor(clientId, basic(clientId, secret));
        const r = await curl(['-u', `${clientId}:${secret}`, '--data-urlencode', 'grant_type=refresh_token', '--data-urlencode', `refresh_token=${rt}`, tokenUrl]);
        assert.equal(r.status, 200, `${secret}: ${JSON.stringify(r.body)}`);
        assert.equal(typeof r.body.access_token, 'string');
        // A wrong secret still fails, both ways.
        const wrong = await curl(['-u', `${clientId}:${secret}x`, '-d', 'token=x', introspectUrl]);
        assert.equal(wrong.status, 401);
        assert.equal(wrong.body.error, 'invalid_client');
        const wrongForm = await ts.app.inject({
          method: 'POST',
          url: `/auth/realms/${REALM}/protocol/openid-connect/token/introspect`,
          headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basic(clientId, `${secret}x`) },
          payload: 'token=x',
        });
        assert.equal(wrongForm.statusCode, 401);
      }
    });

    test('a client restricted to one method refuses the other', async () => {
      const secret = 'restricted secret+1';
      await createClient(ts.store, { realmId: REALM, clientId: 'only-basic', redirectUris: [ts.client.redirectUri], secret, authMethods: ['client_secret_basic'] });
      await createClient(ts.store, { realmId: REALM, clientId: 'only-post', redirectUris: [ts.client.redirectUri], secret, authMethods: ['client_secret_post'] });
      const post = (clientId: string) => curl(['--data-urlencode', `client_id=${clientId}`, '--data-urlencode', `client_secret=${secret}`, '-d', 'token=x', introspectUrl]);
      const viaBasic = (clientId: string) => curl(['-u', `${clientId}:${secret}`, '-d', 'token=x', introspectUrl]);
      assert.equal((await viaBasic('only-basic')).status, 200);
      const refused = await post('only-basic');
      assert.equal(refused.status, 401);
      assert.equal(refused.body.error, 'invalid_client');
      assert.equal((await post('only-post')).status, 200);
      assert.equal((await viaBasic('only-post')).status, 401);
      // openid-client's default is refused once the client is restricted to Basic, and works again after.
      const rt = await refreshTokenFor('only-basic', basic('only-basic', secret));
      const rp = await relyingParty('only-basic', secret);
      await assert.rejects(oidc.refreshTokenGrant(rp, rt), (err: unknown) => (err as { status?: number }).status === 401);
      await updateClient(ts.store, { realmId: REALM, clientId: 'only-basic', authMethods: ['client_secret_basic', 'client_secret_post'] });
      const tokens = await oidc.refreshTokenGrant(rp, rt);
      assert.equal(typeof tokens.access_token, 'string');
    });
  });
}
