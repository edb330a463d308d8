import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { cliDatabase, cliRunner } from '../helpers/cli.js';
import { dialects } from '../helpers/db.js';

// The installed command (npm test builds dist/ first): a realm's password policy set and shown, and
// every command that sets a password refusing what it forbids, in one line, exit 1.
for (const dialect of dialects()) {
  describe(`realmgate CLI: password policy (${dialect})`, () => {
    const database = cliDatabase(dialect, 'realmgate-cli-policy-');
    const { ok, fails } = cliRunner(() => database.url);

    test('--help names --password-policy and the policies supported', () => {
      const flat = ok(['realm', 'update', '--help']).replace(/\s+/g, ' ');
      assert.match(flat, /--password-policy <policy> Keycloak's password policy/);
      assert.match(flat, /supported: length, maxLength, digits, lowerCase, upperCase, specialChars, notUsername, notEmail, notContainsUsername, regexPattern, passwordHistory, forceExpiredPasswordChange/);
      assert.match(ok(['realm', '--help']).replace(/\s+/g, ' '), /show \[options\] <realm>|show <realm>/);
    });

    test('realm update --password-policy, realm show; unsupported or bad policies refused; user create and set-password enforce it', () => {
      ok(['realm', 'create', 'pp']);
      assert.match(ok(['realm', 'show', 'pp']), /^password policy: +none \(Realmgate: 8 to 1024 characters\)$/m);
      ok(['realm', 'update', 'pp', '--password-policy', 'length(12) and  digits and upperCase(1) and notUsername(undefined)']);
      const shown = ok(['realm', 'show', 'pp']);
      assert.match(shown, /^password policy: +length\(12\) and digits\(1\) and upperCase\(1\) and notUsername$/m);
      assert.match(shown, /^passwords: +At least 12 characters, with at least 1 digit and 1 upper-case letter\. Not your username\.$/m);
      fails(['realm', 'update', 'pp', '--password-policy', 'length(12) and hashAlgorithm(pbkdf2-sha512)'], /hashAlgorithm: not supported: Realmgate hashes every password with argon2id/, { status: 1 });
      fails(['realm', 'update', 'pp', '--password-policy', 'passwordBlacklist(list.txt)'], /passwordBlacklist: not supported: the list is a file on Keycloak's server/, { status: 1 });
      fails(['realm', 'update', 'pp', '--password-policy', 'length(12'], /closing parenthesis/, { status: 1 });
      assert.match(ok(['realm', 'show', 'pp']), /^password policy: +length\(12\) and digits\(1\)/m, 'unchanged');

      fails(['user', 'create', 'pp', 'ines', '--password', 'short1A'], /^realmgate: the password must have at least 12 characters$/m, { status: 1 });
      fails(['user', 'create', 'pp', 'ines', '--password', 'long enough password'], /the password must contain at least 1 digit and contain at least 1 upper-case letter/, { status: 1 });
      ok(['user', 'create', 'pp', 'ines', '--password-stdin'], 'Ines password 1\n');
      fails(['user', 'set-password', 'pp', 'ines', '--password', 'Ines2'], /the password must have at least 12 characters/, { status: 1 });
      assert.match(ok(['user', 'set-password', 'pp', 'ines', '--password-stdin'], 'Ines password 2\n'), /^password of ines changed/);

      ok(['realm', 'update', 'pp', '--password-policy', 'none']);
      assert.match(ok(['realm', 'show', 'pp']), /^password policy: +none/m);
      fails(['user', 'set-password', 'pp', 'ines', '--password', 'short'], /at least 8 characters/, { status: 1 });
    });
  });
}
