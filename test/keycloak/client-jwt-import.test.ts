import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { dialects } from '../helpers/db.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { importKeycloakRealms } from '../../src/admin/operations/realm-import.js';
import { exportRealm } from '../../src/admin/keycloak/export.js';
import { cliActor } from '../../src/admin/operations/common.js';

const actor = { ...cliActor(), via: 'import' as const };
type Json = Record<string, unknown>;

function certificateDer(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pkjwt-cert-'));
  try {
    execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', `${dir}/k.pem`, '-out', `${dir}/c.pem`, '-days', '1', '-subj', '/CN=kc'], { stdio: 'ignore' });
    return new crypto.X509Certificate(fs.readFileSync(`${dir}/c.pem`)).raw.toString('base64');
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

// Keycloak's client-jwt clients (Signed JWT) move with a realm: their key attributes kept and reported,
// a bad one left out; client-secret-jwt still refused; the export writes them back.
for (const dialect of dialects()) {
  describe(`Keycloak import and export: client-jwt clients (${dialect})`, () => {
    let ts: TestServer;
    before(async () => {
      ts = await startTestServer({ dialect });
    });
    after(() => ts.close());

    const client = (clientId: string, clientAuthenticatorType: string, attributes: Json): Json => ({
      clientId,
      protocol: 'openid-connect',
      publicClient: false,
      clientAuthenticatorType,
      // Keycloak's export writes the secret of every confidential client, client-jwt ones too.
      secret: 'a-generated-looking-secret-of-32-chars-0123',
      serviceAccountsEnabled: true,
      redirectUris: ['https://app.example.com/cb'],
      attributes,
    });

    test('client-jwt clients are imported with their keys, reported; a bad attribute left out; client-secret-jwt refused; export and re-import keep them', async () => {
      const { publicKey } = crypto.generateKeyPairSync('ec', { namedCurve: 'P-256' });
      const jwks = JSON.stringify({ keys: [publicKey.export({ format: 'jwk' })] });
      const der = certificateDer();
      const signer = crypto.generateKeyPairSync('rsa', { modulusLength: 2048 });
      const pub = signer.publicKey.export({ type: 'spki', format: 'der' }).toString('base64');
      // As Keycloak 26 exports them: every attribute present, unset ones "".
      const kc = { 'use.jwks.url': 'false', 'jwks.url': '', 'use.jwks.string': 'false', 'token.endpoint.auth.signing.alg': '', 'token.endpoint.auth.signing.max.exp': '' };
      const realm = {
        realm: 'kjwt',
        enabled: true,
        clients: [
          client('by-url', 'client-jwt', { ...kc, 'use.jwks.url': 'true', 'jwks.url': 'https://keys.example.com/jwks.json', 'token.endpoint.auth.signing.alg': 'PS256', 'token.endpoint.auth.signing.max.exp': '120' }),
          client('by-jwks', 'client-jwt', { ...kc, 'use.jwks.string': 'true', 'jwks.string': jwks }),
          client('by-cert', 'client-jwt', { ...kc, 'jwt.credential.certificate': der }),
          // Keycloak's "Public key PEM" import: the key (base64 DER), its kid beside it.
          client('by-key', 'client-jwt', { ...kc, 'jwt.credential.public.key': pub, 'jwt.credential.kid': 'kid-1' }),
          client('bad-url', 'client-jwt', { ...kc, 'use.jwks.url': 'true', 'jwks.url': 'file:///etc/passwd' }),
          client('hmac', 'client-secret-jwt', kc),
          client('secret', 'client-secret', kc),
        ],
      };
      const report = await importKeycloakRealms(ts.store, [realm], { ifExists: 'fail' }, actor);
      const r = report.realms[0]!;
      assert.equal(r.status, 'imported', JSON.stringify(r));
      const text = JSON.stringify(r.lines);
      const byUrl = (await ts.store.clients.get('kjwt', 'by-url'))!;
      assert.deepEqual(byUrl.authMethods, ['private_key_jwt']);
      assert.equal(byUrl.secretHash, null, 'the secret is not kept');
      assert.deepEqual(byUrl.jwtKeys, { useJwksUrl: true, jwksUrl: 'https://keys.example.com/jwks.json', useJwksString: false, jwksString: null, certificate: null, publicKey: null, signingAlg: 'PS256', maxExp: 120 });
      assert.match(text, /signed JWT \(private_key_jwt\), keys from its JWKS URL https:\/\/keys\.example\.com\/jwks\.json/);
      assert.equal((await ts.store.clients.get('kjwt', 'by-jwks'))!.jwtKeys?.jwksString, jwks);
      assert.equal((await ts.store.clients.get('kjwt', 'by-cert'))!.jwtKeys?.certificate, der);
      assert.equal((await ts.store.clients.get('kjwt', 'by-key'))!.jwtKeys?.publicKey, pub);
      assert.match(text, /keys from its public key/);
      const badUrl = (await ts.store.clients.get('kjwt', 'bad-url'))!;
      assert.deepEqual(badUrl.authMethods, ['private_key_jwt']);
      assert.equal(badUrl.jwtKeys?.jwksUrl ?? null, null);
      assert.match(r.lines.find((l) => l.element === 'client bad-url attribute jwks.url')?.reason ?? '', /http or https/, text);
      assert.match(text, /no key came with it/);
      assert.equal(await ts.store.clients.get('kjwt', 'hmac'), undefined);
      assert.match(r.lines.find((l) => l.element.startsWith('client hmac'))?.reason ?? '', /client-secret-jwt/);
      // A client-secret client's (empty) key attributes are not read: it stays a secret client without keys.
      const secret = (await ts.store.clients.get('kjwt', 'secret'))!;
      assert.deepEqual(secret.authMethods, ['client_secret_basic', 'client_secret_post']);
      assert.equal(secret.jwtKeys, null);

      const exported = await exportRealm(ts.store, 'kjwt', { withSecrets: true });
      const out = (exported.clients as Json[]).find((c) => c.clientId === 'by-url')!;
      assert.equal(out.clientAuthenticatorType, 'client-jwt');
      const attrs = out.attributes as Json;
      assert.equal(attrs['use.jwks.url'], 'true');
      assert.equal(attrs['jwks.url'], 'https://keys.example.com/jwks.json');
      assert.equal(attrs['token.endpoint.auth.signing.alg'], 'PS256');
      assert.equal(attrs['token.endpoint.auth.signing.max.exp'], '120');
      assert.equal(((exported.clients as Json[]).find((c) => c.clientId === 'secret')!).clientAuthenticatorType, 'client-secret');
      const again = await importKeycloakRealms(ts.store, [{ ...exported, realm: 'kjwt2' }], { ifExists: 'fail' }, actor);
      assert.equal(again.realms[0]!.status, 'imported', JSON.stringify(again.realms[0]));
      assert.equal(((exported.clients as Json[]).find((c) => c.clientId === 'by-key')!.attributes as Json)['jwt.credential.public.key'], pub);
      for (const id of ['by-url', 'by-jwks', 'by-cert', 'by-key']) {
        const a = (await ts.store.clients.get('kjwt', id))!;
        const b = (await ts.store.clients.get('kjwt2', id))!;
        assert.deepEqual([b.authMethods, b.jwtKeys], [a.authMethods, a.jwtKeys], id);
      }
    });
  });
}
