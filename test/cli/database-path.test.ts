import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { BIN, cliRunner, type CliResult } from '../helpers/cli.js';
import { openDatabase } from '../../src/storage/database.js';

// Which commands may create an SQLite database: only those a deployment starts with. Any other command
// given a path where there is none (a mistyped DATABASE_URL or --database-url) says so and makes nothing
// on disk, instead of printing the empty lists of a new database it just created and migrated. A command
// that only reads also works on a migrated database file it cannot write.

/** Commands that only read, each with what it needs to exist (realm r, user u, organization o). */
const READS = [
  ['realm', 'list'],
  ['realm', 'export', 'r'],
  ['user', 'list', 'r'],
  ['user', 'sessions', 'r', 'u'],
  ['user', 'consents', 'r', 'u'],
  ['client', 'list', 'r'],
  ['keys', 'list', 'r'],
  ['org', 'list', 'r'],
  ['org', 'members', 'list', 'r', 'o'],
  ['events', 'r'],
  ['admin-events', 'r'],
];

describe('realmgate commands and the SQLite database path', () => {
  let dir = '';
  before(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'realmgate-dbpath-'));
    process.env.REALMGATE_KEY_FILE = path.join(dir, 'k.key');
  });
  after(() => {
    fs.rmSync(dir, { recursive: true, force: true });
    delete process.env.REALMGATE_KEY_FILE;
  });

  test('a command other than start, migrate, realm create/import and bootstrap-admin refuses a path with no database, and creates nothing', () => {
    const missing = path.join(dir, 'typo', 'realmgate.db');
    const { fails, run } = cliRunner(() => `sqlite:${missing}`);
    const message = new RegExp(`^realmgate: no database at ${missing.replace(/[.\\/]/g, '\\$&')}: choose the database with --database-url or DATABASE_URL`, 'm');
    for (const args of [...READS, ['realm', 'update', 'r', '--display-name', 'R'], ['user', 'create', 'r', 'u', '--password', 'password-u1'], ['token', 'revoke', 'r', '--client', 'c']]) {
      fails(args, message, { status: 1 });
    }
    // The flag is checked the same way (it wins over DATABASE_URL).
    const other = path.join(dir, 'other', 'x.db');
    const r = run(['--database-url', `sqlite:${other}`, 'realm', 'list']);
    assert.equal(r.status, 1);
    assert.match(r.stderr, new RegExp(`no database at ${other.replace(/[.\\/]/g, '\\$&')}:`));
    assert.equal(r.stdout, '');
    assert.deepEqual(fs.readdirSync(dir), [], 'no file and no folder was made');
    // An empty file (a `touch`, a failed copy) is no database either, and stays as it is.
    const empty = path.join(dir, 'empty.db');
    fs.writeFileSync(empty, '');
    cliRunner(() => `sqlite:${empty}`).fails(['user', 'list', 'r'], new RegExp(`^realmgate: no database at ${empty.replace(/[.\\/]/g, '\\$&')}:`, 'm'), { status: 1 });
    assert.equal(fs.statSync(empty).size, 0);
    fs.rmSync(empty);
  });

  test('realm create, realm import, bootstrap-admin and migrate still create a new database', () => {
    const exported = path.join(dir, 'imported-realm.json');
    fs.writeFileSync(exported, JSON.stringify({ realm: 'imported', enabled: true }));
    for (const [name, args, input] of [
      ['create', ['realm', 'create', 'r']],
      ['import', ['realm', 'import', exported]],
      ['bootstrap', ['bootstrap-admin', '--password-stdin'], 'admin password 1'],
      ['migrate', ['migrate']],
    ] as Array<[string, string[], string?]>) {
      const file = path.join(dir, name, 'new.db');
      const { run } = cliRunner(() => `sqlite:${file}`);
      const r = run(args, input);
      assert.equal(r.status, 0, `${args.join(' ')}: ${r.stderr}`);
      assert.ok(fs.statSync(file).isFile(), `${args.join(' ')} created the database`);
      const listed = run(['realm', 'list']);
      assert.equal(listed.status, 0, listed.stderr);
      assert.match(listed.stdout, { create: /^r\t/m, import: /^imported\t/m, bootstrap: /^master\t/m, migrate: /^$/ }[name]!);
    }
  });
});

// The same on PostgreSQL: a mistyped `schema` in the URL was created, migrated and listed as empty.
describe('realmgate commands and a PostgreSQL schema that does not exist', { skip: !process.env.TEST_DATABASE_URL && 'TEST_DATABASE_URL is not set' }, () => {
  const schema = `rg_typo_${crypto.randomBytes(4).toString('hex')}`;
  const base = new URL(process.env.TEST_DATABASE_URL ?? 'postgres://localhost/test');
  base.searchParams.set('schema', schema);
  const url = base.href;
  let dir = '';
  const schemaExists = async (): Promise<boolean> => {
    const db = await openDatabase(process.env.TEST_DATABASE_URL!);
    try {
      return (await sql<{ n: number }>`select count(*)::int as n from pg_namespace where nspname = ${schema}`.execute(db.kysely)).rows[0]!.n === 1;
    } finally {
      await db.close();
    }
  };
  before(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'realmgate-pgpath-'));
    process.env.REALMGATE_KEY_FILE = path.join(dir, 'k.key');
  });
  after(async () => {
    const db = await openDatabase(process.env.TEST_DATABASE_URL!);
    try {
      await sql`drop schema if exists ${sql.id(schema)} cascade`.execute(db.kysely);
    } finally {
      await db.close();
    }
    fs.rmSync(dir, { recursive: true, force: true });
    delete process.env.REALMGATE_KEY_FILE;
  });

  test('a command that needs a database refuses it in one line and creates nothing; realm create creates it', async () => {
    const { fails, run } = cliRunner(() => url);
    const message = new RegExp(`^realmgate: no Realmgate database at postgres://.*schema=${schema}: choose the database with --database-url or DATABASE_URL`, 'm');
    for (const args of [['realm', 'list'], ['user', 'list', 'r'], ['user', 'create', 'r', 'u', '--password', 'password-u1'], ['events', 'r']]) fails(args, message, { status: 1 });
    assert.equal(await schemaExists(), false, 'the schema was not created');
    const created = run(['realm', 'create', 'r']);
    assert.equal(created.status, 0, created.stderr);
    assert.equal(await schemaExists(), true);
    assert.match(run(['realm', 'list']).stdout, /^r\t/m);
  });
});

// A database file this process may not write (and, further down, a folder it may not write either). As
// root, whom file modes do not stop, the commands run without the capabilities that override them
// (setpriv drops CAP_DAC_OVERRIDE and CAP_DAC_READ_SEARCH): still root, so the checkout may be anywhere
// (a clone in a 0700 folder is out of another user's reach), but the modes below hold.
describe('read-only commands on a database file they cannot write', () => {
  const root = process.getuid?.() === 0;
  let dir = '';
  let data = '';
  let file = '';
  const url = () => `sqlite:${file}`;
  const { ok } = cliRunner(url);

  /** The command as a user who may read the database but not write it. */
  function runReader(args: string[]): CliResult {
    const command = root ? ['setpriv', '--bounding-set=-dac_override,-dac_read_search', '--', process.execPath] : [process.execPath];
    const r = spawnSync(command[0]!, [...command.slice(1), BIN, ...args], {
      env: { ...process.env, DATABASE_URL: url(), LOG_LEVEL: 'silent' },
      encoding: 'utf8',
      timeout: 30_000,
    });
    return { status: r.status, stdout: r.stdout, stderr: r.stderr };
  }
  const digest = () => crypto.createHash('sha256').update(fs.readFileSync(file)).digest('hex');
  /** The folder writable by the reader, or not; the file never. */
  function protect(folderWritable: boolean): void {
    for (const f of fs.readdirSync(data)) if (f !== path.basename(file)) fs.rmSync(path.join(data, f));
    fs.chmodSync(file, 0o444);
    fs.chmodSync(data, folderWritable ? 0o755 : 0o555);
  }

  before(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'realmgate-readonly-'));
    data = path.join(dir, 'data');
    file = path.join(data, 'realmgate.db');
    process.env.REALMGATE_KEY_FILE = path.join(dir, 'k.key');
    ok(['realm', 'create', 'r', '--display-name', 'Read Only']);
    ok(['user', 'create', 'r', 'u', '--password', 'password-u1']);
    ok(['org', 'create', 'r', 'o']);
  });
  after(() => {
    if (fs.existsSync(data)) {
      fs.chmodSync(data, 0o755);
    }
    fs.rmSync(dir, { recursive: true, force: true });
    delete process.env.REALMGATE_KEY_FILE;
  });

  test('every read-only command works and writes nothing into the database; a command that changes it says the file is read-only', () => {
    protect(true);
    const before = digest();
    for (const args of READS) {
      const r = runReader(args);
      assert.equal(r.status, 0, `${args.join(' ')}: ${r.stderr}`);
    }
    assert.match(runReader(['realm', 'list']).stdout, /^r\tRead Only$/m);
    assert.match(runReader(['user', 'list', 'r']).stdout, /\bu\b/);
    assert.equal(JSON.parse(runReader(['realm', 'export', 'r']).stdout).realm, 'r');
    const changed = runReader(['realm', 'update', 'r', '--display-name', 'Changed']);
    assert.equal(changed.status, 1);
    assert.match(changed.stderr, new RegExp(`^realmgate: the database ${file.replace(/[.\\/]/g, '\\$&')} is read-only \\(no permission to write it\\), and this command changes it$`, 'm'));
    assert.doesNotMatch(changed.stderr, /\n\s+at\s/);
    assert.equal(digest(), before);
  });

  test('in a read-only folder too, SQLite cannot read it: one line says why, nothing is made', () => {
    protect(false);
    const before = fs.readdirSync(data);
    const r = runReader(['realm', 'list']);
    assert.equal(r.status, 1);
    assert.match(r.stderr, /^realmgate: cannot read the database .* read-only: SQLite must create realmgate\.db-shm beside it to read it, and its folder is read-only too/m);
    assert.equal(r.stderr.trim().split('\n').length, 2, r.stderr);
    assert.deepEqual(fs.readdirSync(data), before);
  });

  test('a read-only file that lacks a migration of this version is refused, not migrated', async () => {
    fs.chmodSync(data, 0o755);
    fs.chmodSync(file, 0o644);
    const db = await openDatabase(url());
    try {
      const last = (await sql<{ name: string }>`select max(name) as name from kysely_migration`.execute(db.kysely)).rows[0]!.name;
      await sql`delete from kysely_migration where name = ${last}`.execute(db.kysely);
    } finally {
      await db.close();
    }
    protect(true);
    const before = digest();
    const r = runReader(['realm', 'list']);
    assert.equal(r.status, 1);
    assert.match(r.stderr, /^realmgate: the database .* is read-only and lacks 1 migration\(s\) of this version \(.+\.\.\.\): run realmgate migrate with permission to write it first$/m);
    assert.equal(digest(), before);
  });

  test('a read-only file a newer Realmgate migrated is refused as migrate refuses it', async () => {
    fs.chmodSync(data, 0o755);
    fs.chmodSync(file, 0o644);
    const db = await openDatabase(url());
    try {
      await sql`insert into kysely_migration (name, timestamp) values ('9999_future', '2099-01-01T00:00:00.000Z')`.execute(db.kysely);
    } finally {
      await db.close();
    }
    protect(true);
    const r = runReader(['user', 'list', 'r']);
    assert.equal(r.status, 1);
    assert.match(r.stderr, /^realmgate: the database was migrated by a newer Realmgate \(its migration 9999_future is unknown to this version\)/m);
    assert.equal(r.stderr.trim().split('\n').length, 2, r.stderr);
  });
});
