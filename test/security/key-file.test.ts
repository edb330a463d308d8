import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { sql } from 'kysely';
import { dialects, createTestDatabase, ownTables, type TestDatabase } from '../helpers/db.js';
import { loadConfig, type Config } from '../../src/config/config.js';
import { startServer } from '../../src/server.js';
import { Store } from '../../src/storage/store.js';
import { openDatabase } from '../../src/storage/database.js';
import { createRealm, rotateKeys } from '../../src/admin/operations.js';
import { useKeyFileSecret } from '../../src/crypto/key-encryption.js';

const BIN = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../bin/realmgate.js');

// Issue 12 item 5: without REALMGATE_KEY_SECRET, a key file beside the database holds the
// key-encryption secret, so that a database dump alone never yields a private key.
delete process.env.REALMGATE_KEY_SECRET;

/** Every row of every table of the test database (its own schema on PostgreSQL), as text. */
async function dump(store: Store): Promise<string> {
  const tables = [...(await ownTables(store.db)).keys()];
  let out = '';
  for (const name of tables) {
    const rows = await sql<Record<string, unknown>>`select * from ${sql.table(name)}`.execute(store.db.kysely);
    out += `${name}\n${JSON.stringify(rows.rows)}\n`;
  }
  assert.ok(tables.includes('signing_keys'));
  return out;
}

for (const dialect of dialects()) {
  describe(`the key file (${dialect})`, () => {
    let tdb: TestDatabase;
    let dir: string;
    let config: Config;
    before(async () => {
      tdb = await createTestDatabase(dialect);
      dir = fs.mkdtempSync(path.join(os.tmpdir(), 'realmgate-keyfile-'));
      // SQLite: the default, beside the database file. PostgreSQL: a configured path.
      config = loadConfig({}, { port: 0, databaseUrl: tdb.url, logLevel: 'silent', ...(dialect === 'postgres' ? { keyFile: path.join(dir, 'realmgate.key') } : {}) });
      // A realm whose key an earlier version stored in clear.
      useKeyFileSecret(undefined);
      await createRealm(new Store(tdb.db), { id: 'old' });
      await tdb.db.close();
    });
    after(async () => {
      tdb.db = await openDatabase(tdb.url);
      await tdb.drop();
      fs.rmSync(dir, { recursive: true, force: true });
      if (dialect === 'sqlite') fs.rmSync(config.keyFile, { force: true });
    });

    test('is created on first start with mode 0600 beside the SQLite file; clear keys are sealed; the dump has no private key', async () => {
      if (dialect === 'sqlite') assert.equal(config.keyFile, tdb.url.slice('sqlite:'.length).replace(/\.db$/, '.key'));
      assert.equal(fs.existsSync(config.keyFile), false);
      const old = await storeOf();
      const before = (await dump(old)).match(/\\"d\\":/g)?.length ?? 0;
      await old.db.close();
      assert.ok(before > 0, 'the clear key of realm old is in the database before the start');
      const server = await startServer(config, { onReady: async (s) => void (await createRealm(s.store, { id: 'fresh' })) });
      try {
        assert.equal(fs.statSync(config.keyFile).mode & 0o777, 0o600);
        const secret = fs.readFileSync(config.keyFile, 'utf8').trim();
        assert.ok(secret.length >= 43);
        await rotateKeys(server.services.store, { realmId: 'fresh' });
        const text = await dump(server.services.store);
        assert.doesNotMatch(text, /\\"d\\":/, 'no private JWK member in any row');
        assert.doesNotMatch(text, /BEGIN [A-Z ]*PRIVATE KEY/);
        assert.ok(!text.includes(secret), 'the key file content is not in the database');
        const keys = await server.services.store.db.kysely.selectFrom('signing_keys').select('private_jwk').execute();
        assert.ok(keys.length >= 3);
        for (const k of keys) assert.match(k.private_jwk, /^enc:v2:/);
        // The server signs with them: its discovery and keys answer, and the keystore opens each realm's key.
        assert.equal(await server.services.keys.algorithm('old'), 'RS256');
        assert.equal(await server.services.keys.algorithm('fresh'), 'RS256');
      } finally {
        await server.close();
      }
      // A second start reads the same file.
      const again = await startServer(config);
      await again.close();
    });

    test('a missing or wrong key file fails start with a clear message', async () => {
      const saved = fs.readFileSync(config.keyFile);
      try {
        fs.rmSync(config.keyFile);
        await assert.rejects(startServer(config), /signing keys are encrypted, but the key file .*realmgate\.key|test\.key does not exist/);
        assert.equal(fs.existsSync(config.keyFile), false, 'no new key file replaces the lost one');
        fs.writeFileSync(config.keyFile, crypto.randomBytes(32).toString('base64url') + '\n', { mode: 0o600 });
        await assert.rejects(startServer(config), /the key file .* does not open the stored signing keys/);
      } finally {
        fs.writeFileSync(config.keyFile, saved, { mode: 0o600 });
      }
      const ok = await startServer(config);
      await ok.close();
    });

    test('the CLI uses the same key file: its new keys are sealed, and it prints the path of a file it creates', async () => {
      const cli = (args: string[], env: Record<string, string>) =>
        spawnSync(process.execPath, [BIN, ...args], { env: { ...process.env, LOG_LEVEL: 'silent', ...env }, encoding: 'utf8', timeout: 30_000 });
      const env = { DATABASE_URL: tdb.url, ...(dialect === 'postgres' ? { REALMGATE_KEY_FILE: config.keyFile } : {}) };
      let r = cli(['realm', 'create', 'cli-made'], env);
      assert.equal(r.status, 0, r.stderr);
      const store = await storeOf();
      const row = await store.db.kysely.selectFrom('signing_keys').select('private_jwk').where('realm_id', '=', 'cli-made').executeTakeFirstOrThrow();
      await store.db.close();
      assert.match(row.private_jwk, /^enc:v2:/);
      // A fresh database elsewhere: the CLI creates its key file and says where.
      const other = path.join(dir, 'other.db');
      r = cli(['realm', 'create', 'x'], { DATABASE_URL: `sqlite:${other}` });
      assert.equal(r.status, 0, r.stderr);
      assert.ok(r.stderr.includes(path.join(dir, 'other.key')), r.stderr);
      assert.equal(fs.statSync(path.join(dir, 'other.key')).mode & 0o777, 0o600);
    });

    async function storeOf(): Promise<Store> {
      return new Store(await openDatabase(tdb.url));
    }
  });
}
