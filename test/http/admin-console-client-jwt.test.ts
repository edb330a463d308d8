import { test } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { SignJWT, exportJWK, generateKeyPair } from 'jose';
import { dialects } from '../helpers/db.js';
import { REALM, realmPath } from '../helpers/server.js';
import { inject, tokenRequest } from '../helpers/flow.js';
import { ADMIN, CONSOLE, VIEWER, csrfOf, setup, signIn } from '../helpers/console.js';
import { createClient } from '../../src/admin/operations.js';

const TYPE = 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer';

// The console client page's Credentials form: the authenticator select and a signed-JWT client's keys.
for (const dialect of dialects()) {
  test(`console: a client switched to a signed JWT with its keys, used, and back to a secret (${dialect})`, async () => {
    const ts = await setup(dialect);
    try {
      await createClient(ts.store, { realmId: REALM, clientId: 'svc', redirectUris: [], standardFlowEnabled: false, serviceAccountsEnabled: true, secret: 'svc-secret-of-enough-length' });
      const jar = await signIn(ts, ADMIN);
      const url = `${CONSOLE}/realms/${REALM}/clients/svc`;
      const csrf = await csrfOf(ts, jar, url);
      const page = await inject(ts.app, jar, 'GET', url);
      assert.match(page.body, /<h2>Credentials<\/h2>/);
      assert.match(page.body, /<option value="client-secret" selected>Client ID and secret<\/option>/);

      // A bad JWKS is refused with the reason, nothing changed.
      let res = await inject(ts.app, jar, 'POST', `${url}/credentials`, { csrf, authenticator: 'client-jwt', useJwksString: 'on', jwksString: '{"keys":[{"kty":"oct","k":"AA"}]}' });
      assert.equal(res.statusCode, 400);
      assert.match(res.body, /public keys only/);
      assert.deepEqual((await ts.store.clients.get(REALM, 'svc'))!.authMethods, ['client_secret_basic', 'client_secret_post']);

      const { privateKey, publicKey } = await generateKeyPair('EdDSA');
      // Markup in a field comes back escaped.
      const jwks = JSON.stringify({ keys: [{ ...(await exportJWK(publicKey)), kid: '<b>k</b>' }] });
      res = await inject(ts.app, jar, 'POST', `${url}/credentials`, { csrf, authenticator: 'client-jwt', useJwksString: 'on', jwksString: jwks, jwksUrl: '', certificate: '', signingAlg: 'EdDSA' });
      assert.equal(res.statusCode, 303, res.body);
      const c = (await ts.store.clients.get(REALM, 'svc'))!;
      assert.deepEqual(c.authMethods, ['private_key_jwt']);
      assert.equal(c.jwtKeys?.signingAlg, 'EdDSA');
      const after = await inject(ts.app, jar, 'GET', url);
      assert.match(after.body, /<option value="client-jwt" selected>Signed JWT \(private_key_jwt\)<\/option>/);
      assert.match(after.body, /<option value="EdDSA" selected>/);
      assert.ok(after.body.includes('&lt;b&gt;k&lt;/b&gt;') && !after.body.includes('<b>k</b>'), 'escaped');

      const t = Math.floor(ts.clock.nowMs() / 1000);
      const jwt = await new SignJWT({ jti: crypto.randomUUID() }).setProtectedHeader({ alg: 'EdDSA', kid: '<b>k</b>' }).setIssuer('svc').setSubject('svc').setAudience(`${ts.config.authUrl}${realmPath('')}`).setIssuedAt(t).setExpirationTime(t + 60).sign(privateKey);
      const tok = await tokenRequest(ts, { grant_type: 'client_credentials', client_assertion_type: TYPE, client_assertion: jwt });
      assert.equal(tok.statusCode, 200, tok.body);

      // Back to a secret: the client keeps the one it had (no new one is shown).
      res = await inject(ts.app, jar, 'POST', `${url}/credentials`, { csrf, authenticator: 'client-secret', useJwksString: 'on', jwksString: jwks, signingAlg: '' });
      assert.equal(res.statusCode, 303, res.body);
      assert.deepEqual((await ts.store.clients.get(REALM, 'svc'))!.authMethods, ['client_secret_basic', 'client_secret_post']);

      // A viewer sees the settings, no form; the form needs the CSRF token.
      const viewer = await signIn(ts, VIEWER);
      const seen = await inject(ts.app, viewer, 'GET', url);
      assert.ok(seen.statusCode === 403 || !seen.body.includes('name="authenticator"'));
      res = await inject(ts.app, jar, 'POST', `${url}/credentials`, { csrf: 'wrong', authenticator: 'client-jwt' });
      assert.notEqual(res.statusCode, 303);
      assert.deepEqual((await ts.store.clients.get(REALM, 'svc'))!.authMethods, ['client_secret_basic', 'client_secret_post']);
    } finally {
      await ts.close();
    }
  });
}
