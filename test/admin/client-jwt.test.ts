import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { SignJWT, exportJWK, generateKeyPair } from 'jose';
import { dialects } from '../helpers/db.js';
import { startAdminServer, errorOf, statusOf, type AdminTestServer } from './helpers.js';

const TYPE = 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer';

// Keycloak's "Signed JWT" client (clientAuthenticatorType client-jwt) through keycloak-admin-client:
// created with its key attributes, read back as Keycloak shows it, used at the token endpoint, switched.
for (const dialect of dialects()) {
  describe(`admin API: client-jwt clients (${dialect})`, () => {
    let ts: AdminTestServer;
    before(async () => {
      ts = await startAdminServer({ dialect });
    });
    after(() => ts.close());

    async function clientCredentials(clientId: string, key: CryptoKey | crypto.KeyObject, alg = 'ES256'): Promise<number> {
      const t = Math.floor(ts.clock.nowMs() / 1000);
      const jwt = await new SignJWT({ jti: crypto.randomUUID() }).setProtectedHeader({ alg }).setIssuer(clientId).setSubject(clientId).setAudience(`${ts.baseUrl}/auth/realms/test`).setIssuedAt(t).setExpirationTime(t + 60).sign(key);
      const r = await fetch(`${ts.baseUrl}/auth/realms/test/protocol/openid-connect/token`, { method: 'POST', body: new URLSearchParams({ grant_type: 'client_credentials', client_assertion_type: TYPE, client_assertion: jwt }) });
      await r.body?.cancel();
      return r.status;
    }

    test('create with the JWKS attributes, read back, use, update, switch to a secret and back', async () => {
      const { privateKey, publicKey } = await generateKeyPair('ES256');
      const jwks = JSON.stringify({ keys: [await exportJWK(publicKey)] });
      await ts.kc.clients.create({
        realm: 'test',
        clientId: 'signed',
        clientAuthenticatorType: 'client-jwt',
        // Keycloak representations carry a secret even for client-jwt: ignored.
        secret: 'ignored-secret-value-0123456789ab',
        serviceAccountsEnabled: true,
        standardFlowEnabled: false,
        attributes: { 'use.jwks.url': 'false', 'use.jwks.string': 'true', 'jwks.string': jwks, 'token.endpoint.auth.signing.alg': 'ES256' },
      });
      const rep = (await ts.kc.clients.findOne({ realm: 'test', id: 'signed' }))!;
      assert.equal(rep.clientAuthenticatorType, 'client-jwt');
      assert.equal(rep.attributes?.['use.jwks.string'], 'true');
      assert.equal(rep.attributes?.['jwks.string'], jwks);
      assert.equal(rep.attributes?.['token.endpoint.auth.signing.alg'], 'ES256');
      const stored = (await ts.store.clients.get('test', 'signed'))!;
      assert.deepEqual(stored.authMethods, ['private_key_jwt']);
      assert.equal(stored.secretHash, null, 'no secret');
      assert.equal(await clientCredentials('signed', privateKey), 200);
      // A GET then PUT changes nothing.
      await ts.kc.clients.update({ realm: 'test', id: 'signed' }, rep);
      assert.deepEqual(await ts.kc.clients.findOne({ realm: 'test', id: 'signed' }), rep);

      // Keys switched to a JWKS URL (Keycloak's order: use.jwks.url first).
      await ts.kc.clients.update({ realm: 'test', id: 'signed' }, { attributes: { ...rep.attributes, 'use.jwks.url': 'true', 'jwks.url': 'https://keys.example.com/jwks.json' } });
      const withUrl = (await ts.store.clients.get('test', 'signed'))!;
      assert.equal(withUrl.jwtKeys?.useJwksUrl, true);
      assert.equal(withUrl.jwtKeys?.jwksUrl, 'https://keys.example.com/jwks.json');

      // Back to client-secret: a secret is generated (the client had none); then client-jwt again.
      await ts.kc.clients.update({ realm: 'test', id: 'signed' }, { clientAuthenticatorType: 'client-secret' });
      const secretClient = (await ts.store.clients.get('test', 'signed'))!;
      assert.deepEqual(secretClient.authMethods, ['client_secret_basic', 'client_secret_post']);
      assert.ok(secretClient.secretHash);
      assert.equal((await ts.kc.clients.findOne({ realm: 'test', id: 'signed' }))!.clientAuthenticatorType, 'client-secret');
      assert.equal(await clientCredentials('signed', privateKey), 401, 'a client-secret client takes no assertion');
      await ts.kc.clients.update({ realm: 'test', id: 'signed' }, { clientAuthenticatorType: 'client-jwt', attributes: { 'use.jwks.url': 'false' } });
      assert.deepEqual((await ts.store.clients.get('test', 'signed'))!.authMethods, ['private_key_jwt']);
      assert.equal(await clientCredentials('signed', privateKey), 200);
    });

    test('bad key attributes and HMAC algorithms are refused with 400, saying why', async () => {
      const bad: Array<[Record<string, string>, RegExp]> = [
        [{ 'use.jwks.url': 'true', 'jwks.url': 'ftp://keys.example.com/jwks' }, /http or https/],
        [{ 'jwks.url': 'https://user:pw@keys.example.com/jwks' }, /user information/],
        [{ 'use.jwks.string': 'true', 'jwks.string': '{"keys": "no"}' }, /keys/],
        [{ 'jwks.string': JSON.stringify({ keys: [{ kty: 'oct', k: 'c2VjcmV0' }] }) }, /public keys only/],
        [{ 'jwt.credential.certificate': 'not a certificate' }, /certificate/],
        [{ 'token.endpoint.auth.signing.alg': 'HS256' }, /HMAC/],
        [{ 'token.endpoint.auth.signing.alg': 'none' }, /must be one of/],
        [{ 'token.endpoint.auth.signing.max.exp': 'soon' }, /seconds/],
        [{ 'use.jwks.url': 'yes' }, /"true" or "false"/],
      ];
      for (const [attributes, why] of bad) {
        const e = await errorOf(ts.kc.clients.create({ realm: 'test', clientId: 'bad-jwt', clientAuthenticatorType: 'client-jwt', standardFlowEnabled: false, attributes }));
        assert.equal(e.status, 400, JSON.stringify(attributes));
        assert.match(String(e.body.errorMessage), why, JSON.stringify(attributes));
      }
      for (const other of ['client-secret-jwt', 'client-x509', 'jwt']) {
        assert.equal(await statusOf(ts.kc.clients.create({ realm: 'test', clientId: 'bad-jwt', clientAuthenticatorType: other, standardFlowEnabled: false })), 400, other);
      }
      assert.equal(await ts.store.clients.get('test', 'bad-jwt'), undefined);
    });
  });
}
