import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { BIN, cliRunner } from '../helpers/cli.js';
import { runProgram } from '../helpers/program.js';
import { createTestDatabase, dialects, type TestDatabase } from '../helpers/db.js';
import { openDatabase } from '../../src/storage/database.js';
import { Store } from '../../src/storage/store.js';
import { sqliteFile } from '../../src/config/data-dir.js';
import { seedTokenClient, startServerProcess, type ServerProcess, type TokenClient } from '../crash/harness.js';
import { checkChainInvariants, heldTokenState } from '../crash/invariants.js';

// `realmgate backup` and `realmgate restore` (docs/operations.md, Backup and restore): a copy made while
// a server rotates refresh tokens as fast as it can is one consistent moment of the database, and a
// restore puts that moment back, only once no process has the database open.

async function cli(url: string, args: string[]): Promise<{ code: number | null; out: string; err: string }> {
  // Not spawnSync: the refresh load of this process goes on while the command runs.
  const saved = process.env.DATABASE_URL;
  process.env.DATABASE_URL = url;
  try {
    return await runProgram(process.execPath, [BIN, ...args]);
  } finally {
    if (saved === undefined) delete process.env.DATABASE_URL;
    else process.env.DATABASE_URL = saved;
  }
}

describe('backup and restore of the SQLite database', () => {
  let tdb: TestDatabase;
  let file: string;
  let dir: string;
  let client: TokenClient;
  let server: ServerProcess | undefined;
  const { ok, fails } = cliRunner(() => tdb.url);

  before(async () => {
    tdb = await createTestDatabase('sqlite');
    file = sqliteFile(tdb.url)!;
    dir = path.dirname(file);
    client = await seedTokenClient(new Store(tdb.db), 8);
  });
  after(async () => {
    server?.child.kill('SIGKILL');
    await client.close();
    await tdb.drop().catch(() => undefined);
  });

  test('a backup under refresh load is one consistent moment; restore refuses a database in use, then puts that moment back', async () => {
    server = await startServerProcess(tdb.url);
    const chains: string[][] = [];
    for (let i = 0; i < 6; i++) chains.push([await client.newChain(server)]);
    let stop = false;
    let refreshes = 0;
    const load = chains.map(async (history) => {
      while (!stop) {
        const r = await client.post(server!, { grant_type: 'refresh_token', refresh_token: history.at(-1)! });
        assert.equal(r.status, 200, JSON.stringify(r.json));
        history.push(r.json.refresh_token as string);
        refreshes++;
      }
    });
    await new Promise((r) => setTimeout(r, 300));
    const during = refreshes;
    const backup = path.join(dir, 'backup.db');
    const made = await cli(tdb.url, ['backup', backup]);
    await new Promise((r) => setTimeout(r, 200));
    stop = true;
    await Promise.all(load);
    assert.equal(made.code, 0, made.err);
    assert.ok(refreshes > during, 'the server kept rotating tokens while the backup was made');
    assert.match(made.out, /^backed up .+ to .+backup\.db \(\d+ KB: 1 realms, 1 users, \d+ migrations; integrity check ok\)$/m);
    assert.match(made.out, /sealed with the key file .+, which is not in the backup: back it up apart/);
    assert.equal(fs.statSync(backup).mode & 0o777, 0o600);
    assert.deepEqual(fs.readdirSync(dir).filter((f) => f.includes('.tmp')), []);
    // A backup never replaces a file, the database's own least of all.
    fails(['backup', backup], /backup\.db exists: a backup never replaces a file/);
    fails(['backup', file], /cannot be written over the database itself/);
    fails(['backup', path.join(dir, 'no-such-folder', 'b.db')], /the folder .+no-such-folder does not exist/);

    // While the server has the database open, restore refuses and changes nothing.
    fails(['restore', backup], /the database .+ is in use: stop every server and command using it, then restore/);
    const after = [];
    for (const history of chains) {
      const r = await client.post(server, { grant_type: 'refresh_token', refresh_token: history.at(-1)! });
      assert.equal(r.status, 200, JSON.stringify(r.json));
      after.push(r.json.refresh_token as string);
    }
    server.child.kill('SIGTERM');
    await server.exited;
    server = undefined;
    await tdb.db.close();

    const restored = ok(['restore', backup]);
    assert.match(restored, /^restored .+backup\.db to .+test\.db \(\d+ KB: 1 realms, 1 users, \d+ migrations\)$/m);
    const replaced = /kept as (\S+)/.exec(restored)?.[1];
    assert.ok(replaced && fs.existsSync(replaced), restored);
    assert.ok(!fs.existsSync(`${file}-wal`) || fs.statSync(`${file}-wal`).size === 0, 'no WAL of the replaced database beside the restored one');

    // The restored database: whole rows only, and for each chain exactly one token of its history current,
    // one issued before the backup (never the ones issued after it).
    tdb.db = await openDatabase(tdb.url);
    const store = new Store(tdb.db);
    await checkChainInvariants(tdb.db, 'sqlite');
    const current: string[] = [];
    for (const [i, history] of chains.entries()) {
      const states = await Promise.all(history.map((t) => heldTokenState(store, t)));
      const at = states.flatMap((s, j) => (s === 'current' ? [j] : []));
      assert.equal(at.length, 1, `chain ${i}: ${states.join(',')}`);
      assert.equal(await heldTokenState(store, after[i]!), 'rotated', `chain ${i}: a token issued after the backup is not current`);
      current.push(history[at[0]!]!);
    }
    await tdb.db.close();

    // A server on the restored database serves what it held: each chain's current token refreshes.
    server = await startServerProcess(tdb.url);
    const successors: string[] = [];
    for (const token of current) {
      const r = await client.post(server, { grant_type: 'refresh_token', refresh_token: token });
      assert.equal(r.status, 200, JSON.stringify(r.json));
      successors.push(r.json.refresh_token as string);
    }
    // A token issued after the backup is newer than its restored chain: refused, not taken for a reuse,
    // and the chain ends (its older tokens, which the restored row accepted, are of no use any more).
    for (const token of after) {
      const r = await client.post(server, { grant_type: 'refresh_token', refresh_token: token });
      assert.equal(r.status, 400);
      assert.equal(r.json.error, 'invalid_grant');
      assert.match(String(r.json.error_description), /newer than the server's record of its grant \(a database restored from an earlier backup\): sign in again/);
    }
    server.child.kill('SIGTERM');
    await server.exited;
    server = undefined;
    tdb.db = await openDatabase(tdb.url);
    const restoredStore = new Store(tdb.db);
    for (const token of successors) assert.equal(await heldTokenState(restoredStore, token), 'revoked');
    const events = await tdb.db.kysely.selectFrom('events').select(['type', 'reason']).where('type', 'in', ['TOKEN_REUSE', 'REFRESH_TOKEN_ERROR']).execute();
    assert.deepEqual(events.map((e) => e.type), Array(after.length).fill('REFRESH_TOKEN_ERROR'));
    assert.ok(events.every((e) => /newer than the server's record/.test(e.reason ?? '')), JSON.stringify(events));
  });

  test('restore refuses what is not a backup it can use, and leaves the database as it was', async () => {
    await tdb.db.close();
    const before = fs.readFileSync(file);
    const text = path.join(dir, 'notes.txt');
    fs.writeFileSync(text, 'not a database\n'.repeat(100));
    fails(['restore', text], /notes\.txt (is not a usable SQLite database|fails SQLite's integrity check|cannot open)/);
    const other = path.join(dir, 'other.db');
    const { default: BetterSqlite3 } = await import('better-sqlite3');
    const o = new BetterSqlite3(other);
    o.exec('create table t (x)');
    o.close();
    fails(['restore', other], /other\.db is not a Realmgate database/);
    const newer = path.join(dir, 'newer.db');
    fs.copyFileSync(file, newer);
    const n = new BetterSqlite3(newer);
    n.prepare('insert into kysely_migration (name, timestamp) values (?, ?)').run('9999_future', '2099-01-01T00:00:00.000Z');
    n.close();
    fails(['restore', newer], /newer\.db was migrated by a newer Realmgate \(its migration 9999_future is unknown to this version\)/);
    fails(['restore', path.join(dir, 'missing.db')], /no backup at .+missing\.db/);
    fails(['restore', file], /is the database itself/);
    assert.ok(fs.readFileSync(file).equals(before), 'the database is unchanged');
    tdb.db = await openDatabase(tdb.url);
  });
});

for (const dialect of dialects().filter((d) => d === 'postgres')) {
  describe(`backup and restore on ${dialect}`, () => {
    let tdb: TestDatabase;
    before(async () => {
      tdb = await createTestDatabase(dialect);
    });
    after(() => tdb.drop());
    const { fails } = cliRunner(() => tdb.url);

    test('point to PostgreSQL\'s own tools', () => {
      fails(['backup', '/tmp/realmgate-pg.db'], /backup copies the embedded SQLite database; on PostgreSQL use pg_dump/);
      fails(['restore', '/tmp/realmgate-pg.db'], /on PostgreSQL use pg_restore or psql/);
      assert.equal(fs.existsSync('/tmp/realmgate-pg.db'), false);
    });
  });
}
