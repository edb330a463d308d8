import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { SignJWT, exportJWK, generateKeyPair } from 'jose';
import { cliDatabase, cliRunner } from '../helpers/cli.js';
import { dialects } from '../helpers/db.js';
import { openDatabase } from '../../src/storage/database.js';
import { Store } from '../../src/storage/store.js';
import { createServices } from '../../src/services.js';
import { buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/config/config.js';
import { systemClock } from '../../src/clock.js';
import { openKeySecret } from '../../src/crypto/key-file.js';

const TYPE = 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer';

// `realmgate client create|update --auth-method private_key_jwt --jwks-file|--jwks-url|--certificate-file`,
// through the installed command; the client it makes is then used at a server over the same database.
for (const dialect of dialects()) {
  describe(`realmgate client with private_key_jwt (${dialect})`, () => {
    const database = cliDatabase(dialect, 'pkjwt-cli-');
    const { run, ok, fails } = cliRunner(() => database.url);

    test('create with --jwks-file: no secret, keys shown; the token endpoint takes its assertion; update switches keys and back to a secret', async () => {
      ok(['realm', 'create', 'acme']);
      const { privateKey, publicKey } = await generateKeyPair('ES256');
      const file = path.join(database.dir, 'jwks.json');
      fs.writeFileSync(file, JSON.stringify({ keys: [{ ...(await exportJWK(publicKey)), kid: 'e1' }] }));
      let r = run(['client', 'create', 'acme', 'svc', '--auth-method', 'private_key_jwt', '--jwks-file', file, '--no-standard-flow', '--service-account', '--assertion-alg', 'ES256']);
      assert.equal(r.status, 0, r.stderr);
      assert.doesNotMatch(r.stdout, /client secret/);
      assert.match(r.stdout, /authenticates with a signed JWT \(private_key_jwt\), keys: inline JWKS \(ES256 only\)\n/);

      // A server over the same database accepts the client's assertion.
      const db = await openDatabase(database.url);
      // The key file the commands made signing keys with (cliDatabase sets REALMGATE_KEY_FILE).
      const config = loadConfig({}, { keyFile: process.env.REALMGATE_KEY_FILE!, port: 0, authUrl: 'http://localhost:8080', cacheTtlMs: 0, databaseUrl: database.url });
      openKeySecret(config, () => undefined);
      const app = await buildApp({ services: createServices(config, new Store(db), systemClock) });
      try {
        const t = Math.floor(Date.now() / 1000);
        const jwt = await new SignJWT({ jti: crypto.randomUUID() }).setProtectedHeader({ alg: 'ES256', kid: 'e1' }).setIssuer('svc').setSubject('svc').setAudience('http://localhost:8080/auth/realms/acme').setIssuedAt(t).setExpirationTime(t + 60).sign(privateKey);
        const res = await app.inject({ method: 'POST', url: '/auth/realms/acme/protocol/openid-connect/token', headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: new URLSearchParams({ grant_type: 'client_credentials', client_assertion_type: TYPE, client_assertion: jwt }).toString() });
        assert.equal(res.statusCode, 200, res.body);
      } finally {
        await app.close();
        await db.close();
      }

      r = run(['client', 'update', 'acme', 'svc', '--jwks-url', 'https://keys.example.com/jwks.json', '--assertion-alg', '']);
      assert.equal(r.status, 0, r.stderr);
      assert.match(r.stdout, /auth methods:\s+private_key_jwt\n/);
      assert.match(r.stdout, /JWT keys:\s+https:\/\/keys\.example\.com\/jwks\.json\n/);
      r = run(['client', 'update', 'acme', 'svc', '--jwks-url', '']);
      assert.match(r.stdout, /JWT keys:\s+inline JWKS\n/);
      // Back to a secret: one is generated, shown once.
      r = run(['client', 'update', 'acme', 'svc', '--auth-method', 'client_secret_basic']);
      assert.equal(r.status, 0, r.stderr);
      assert.match(r.stdout, /auth methods:\s+client_secret_basic\n/);
      assert.match(r.stdout, /client secret \(shown only now\): \S{20,}\n/);
    });

    test('refusals: keys without private_key_jwt, a secret with it, a bad URL, file, certificate or algorithm', () => {
      fails(['client', 'create', 'acme', 'x1', '--no-standard-flow', '--jwks-url', 'https://keys.example.com/jwks'], /for a client with --auth-method private_key_jwt/);
      fails(['client', 'create', 'acme', 'x2', '--no-standard-flow', '--auth-method', 'private_key_jwt', '--secret', 'a-chosen-secret-of-24-chars'], /has no secret/);
      fails(['client', 'create', 'acme', 'x3', '--no-standard-flow', '--auth-method', 'private_key_jwt', '--jwks-url', 'ftp://keys.example.com/jwks'], /http or https/);
      fails(['client', 'create', 'acme', 'x4', '--no-standard-flow', '--auth-method', 'private_key_jwt', '--jwks-file', '/nonexistent/pkjwt.json'], /cannot read the JWKS file/);
      fails(['client', 'create', 'acme', 'x5', '--no-standard-flow', '--auth-method', 'private_key_jwt', '--certificate-file', '/etc/hostname'], /certificate/);
      fails(['client', 'create', 'acme', 'x6', '--no-standard-flow', '--auth-method', 'private_key_jwt', '--assertion-alg', 'HS256'], /HMAC/);
      fails(['client', 'create', 'acme', 'x7', '--no-standard-flow', '--auth-method', 'private_key_jwt', '--jwks-url', 'https://a.example/j', '--jwks-file', '/etc/hostname'], /not both/);
    });

    test('--help names the method and the key options', () => {
      for (const cmd of ['create', 'update']) {
        const r = run(['client', cmd, '--help']);
        assert.match(r.stdout, /private_key_jwt/);
        for (const opt of ['--jwks-url', '--jwks-file', '--certificate-file', '--assertion-alg', '--assertion-max-exp']) assert.ok(r.stdout.includes(opt), `${cmd} ${opt}`);
      }
    });
  });
}
