import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import Database from 'better-sqlite3';
import pg from 'pg';
import { parsePostgresUrl } from '../../src/storage/dialects/postgres.js';
import { cliDatabase, cliRunner } from '../helpers/cli.js';
import { dialects } from '../helpers/db.js';

// REALMGATE_DB_WAIT_TIMEOUT_MS (docs/operations.md, When the database is busy): a value that is not an
// integer in range stops every command before it opens the database, in one line with exit status 1; a
// command that waits past it for another process's lock says the database is busy, exit status 75.
for (const dialect of dialects()) {
  describe(`REALMGATE_DB_WAIT_TIMEOUT_MS (${dialect})`, () => {
    const database = cliDatabase(dialect, 'realmgate-db-wait-');
    const { ok, fails } = cliRunner(() => database.url);

    test('a bad value is refused in one line, exit status 1; a good one is accepted', () => {
      try {
        for (const bad of ['5s', '50']) {
          process.env.REALMGATE_DB_WAIT_TIMEOUT_MS = bad;
          fails(['migrate'], /^realmgate: REALMGATE_DB_WAIT_TIMEOUT_MS must be an integer from 100 to 600000$/m, { status: 1 });
        }
        process.env.REALMGATE_DB_WAIT_TIMEOUT_MS = '2000';
        assert.match(ok(['migrate']), /database is up to date/);
      } finally {
        delete process.env.REALMGATE_DB_WAIT_TIMEOUT_MS;
      }
    });

    /** Another process holding what `org create` needs: SQLite's write lock; PostgreSQL's realm row (the organization's foreign key waits for it). */
    async function holdLock(): Promise<() => Promise<void>> {
      if (dialect === 'sqlite') {
        const other = new Database(database.url.slice('sqlite:'.length));
        other.exec('BEGIN IMMEDIATE');
        return async () => {
          other.exec('ROLLBACK');
          other.close();
        };
      }
      const { connectionString, schema } = parsePostgresUrl(database.url);
      const other = new pg.Client({ connectionString, options: `-c search_path=${schema}` });
      await other.connect();
      await other.query('BEGIN');
      await other.query("SELECT id FROM realms WHERE id = 'busy' FOR UPDATE");
      return async () => {
        await other.query('ROLLBACK');
        await other.end();
      };
    }

    test('a busy database: a command that writes says so in one line, exit status 75 (EX_TEMPFAIL), and works once it is free; one that only reads is not held up', async () => {
      ok(['realm', 'create', 'busy']);
      const release = await holdLock();
      try {
        process.env.REALMGATE_DB_WAIT_TIMEOUT_MS = '300';
        fails(['org', 'create', 'busy', 'acme'], /^realmgate: the database is busy \(.+\): another process or transaction holds what this command needs, and it waited REALMGATE_DB_WAIT_TIMEOUT_MS \(300 ms\); try again$/m, { status: 75 });
        // Opening the database migrates it only when a migration is missing: an up-to-date one is only read.
        assert.match(ok(['realm', 'list']), /^busy\b/m);
        assert.match(ok(['migrate']), /database is up to date/);
      } finally {
        delete process.env.REALMGATE_DB_WAIT_TIMEOUT_MS;
        await release();
      }
      ok(['org', 'create', 'busy', 'acme']);
      assert.match(ok(['org', 'list', 'busy']), /acme/);
    });
  });
}
