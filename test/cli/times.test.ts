import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { cliDatabase, cliRunner } from '../helpers/cli.js';
import { dialects } from '../helpers/db.js';
import { openDatabase } from '../../src/storage/database.js';
import { Store } from '../../src/storage/store.js';

// Times on the command line: seconds since the epoch or ISO 8601, from 1970 to 9999; a realm's
// not-before at most a day ahead (checkNotBefore), refused before anything is written.
for (const dialect of dialects()) {
  describe(`CLI times and the not-before policy (${dialect})`, () => {
    const cli = cliDatabase(dialect, 'realmgate-times-');
    const { run, ok, fails } = cliRunner(() => cli.url);

    async function notBefore(realm: string): Promise<number | undefined> {
      const db = await openDatabase(cli.url);
      try {
        return (await new Store(db).realms.get(realm))?.notBefore;
      } finally {
        await db.close();
      }
    }

    test('revoke-before --at refuses times outside 1970..9999 and more than a day ahead, storing nothing', async () => {
      ok(['realm', 'create', 'acme']);
      fails(['realm', 'revoke-before', 'acme', '--at', '99999999999999'], /--at must be from 1970 to the year 9999/);
      fails(['realm', 'revoke-before', 'acme', '--at', '-1'], /--at takes seconds since the epoch or an ISO 8601 time/);
      fails(['realm', 'revoke-before', 'acme', '--at', 'tomorrow'], /--at takes seconds since the epoch or an ISO 8601 time/);
      fails(['realm', 'revoke-before', 'acme', '--at', '2999-01-01'], /realmgate: the not-before time 2999-01-01T00:00:00\.000Z is more than a day ahead/);
      fails(['realm', 'revoke-before', 'acme', '--at', String(Math.floor(Date.now() / 1000) + 2 * 86_400)], /more than a day ahead/);
      assert.equal(await notBefore('acme'), 0);
      assert.match(ok(['realm', 'revoke-before', 'acme']), /no not-before policy/);
      // In the past, or within a day ahead: accepted, and shown.
      assert.match(ok(['realm', 'revoke-before', 'acme', '--at', '2020-05-01T10:00:00Z']), /issued before 2020-05-01T10:00:00\.000Z are refused \(not-before-policy 1588327200\)/);
      const soon = Math.floor(Date.now() / 1000) + 3600;
      ok(['realm', 'revoke-before', 'acme', '--at', String(soon)]);
      assert.match(ok(['realm', 'revoke-before', 'acme']), new RegExp(`\\(${soon}\\) are refused`));
      ok(['realm', 'revoke-before', 'acme', '--clear']);
    });

    test('a not-before beyond any date stored by an earlier version is shown, and --clear replaces it', async () => {
      const db = await openDatabase(cli.url);
      try {
        await db.kysely.updateTable('realms').set({ not_before: 99_999_999_999_999 }).where('id', '=', 'acme').execute();
      } finally {
        await db.close();
      }
      const r = run(['realm', 'revoke-before', 'acme']);
      assert.equal(r.status, 0, r.stderr);
      assert.match(r.stdout, /not-before-policy 99999999999999 is beyond any date/);
      assert.match(ok(['realm', 'revoke-before', 'acme', '--clear']), /cleared/);
      assert.equal(await notBefore('acme'), 0);
    });

    test('events --since takes the same times', () => {
      fails(['events', 'acme', '--since', '-1'], /--since takes seconds since the epoch or an ISO 8601 time/);
      fails(['events', 'acme', '--since', '99999999999999'], /--since must be from 1970 to the year 9999/);
      assert.match(ok(['events', 'acme', '--since', '2026-01-01']), /^time\ttype/);
      assert.match(ok(['events', 'acme', '--since', '1767225600']), /^time\ttype/);
    });

    test('an imported realm with a notBefore far ahead fails and stores nothing of it', async () => {
      const file = path.join(cli.dir, 'nb.json');
      fs.writeFileSync(file, JSON.stringify({ realm: 'nb', enabled: true, notBefore: 99_999_999_999_999 }));
      const r = run(['realm', 'import', file]);
      assert.equal(r.status, 1, r.stderr);
      assert.match(r.stdout, /realm nb: failed .*not-before time/);
      assert.equal(await notBefore('nb'), undefined);
      fs.writeFileSync(file, JSON.stringify({ realm: 'nb', enabled: true, notBefore: 1_700_000_000 }));
      ok(['realm', 'import', file]);
      assert.equal(await notBefore('nb'), 1_700_000_000);
    });
  });
}
