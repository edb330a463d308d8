import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { cliDatabase, cliRunner } from '../helpers/cli.js';
import { dialects } from '../helpers/db.js';

// The installed command (npm test builds dist/ first): Keycloak's login options set and shown by realm
// create/update/show, and an email another user has refused by user create and user update.
for (const dialect of dialects()) {
  describe(`realmgate CLI: login options (${dialect})`, () => {
    const database = cliDatabase(dialect, 'realmgate-cli-login-options-');
    const { ok, fails } = cliRunner(() => database.url);

    test('--help names the options', () => {
      for (const command of ['create', 'update']) {
        const flat = ok(['realm', command, '--help']).replace(/\s+/g, ' ');
        assert.match(flat, /--login-with-email <on\|off> on: users may sign in with their email/);
        assert.match(flat, /--duplicate-emails <on\|off>/);
        assert.match(flat, /--remember-me <on\|off> on: the login page offers "Remember me"/);
        assert.match(flat, /--remember-me-idle-timeout <s>/);
        assert.match(flat, /--remember-me-max-lifetime <s>/);
      }
    });

    test('realm create/update/show; bad values refused; duplicate emails refused by user create and update', () => {
      ok(['realm', 'create', 'lo']);
      let shown = ok(['realm', 'show', 'lo']);
      assert.match(shown, /^login with email: +on$/m);
      assert.match(shown, /^duplicate emails: +refused$/m);
      assert.match(shown, /^remember me: +off$/m);
      ok(['realm', 'update', 'lo', '--remember-me', 'on', '--remember-me-idle-timeout', '600', '--remember-me-max-lifetime', '7200']);
      assert.match(ok(['realm', 'show', 'lo']), /^remember me: +on \(idle 600 s, at most 7200 s\)$/m);
      fails(['realm', 'update', 'lo', '--remember-me', 'maybe'], /--remember-me takes on or off/, { status: 1 });
      fails(['realm', 'update', 'lo', '--remember-me-max-lifetime', '-5'], /remember-me max lifetime must be a whole number/, { status: 1 });

      ok(['user', 'create', 'lo', 'ana', '--password', 'ana password 1', '--email', 'ana@example.com']);
      fails(['user', 'create', 'lo', 'ann', '--password', 'ann password 1', '--email', 'ANA@example.com'], /^realmgate: User exists with same email$/m, { status: 1 });
      ok(['user', 'create', 'lo', 'ann', '--password', 'ann password 1', '--email', 'ann@example.com']);
      fails(['user', 'update', 'lo', 'ann', '--email', 'ana@example.com'], /User exists with same email/, { status: 1 });

      // Duplicates allowed: login with email goes off (Keycloak); the duplicate is then accepted.
      ok(['realm', 'update', 'lo', '--duplicate-emails', 'on']);
      shown = ok(['realm', 'show', 'lo']);
      assert.match(shown, /^login with email: +off$/m);
      assert.match(shown, /^duplicate emails: +allowed$/m);
      ok(['user', 'update', 'lo', 'ann', '--email', 'ana@example.com']);
      ok(['realm', 'create', 'lo2', '--login-with-email', 'off']);
      assert.match(ok(['realm', 'show', 'lo2']), /^login with email: +off$/m);
    });
  });
}
