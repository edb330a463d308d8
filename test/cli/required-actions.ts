import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { cliDatabase, cliRunner } from '../helpers/cli.js';
import { dialects } from '../helpers/db.js';

// `realm required-actions|required-action` and `user update --require-profile-update|--require-terms|--require-account-deletion`
// through the installed command (npm run build first).

for (const dialect of dialects()) {
  describe(`realmgate required-action settings and user switches (${dialect})`, () => {
    const database = cliDatabase(dialect, 'realmgate-reqact-');
    const { ok, fails } = cliRunner(() => database.url);

    test('the settings listed and changed; a default action given to a new user; the two switches of user update; refusals in one line', () => {
      ok(['realm', 'create', 'acme']);
      assert.match(ok(['realm', 'required-actions', 'acme']), /^UPDATE_PASSWORD\s+enabled\s+-\s+priority 10/);
      const file = path.join(os.tmpdir(), `realmgate-terms-${process.pid}.txt`);
      writeFileSync(file, 'Be kind.\n\nNo spam.');
      assert.match(ok(['realm', 'required-action', 'acme', 'TERMS_AND_CONDITIONS', '--terms-file', file, '--default-action', 'on', '--priority', '5']), /TERMS_AND_CONDITIONS in realm acme: enabled, default action, priority 5/);
      assert.match(ok(['realm', 'required-actions', 'acme']).split('\n')[0]!, /^TERMS_AND_CONDITIONS\s+enabled\s+default\s+priority 5 .*terms text set/);
      ok(['user', 'create', 'acme', 'ann', '--password-stdin'], 'ann password 123\n');
      // The default action came with the new user.
      assert.match(ok(['user', 'update', 'acme', 'ann', '--first-name', 'Ann']), /updated user ann in realm acme \(required actions: TERMS_AND_CONDITIONS\)/);
      assert.match(ok(['user', 'update', 'acme', 'ann', '--require-terms', 'off', '--require-profile-update', 'on']), /\(required actions: UPDATE_PROFILE\)$/m);
      // delete_account: off until enabled, no config; the user's switch.
      assert.match(ok(['realm', 'required-actions', 'acme']), /^delete_account\s+disabled\s+-\s+priority 80\s+Delete Account$/m);
      fails(['realm', 'required-action', 'acme', 'delete_account', '--max-auth-age', '60'], /config "max_auth_age" not supported: delete_account takes no config/);
      assert.match(ok(['realm', 'required-action', 'acme', 'delete_account', '--enabled', 'on']), /delete_account in realm acme: enabled, priority 80$/m);
      assert.match(ok(['user', 'update', 'acme', 'ann', '--require-account-deletion', 'on']), /\(required actions: UPDATE_PROFILE, delete_account\)$/m);
      assert.match(ok(['user', 'update', 'acme', 'ann', '--require-account-deletion', 'off']), /\(required actions: UPDATE_PROFILE\)$/m);
      fails(['user', 'send-actions-email', 'acme', 'ann', '--action', 'delete_account'], /delete_account cannot be mailed/);
      fails(['realm', 'required-action', 'acme', 'CONFIGURE_RECOVERY_AUTHN_CODES', '--enabled', 'on'], /not one Realmgate acts on/);
      fails(['realm', 'required-action', 'acme', 'UPDATE_PROFILE', '--terms-text', 'x'], /belong to TERMS_AND_CONDITIONS/);
      fails(['realm', 'required-action', 'acme', 'UPDATE_PROFILE', '--enabled', 'off', '--default-action', 'on'], /cannot be a default action/);
      fails(['realm', 'required-action', 'acme', 'UPDATE_PROFILE'], /nothing to change/);
    });

    test('--max-auth-age sets, keeps beside the terms text, and restores the default; a bad value is refused in one line', () => {
      ok(['realm', 'create', 'aged']);
      assert.match(ok(['realm', 'required-action', 'aged', 'UPDATE_PASSWORD', '--max-auth-age', '0']), /UPDATE_PASSWORD in realm aged: enabled, priority 10, max auth age 0 s$/m);
      assert.match(ok(['realm', 'required-actions', 'aged']), /^UPDATE_PASSWORD\s+enabled\s+-\s+priority 10 .*\(max auth age 0 s\)$/m);
      // The terms' two keys: changing one keeps the other.
      ok(['realm', 'required-action', 'aged', 'TERMS_AND_CONDITIONS', '--terms-text', 'Be kind.']);
      ok(['realm', 'required-action', 'aged', 'TERMS_AND_CONDITIONS', '--max-auth-age', '60']);
      assert.match(ok(['realm', 'required-actions', 'aged']), /^TERMS_AND_CONDITIONS .*\(max auth age 60 s\) \(terms text set\)$/m);
      const exported = JSON.parse(ok(['realm', 'export', 'aged'])) as { requiredActions: Array<{ alias: string; config: Record<string, string> }> };
      assert.deepEqual(exported.requiredActions.find((a) => a.alias === 'TERMS_AND_CONDITIONS')?.config, { terms_text: 'Be kind.', max_auth_age: '60' });
      for (const bad of ['-5', 'soon', '2147483648']) fails(['realm', 'required-action', 'aged', 'UPDATE_PASSWORD', '--max-auth-age', bad], /max_auth_age must be a whole number of seconds from 0 to 2147483647/);
      assert.doesNotMatch(ok(['realm', 'required-action', 'aged', 'UPDATE_PASSWORD', '--max-auth-age', 'default']), /max auth age/);
      assert.doesNotMatch(ok(['realm', 'required-actions', 'aged']).split('\n').find((l) => l.startsWith('UPDATE_PASSWORD'))!, /max auth age/);
    });
  });
}
