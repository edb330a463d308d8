import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import crypto from 'node:crypto';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { SignJWT, exportJWK, generateKeyPair } from 'jose';
import { dialects } from '../helpers/db.js';
import { startTestServer, REALM } from '../helpers/server.js';
import { createClient } from '../../src/admin/operations.js';

// A client assertion's jti is single-use across processes: the built server started as a second process
// on the same database refuses what this one took, and the other way round (npm run build first).
const BIN = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../bin/realmgate.js');
const TYPE = 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer';

for (const dialect of dialects()) {
  describe(`private_key_jwt across processes (${dialect})`, () => {
    test('a jti used at one process is refused at the other, both ways', async () => {
      const ts = await startTestServer({ dialect, listen: true });
      const { privateKey, publicKey } = await generateKeyPair('ES256');
      await createClient(ts.store, { realmId: REALM, clientId: 'svc', redirectUris: [], standardFlowEnabled: false, serviceAccountsEnabled: true, authMethods: ['private_key_jwt'], jwtKeys: { useJwksString: true, jwksString: JSON.stringify({ keys: [await exportJWK(publicKey)] }) } });
      const assertion = async (): Promise<string> => {
        const t = Math.floor(Date.now() / 1000);
        return new SignJWT({ jti: crypto.randomUUID() }).setProtectedHeader({ alg: 'ES256' }).setIssuer('svc').setSubject('svc').setAudience(`${ts.baseUrl}/auth/realms/${REALM}`).setIssuedAt(t).setExpirationTime(t + 60).sign(privateKey);
      };
      const grant = async (base: string, jwt: string): Promise<number> => {
        const r = await fetch(`${base}/auth/realms/${REALM}/protocol/openid-connect/token`, { method: 'POST', body: new URLSearchParams({ grant_type: 'client_credentials', client_assertion_type: TYPE, client_assertion: jwt }) });
        await r.body?.cancel();
        return r.status;
      };
      // This process uses one assertion before the other starts (the other seals the test's signing keys
      // with its own key file when it starts: from then on only it signs).
      const taken = await assertion();
      assert.equal(await grant(ts.baseUrl, taken), 200);
      const child = spawn(process.execPath, [BIN, 'start', '--port', '0'], { env: { ...process.env, LOG_LEVEL: 'warn', DATABASE_URL: ts.db.url, AUTH_URL: ts.baseUrl } });
      let out = '';
      child.stdout.on('data', (d: Buffer) => (out += d.toString()));
      child.stderr.on('data', (d: Buffer) => (out += d.toString()));
      const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()));
      try {
        // Not a timing threshold: a generous bound on the line the process prints.
        const deadline = Date.now() + 60_000;
        let other: string | undefined;
        while (!(other = /listening on (http:\/\/\S+)/.exec(out)?.[1])) {
          if (Date.now() > deadline || child.exitCode !== null) throw new Error(`the second process did not start:\n${out}`);
          await new Promise((r) => setTimeout(r, 25));
        }
        assert.equal(await grant(other, taken), 401, 'taken here, refused there');
        const fresh = await assertion();
        assert.equal(await grant(other, fresh), 200, out);
        assert.equal(await grant(ts.baseUrl, fresh), 401, 'taken there, refused here');
      } finally {
        if (child.exitCode === null) child.kill('SIGTERM');
        await exited;
        await ts.close();
      }
    });
  });
}
