import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { cliDatabase, cliRunner } from '../helpers/cli.js';
import { dialects } from '../helpers/db.js';

// `realm required-actions|required-action` and `user update --require-profile-update|--require-terms`
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
      fails(['realm', 'required-action', 'acme', 'delete_account', '--enabled', 'on'], /not one Realmgate acts on/);
      fails(['realm', 'required-action', 'acme', 'UPDATE_PROFILE', '--terms-text', 'x'], /belong to TERMS_AND_CONDITIONS/);
      fails(['realm', 'required-action', 'acme', 'UPDATE_PROFILE', '--enabled', 'off', '--default-action', 'on'], /cannot be a default action/);
      fails(['realm', 'required-action', 'acme', 'UPDATE_PROFILE'], /nothing to change/);
    });
  });
}
