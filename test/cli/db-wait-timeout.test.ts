import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { cliDatabase, cliRunner } from '../helpers/cli.js';
import { dialects } from '../helpers/db.js';

// REALMGATE_DB_WAIT_TIMEOUT_MS (docs/operations.md, When the database is busy): a value that is not an
// integer in range stops every command before it opens the database, in one line with exit status 1.
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
  });
}
