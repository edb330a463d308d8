import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { sql } from 'kysely';
import { BIN } from '../helpers/cli.js';
import { dialects, createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { openDatabase } from '../../src/storage/database.js';

// Every command that creates signing keys seals them (docs/security.md: a database dump never yields a
// private key) and checks the key secret first: `realm import` and `bootstrap-admin` as `realm create`.
const EXPORT = path.resolve('../shared/fixtures/keycloak/migration-realm-26.6.0.json');

for (const dialect of dialects()) {
  describe(`commands that create keys seal them (${dialect})`, () => {
    let tdb: TestDatabase;
    let dir: string;
    let keyFile: string;
    before(async () => {
      tdb = await createTestDatabase(dialect);
      await tdb.db.close();
      dir = fs.mkdtempSync(path.join(os.tmpdir(), 'realmgate-sealing-'));
      keyFile = path.join(dir, 'realmgate.key');
    });
    after(async () => {
      tdb.db = await openDatabase(tdb.url);
      await tdb.drop();
      fs.rmSync(dir, { recursive: true, force: true });
    });

    const cli = (args: string[], env: Record<string, string> = {}, input = '') =>
      spawnSync(process.execPath, [BIN, ...args], {
        env: { ...process.env, DATABASE_URL: tdb.url, LOG_LEVEL: 'silent', REALMGATE_KEY_FILE: keyFile, REALMGATE_KEY_SECRET: '', ...env },
        input,
        encoding: 'utf8',
        timeout: 60_000,
      });

    async function query<T>(text: string): Promise<T[]> {
      const db = await openDatabase(tdb.url);
      try {
        return (await sql<T>`${sql.raw(text)}`.execute(db.kysely)).rows;
      } finally {
        await db.close();
      }
    }

    /** Every row of the tables a command may write, as text. */
    async function dump(): Promise<string> {
      let out = '';
      for (const t of ['realms', 'signing_keys', 'hmac_keys', 'clients', 'users', 'admin_events', 'kysely_migration']) {
        out += `${t}\n${JSON.stringify(await query(`select * from ${t} order by 1`))}\n`;
      }
      return out;
    }

    async function assertSealed(realmId: string): Promise<void> {
      const keys = await query<{ private_jwk: string }>(`select private_jwk from signing_keys where realm_id = '${realmId}'`);
      assert.ok(keys.length > 0, `realm ${realmId} has signing keys`);
      for (const k of keys) {
        assert.match(k.private_jwk, /^enc:v2:/);
        assert.doesNotMatch(k.private_jwk, /"d"/);
      }
      const hmac = await query<{ secret_jwk: string }>(`select secret_jwk from hmac_keys where realm_id = '${realmId}'`);
      assert.ok(hmac.length > 0);
      for (const k of hmac) assert.match(k.secret_jwk, /^enc:v2:/);
    }

    test('bootstrap-admin on a fresh database stores the keys of master sealed, and creates the key file', async () => {
      const r = cli(['bootstrap-admin', '--username', 'root', '--password-stdin'], {}, 'root-password-1\n');
      assert.equal(r.status, 0, r.stderr);
      assert.ok(r.stderr.includes(keyFile), r.stderr);
      assert.equal(fs.statSync(keyFile).mode & 0o777, 0o600);
      await assertSealed('master');
    });

    test('realm import stores the keys of every imported realm sealed', async () => {
      const r = cli(['realm', 'import', EXPORT]);
      assert.equal(r.status, 0, r.stderr);
      const realms = (await query<{ realm_id: string }>('select distinct realm_id from signing_keys')).map((x) => x.realm_id).filter((x) => x !== 'master');
      assert.ok(realms.length > 0);
      for (const realm of realms) await assertSealed(realm);
    });

    test('with a wrong key file, realm import and bootstrap-admin fail with a clear message and change nothing', async () => {
      const wrong = path.join(dir, 'wrong.key');
      fs.writeFileSync(wrong, crypto.randomBytes(32).toString('base64url') + '\n', { mode: 0o600 });
      const before = await dump();
      let r = cli(['realm', 'import', '--if-exists', 'overwrite', EXPORT], { REALMGATE_KEY_FILE: wrong });
      assert.equal(r.status, 1, r.stderr);
      assert.match(r.stderr, /realmgate: the key file .*wrong\.key does not open the stored signing keys/);
      assert.doesNotMatch(r.stderr, /\n\s+at\s/);
      assert.equal(r.stdout, '');
      // Without --if-exists too (each realm then fails as existing, but the secret is checked first).
      r = cli(['realm', 'import', EXPORT], { REALMGATE_KEY_FILE: wrong });
      assert.equal(r.status, 1, r.stderr);
      r = cli(['bootstrap-admin', '--username', 'other', '--password-stdin'], { REALMGATE_KEY_FILE: wrong }, 'other-password-1\n');
      assert.equal(r.status, 1, r.stderr);
      assert.match(r.stderr, /does not open the stored signing keys/);
      assert.equal(await dump(), before);
    });

    test("a command that opens the key secret seals a refresh HMAC key an earlier version stored in clear", async () => {
      const clear = JSON.stringify({ kty: 'oct', k: crypto.randomBytes(32).toString('base64url'), kid: 'old-clear', alg: 'HS256' });
      const db = await openDatabase(tdb.url);
      try {
        await db.kysely.insertInto('hmac_keys').values({ kid: 'old-clear', realm_id: 'master', alg: 'HS256', secret_jwk: clear, status: 'retired', created_at: 1 }).execute();
      } finally {
        await db.close();
      }
      const r = cli(['realm', 'create', 'later']);
      assert.equal(r.status, 0, r.stderr);
      const [row] = await query<{ secret_jwk: string }>("select secret_jwk from hmac_keys where kid = 'old-clear'");
      assert.match(row!.secret_jwk, /^enc:v2:/);
      await assertSealed('later');
    });
  });
}
