import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import crypto from 'node:crypto';
import pg from 'pg';
import { Migrator, sql, type MigrationResultSet } from 'kysely';
import { openDatabase, migrate, type Db } from '../../src/storage/database.js';
import { MIGRATIONS } from '../../src/storage/migrations/index.js';
// Realms made in this process take their RSA keys from the run's pool (see there).
import './rsa-pool.js';

export interface TestDatabase {
  name: 'sqlite' | 'postgres';
  url: string;
  db: Db;
  /** Closes the connection and removes the database (file or schema). */
  drop(): Promise<void>;
}

let only: 'sqlite' | 'postgres' | undefined;

/**
 * A long file that runs its tests once per database is split in two: x-sqlite.test.ts and
 * x-postgres.test.ts each name their database here, then import x.ts, whose `dialects()` is that one.
 * Each file then takes half the time, well within the runner's per-file limit on a loaded machine, and
 * the two halves run side by side (scripts/run-tests.mjs). Whether that database is there: the half of
 * PostgreSQL without TEST_DATABASE_URL imports nothing more.
 */
export function onlyDialect(name: 'sqlite' | 'postgres'): boolean {
  only = name;
  return dialects().length > 0;
}

/** SQLite always; PostgreSQL too when TEST_DATABASE_URL is set (CI sets it); only one in half a split file. */
export function dialects(): Array<'sqlite' | 'postgres'> {
  const all: Array<'sqlite' | 'postgres'> = process.env.TEST_DATABASE_URL ? ['sqlite', 'postgres'] : ['sqlite'];
  return only ? all.filter((d) => d === only) : all;
}

/** Whether this file runs the tests that are not per database: not in the PostgreSQL half of a split file. */
export function runsCommonTests(): boolean {
  return only !== 'postgres';
}

/** A fresh, migrated database: a temporary SQLite file, or a new PostgreSQL schema. `waitTimeoutMs`: OpenOptions'. */
export async function createTestDatabase(name: 'sqlite' | 'postgres', opts: { waitTimeoutMs?: number } = {}): Promise<TestDatabase> {
  const wait = opts.waitTimeoutMs === undefined ? {} : { waitTimeoutMs: opts.waitTimeoutMs };
  if (name === 'sqlite') {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'realmgate-test-'));
    const file = path.join(dir, 'test.db');
    fs.copyFileSync(await sqliteTemplate(), file);
    const url = `sqlite:${file}`;
    const db = await openDatabase(url, { synchronous: 'NORMAL', ...wait });
    // Nothing left to apply (the copy holds the template's kysely_migration rows): a check, as at a start.
    await migrate(db);
    return {
      name,
      url,
      db,
      async drop() {
        await db.close();
        fs.rmSync(dir, { recursive: true, force: true });
      },
    };
  }
  const base = process.env.TEST_DATABASE_URL;
  if (!base) throw new Error('TEST_DATABASE_URL is not set');
  const schema = `t_${crypto.randomBytes(6).toString('hex')}`;
  const u = new URL(base);
  u.searchParams.set('schema', schema);
  const url = u.href;
  // The schema exists, committed, before any pooled connection looks for it.
  const template = await templateClone(base);
  const admin = new pg.Client({ connectionString: base });
  await admin.connect();
  try {
    await admin.query('BEGIN');
    const free = await admin.query<{ schema: string }>(
      `DELETE FROM ${SCHEMA_POOL} WHERE schema = (SELECT schema FROM ${SCHEMA_POOL} WHERE template = $1 LIMIT 1 FOR UPDATE SKIP LOCKED) RETURNING schema`,
      [template.name],
    );
    if (free.rows[0]) await admin.query(`ALTER SCHEMA ${free.rows[0].schema} RENAME TO ${schema}`);
    // Checked and emptied here, as it is taken, not only when it was given back: what a pooled schema
    // holds never matters, even one pooled by another run or version of these helpers.
    if (free.rows[0] && (await structureOf(admin, schema)) === template.structure) {
      await admin.query(
        [
          // Every table is emptied, so the foreign keys' triggers need not check each row.
          'SET LOCAL session_replication_role = replica',
          ...template.tables.map((t) => `DELETE FROM ${schema}.${t}`),
          ...template.withRows.map((t) => `INSERT INTO ${schema}.${t} SELECT * FROM ${template.name}.${t}`),
        ].join(';\n'),
      );
    } else {
      if (free.rows[0]) await admin.query(`DROP SCHEMA ${schema} CASCADE`);
      await admin.query(template.script.replaceAll(CLONE, schema));
    }
    reusedFrom.set(schema, free.rows[0]?.schema ?? null);
    await admin.query('COMMIT');
  } finally {
    await admin.end();
  }
  const db = await openDatabase(url, wait);
  // Nothing left to apply (the clone holds the template's kysely_migration rows): a check, as at a start.
  await migrate(db);
  return {
    name,
    url,
    db,
    async drop() {
      await db.close();
      await recycleSchema(base, schema, template);
    },
  };
}

/**
 * SQLite test databases are copies of a file the migrations made once per test process: migrating each
 * new file took ~40 ms quiet (more on a loaded machine), for each of the suite's several hundred servers.
 * The template is closed before it is copied, so its WAL is checkpointed into the file and removed.
 */
let sqliteTemplateFile: Promise<string> | undefined;

function sqliteTemplate(): Promise<string> {
  sqliteTemplateFile ??= (async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'realmgate-template-'));
    process.on('exit', () => fs.rmSync(dir, { recursive: true, force: true }));
    const file = path.join(dir, 'template.db');
    const db = await openDatabase(`sqlite:${file}`, { synchronous: 'NORMAL' });
    try {
      await migrate(db);
    } finally {
      await db.close();
    }
    if (fs.existsSync(`${file}-wal`)) throw new Error(`the SQLite template ${file} kept its WAL after closing`);
    return file;
  })();
  return sqliteTemplateFile;
}

/**
 * PostgreSQL test databases are clones of a template schema that the migrations made once (per set of
 * migrations, for every test process): migrating each new schema took 0.5 s alone and ~0.9 s in a loaded
 * run, under kysely's migration lock, which is one for the whole database, so that the suite's ~250 test
 * databases waited on each other (2026-11-29: 103 of them in test/http and test/admin, 100 s). The clone is
 * one script: the tables (columns, defaults, NOT NULL), then each constraint and index under its own name
 * (down migrations drop them by name), then the template's rows (kysely_migration's). The migrations
 * themselves are still run from scratch by the template, and by the migration tests on their own schemas.
 *
 * A schema a test has dropped is kept for the next test database instead (recycleSchema), which empties it:
 * cloning took ~150 ms of PostgreSQL's CPU and dropping ~50 ms more, emptying a few ms (2026-11-30).
 */
const CLONE = '__realmgate_clone__';
/** The emptied schemas waiting for a test database, with the template they are the same as. */
const SCHEMA_POOL = 'public.realmgate_test_schemas';

interface Template {
  /** The template schema's name (tpl_ and a hash of the migrations). */
  name: string;
  /** The clone's script, with CLONE for the new schema's name. */
  script: string;
  tables: string[];
  /** The tables with rows in the template (kysely's). */
  withRows: string[];
  /** The template's structure, as structureOf says it. */
  structure: string;
}

let clone: Promise<Template> | undefined;

/**
 * What became of the schemas this process's test databases dropped (the pooled name, or null when the
 * schema was dropped), and where each of its test databases came from (a pooled name, or null for a
 * clone): test/storage/test-database-recycle.test.ts follows them.
 */
export const recycled = new Map<string, string | null>();
export const reusedFrom = new Map<string, string | null>();

function templateClone(base: string): Promise<Template> {
  clone ??= makeTemplateClone(base);
  return clone;
}

/**
 * A schema's structure, without its name: every relation, column (type, NOT NULL, default; by position, as
 * a clone has no gaps where the template's migrations dropped a column), constraint, index, trigger (not
 * the foreign keys' internal ones, named by OID) and function in it. Two schemas with the same structure hold the same tables.
 */
async function structureOf(c: pg.Client, schema: string): Promise<string> {
  const { rows } = await c.query<{ s: string | null }>(
    `SELECT string_agg(replace(x, $1 || '.', ''), E'\n' ORDER BY x) AS s FROM (
       SELECT 'r ' || c.relname || ' ' || c.relkind::text AS x FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = $1
       UNION ALL SELECT 'c ' || c.relname || ' ' || row_number() OVER (PARTITION BY c.oid ORDER BY a.attnum) || ' ' || a.attname || ' ' || format_type(a.atttypid, a.atttypmod) || ' ' || a.attnotnull || ' ' || coalesce(pg_get_expr(d.adbin, d.adrelid), '')
         FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid JOIN pg_namespace n ON n.oid = c.relnamespace LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
         WHERE n.nspname = $1 AND a.attnum > 0 AND NOT a.attisdropped
       UNION ALL SELECT 'k ' || k.conname || ' ' || pg_get_constraintdef(k.oid) FROM pg_constraint k JOIN pg_namespace n ON n.oid = k.connamespace WHERE n.nspname = $1
       UNION ALL SELECT 'i ' || indexdef FROM pg_indexes WHERE schemaname = $1
       UNION ALL SELECT 't ' || t.tgname FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = $1 AND NOT t.tgisinternal
       UNION ALL SELECT 'f ' || p.proname FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace WHERE n.nspname = $1
     ) s`,
    [schema],
  );
  return rows[0]?.s ?? '';
}

/**
 * Gives a test's schema back: into the pool, under another name (nothing still connected under the old
 * name finds it), when its structure is still the template's; else dropped (a test that migrated down).
 * createTestDatabase empties it when it takes it.
 */
async function recycleSchema(base: string, schema: string, template: Template): Promise<void> {
  const c = new pg.Client({ connectionString: base });
  await c.connect();
  try {
    if ((await structureOf(c, schema)) !== template.structure) {
      await c.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
      recycled.set(schema, null);
      return;
    }
    const pooled = `p_${crypto.randomBytes(6).toString('hex')}`;
    recycled.set(schema, pooled);
    await c.query(['BEGIN', `ALTER SCHEMA ${schema} RENAME TO ${pooled}`, `INSERT INTO ${SCHEMA_POOL} (schema, template) VALUES ('${pooled}', '${template.name}')`, 'COMMIT'].join(';\n'));
  } finally {
    await c.end();
  }
}

async function makeTemplateClone(base: string): Promise<Template> {
  const id = crypto.createHash('sha256').update(Object.entries(MIGRATIONS).map(([name, m]) => `${name}\n${m.up.toString()}\n${m.down?.toString() ?? ''}`).join('\n')).digest('hex').slice(0, 16);
  const template = `tpl_${id}`;
  const c = new pg.Client({ connectionString: base });
  await c.connect();
  try {
    // One test process makes it; the others wait for it here, then find it.
    await c.query(`SELECT pg_advisory_lock(hashtext('realmgate test template'))`);
    try {
      const found = await c.query(`SELECT 1 FROM pg_namespace WHERE nspname = $1`, [template]);
      if (found.rowCount === 0) {
        // Made under another name and renamed when complete: a template is never seen half made.
        const building = `${template}_${crypto.randomBytes(4).toString('hex')}`;
        await c.query(`CREATE SCHEMA ${building}`);
        const u = new URL(base);
        u.searchParams.set('schema', building);
        const db = await openDatabase(u.href);
        try {
          await migrate(db);
        } finally {
          await db.close();
        }
        await c.query(`ALTER SCHEMA ${building} RENAME TO ${template}`);
      }
      await c.query(`CREATE TABLE IF NOT EXISTS ${SCHEMA_POOL} (schema text PRIMARY KEY, template text NOT NULL, freed_at timestamptz NOT NULL DEFAULT now())`);
      // Schemas pooled by runs of other migrations, idle for an hour (a run of another checkout on the same
      // database may still be taking them until then).
      const stale = await c.query<{ schema: string }>(`DELETE FROM ${SCHEMA_POOL} WHERE template <> $1 AND freed_at < now() - interval '1 hour' RETURNING schema`, [template]);
      for (const { schema } of stale.rows) await c.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    } finally {
      await c.query(`SELECT pg_advisory_unlock(hashtext('realmgate test template'))`);
    }
    const q = async <T>(text: string): Promise<T[]> => (await c.query(text, [template])).rows as T[];
    const tables = await q<{ t: string }>(`SELECT c.relname AS t FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = $1 AND c.relkind = 'r' ORDER BY c.relname`);
    // Primary keys and unique constraints before the foreign keys that reference them.
    const constraints = await q<{ t: string; name: string; def: string }>(
      `SELECT c.relname AS t, k.conname AS name, pg_get_constraintdef(k.oid) AS def FROM pg_constraint k JOIN pg_class c ON c.oid = k.conrelid JOIN pg_namespace n ON n.oid = c.relnamespace
       WHERE n.nspname = $1 AND k.contype IN ('p', 'u', 'c', 'x', 'f') ORDER BY CASE k.contype WHEN 'f' THEN 1 ELSE 0 END, c.relname, k.conname`,
    );
    const indexes = await q<{ def: string }>(
      `SELECT i.indexdef AS def FROM pg_indexes i WHERE i.schemaname = $1 AND NOT EXISTS (SELECT 1 FROM pg_constraint k JOIN pg_namespace n ON n.oid = k.connamespace WHERE n.nspname = $1 AND k.conname = i.indexname) ORDER BY i.indexname`,
    );
    const inTemplate = new RegExp(`\\b${template}\\.`, 'g');
    const local = (def: string): string => def.replace(inTemplate, `${CLONE}.`);
    const withRows: string[] = [];
    for (const { t } of tables) if ((await c.query(`SELECT 1 FROM ${template}.${t} LIMIT 1`)).rowCount) withRows.push(t);
    const script = [
      `CREATE SCHEMA ${CLONE}`,
      ...tables.map(({ t }) => `CREATE TABLE ${CLONE}.${t} (LIKE ${template}.${t} INCLUDING DEFAULTS INCLUDING GENERATED INCLUDING IDENTITY)`),
      ...constraints.map(({ t, name, def }) => `ALTER TABLE ${CLONE}.${t} ADD CONSTRAINT ${name} ${local(def)}`),
      ...indexes.map(({ def }) => local(def)),
      ...withRows.map((t) => `INSERT INTO ${CLONE}.${t} SELECT * FROM ${template}.${t}`),
    ].join(';\n');
    return { name: template, script, tables: tables.map(({ t }) => t), withRows, structure: await structureOf(c, template) };
  } finally {
    await c.end();
  }
}

/** Removes a PostgreSQL schema and everything in it. */
export async function dropSchema(base: string, schema: string): Promise<void> {
  const c = new pg.Client({ connectionString: base });
  await c.connect();
  try {
    await c.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  } finally {
    await c.end();
  }
}

/**
 * A database URL nobody has used or migrated yet, for a server process to start on: a SQLite file in a
 * new directory, or a PostgreSQL schema of its own that the server creates. `drop` removes it.
 */
export function unusedDatabase(dialect: 'sqlite' | 'postgres'): { url: string; drop(): Promise<void> } {
  if (dialect === 'sqlite') {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'realmgate-unused-'));
    return { url: `sqlite:${path.join(dir, 'fresh.db')}`, drop: async () => fs.rmSync(dir, { recursive: true, force: true }) };
  }
  const base = process.env.TEST_DATABASE_URL;
  if (!base) throw new Error('TEST_DATABASE_URL is not set');
  const schema = `u_${crypto.randomBytes(6).toString('hex')}`;
  const u = new URL(base);
  u.searchParams.set('schema', schema);
  return { url: u.href, drop: () => dropSchema(base, schema) };
}

/**
 * Migrates `db` down (or up) to the migration `name`, for tests of an upgrade. Kysely's migrator reads
 * PostgreSQL's catalog across every schema, which fails now and then while another test drops its schema
 * (migrate() in src/storage/database.ts retries for the same reason); each attempt runs in one
 * transaction and changes nothing when it fails, so it is tried again.
 */
export async function migrateTo(db: Db, name: string): Promise<MigrationResultSet> {
  const migrator = new Migrator({ db: db.kysely, provider: { getMigrations: async () => MIGRATIONS }, ...(db.schema ? { migrationTableSchema: db.schema } : {}) });
  return migrating(db, () => migrator.migrateTo(name));
}

/**
 * A kysely migrator's run on a test database, again after a failure as src/storage/database.ts's migrate()
 * does: kysely reads PostgreSQL's catalog across every schema (to find its migration table), which fails
 * ("schema ... does not exist") while another test file drops its schema of the same database; each
 * migration runs in its own transaction, so a failed run left nothing half done.
 */
export async function migrating(db: Db, run: () => Promise<MigrationResultSet>): Promise<MigrationResultSet> {
  for (let attempt = 1; ; attempt++) {
    const result = await run();
    if (!result.error || db.dialect !== 'postgres' || attempt >= 4) return result;
    await new Promise((r) => setTimeout(r, 100 * attempt));
  }
}

/**
 * The test database's own tables and their columns. Kysely's introspection reads PostgreSQL's catalog
 * across every schema and calls pg_get_serial_sequence on each table, which fails ("schema ... does not
 * exist") while another test drops its schema; this reads pg_catalog for this schema only, with no such
 * function, and SQLite's own list.
 */
export async function ownTables(db: Db): Promise<Map<string, string[]>> {
  const rows =
    db.dialect === 'postgres'
      ? (
          await sql<{ table: string; column: string }>`select c.relname as "table", a.attname as "column" from pg_class c
            join pg_namespace n on n.oid = c.relnamespace join pg_attribute a on a.attrelid = c.oid
            where n.nspname = ${db.schema ?? 'public'} and c.relkind = 'r' and a.attnum > 0 and not a.attisdropped order by c.relname, a.attnum`.execute(db.kysely)
        ).rows
      : (
          await sql<{ table: string; column: string }>`select m.name as "table", p.name as "column" from sqlite_master m, pragma_table_info(m.name) p
            where m.type = 'table' and m.name not like 'sqlite_%' order by m.name, p.cid`.execute(db.kysely)
        ).rows;
  const out = new Map<string, string[]>();
  for (const r of rows) out.set(r.table, [...(out.get(r.table) ?? []), r.column]);
  return out;
}
