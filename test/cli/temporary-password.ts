import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { cliDatabase, cliRunner } from '../helpers/cli.js';
import { dialects } from '../helpers/db.js';
import { openDatabase } from '../../src/storage/database.js';
import { Store } from '../../src/storage/store.js';
import type { RequiredAction } from '../../src/storage/types.js';

// The installed command (npm test builds dist/ first): --temporary on user create and set-password.
for (const dialect of dialects()) {
  describe(`realmgate CLI: temporary passwords (${dialect})`, () => {
    const database = cliDatabase(dialect, 'realmgate-cli-temp-');
    const { ok, fails } = cliRunner(() => database.url);

    async function actionsOf(realm: string, username: string): Promise<RequiredAction[] | undefined> {
      const db = await openDatabase(database.url);
      try {
        return (await new Store(db).users.findByUsername(realm, username))?.requiredActions;
      } finally {
        await db.close();
      }
    }

    test('--help names --temporary on both commands', () => {
      // Commander wraps the text at the terminal's width: compare it on one line.
      const flat = (args: string[]): string => ok(args).replace(/\s+/g, ' ');
      assert.match(flat(['user', 'create', '--help']), /--temporary the password is temporary: the user must choose a new one at the next sign-in/);
      const help = flat(['user', 'set-password', '--help']);
      assert.match(help, /--temporary the password is temporary/);
      assert.match(help, /Without --temporary the password is permanent/);
    });

    test('user create --temporary, set-password without it clears UPDATE_PASSWORD, with it sets it again', async () => {
      ok(['realm', 'create', 'tp']);
      assert.match(ok(['user', 'create', 'tp', 'Tess', '--password-stdin', '--temporary'], 'tess first password\n'), /created user tess in realm tp \(temporary password/);
      assert.deepEqual(await actionsOf('tp', 'tess'), ['UPDATE_PASSWORD']);
      ok(['user', 'create', 'tp', 'perm', '--password-stdin'], 'perm first password\n');
      assert.deepEqual(await actionsOf('tp', 'perm'), []);

      assert.match(ok(['user', 'set-password', 'tp', 'tess', '--password-stdin'], 'tess second password\n'), /^password of tess changed; signed out/);
      assert.deepEqual(await actionsOf('tp', 'tess'), []);
      assert.match(ok(['user', 'set-password', 'tp', 'tess', '--password-stdin', '--temporary'], 'tess third password\n'), /^password of tess changed \(temporary: a new one is asked for at the next sign-in\)/);
      assert.deepEqual(await actionsOf('tp', 'tess'), ['UPDATE_PASSWORD']);
      // The policy still applies, and nothing changes when it refuses.
      fails(['user', 'set-password', 'tp', 'perm', '--password', 'short', '--temporary'], /at least 8 characters/);
      assert.deepEqual(await actionsOf('tp', 'perm'), []);
    });
  });
}
