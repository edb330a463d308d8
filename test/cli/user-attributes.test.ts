import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { cliDatabase, cliRunner } from '../helpers/cli.js';
import { dialects } from '../helpers/db.js';

// `realmgate user create|update --attribute NAME=VALUE`, `--remove-attribute NAME`, and `user list`
// showing them, on the installed command (npm test builds dist/ first).
for (const dialect of dialects()) {
  describe(`realmgate user attributes (${dialect})`, () => {
    const database = cliDatabase(dialect, 'realmgate-user-attributes-');
    const { ok, fails } = cliRunner(() => database.url);
    const line = (username: string): string => ok(['user', 'list', 'shop', '--search', username]).trim();

    test('create with attributes (a name repeated has several values), update one name, remove another; list shows them as JSON', () => {
      ok(['realm', 'create', 'shop']);
      ok(['user', 'create', 'shop', 'bob', '--password-stdin', '--email', 'bob@example.com', '--attribute', 'skills=java', '--attribute', 'skills=go', '--attribute', 'dept=sales', '--attribute', 'note=a=b'], 'bob password 123\n');
      assert.equal(line('bob'), 'bob\tbob@example.com\tenabled\t{"skills":["java","go"],"dept":["sales"],"note":["a=b"]}');
      ok(['user', 'update', 'shop', 'bob', '--attribute', 'dept=support', '--attribute', 'dept=ops', '--remove-attribute', 'note', '--attribute', 'phoneNumber=+1 555']);
      assert.equal(line('bob'), 'bob\tbob@example.com\tenabled\t{"skills":["java","go"],"dept":["support","ops"],"phoneNumber":["+1 555"]}');
      ok(['user', 'update', 'shop', 'bob', '--remove-attribute', 'skills', '--remove-attribute', 'dept', '--remove-attribute', 'phoneNumber']);
      assert.equal(line('bob'), 'bob\tbob@example.com\tenabled');
      // A value a terminal would act on is shown escaped, still JSON.
      ok(['user', 'update', 'shop', 'bob', '--attribute', 'rtl=a\u202eb']);
      assert.equal(line('bob'), 'bob\tbob@example.com\tenabled\t{"rtl":["a\\u202eb"]}');
    });

    test('bad attributes: one line, exit 1, nothing changed', () => {
      const before = line('bob');
      fails(['user', 'update', 'shop', 'bob', '--attribute', 'novalue'], /--attribute takes NAME=VALUE/);
      fails(['user', 'update', 'shop', 'bob', '--attribute', '=x'], /--attribute takes NAME=VALUE/);
      fails(['user', 'update', 'shop', 'bob', '--attribute', 'email=x@example.com'], /email is not an attribute: use --email/);
      fails(['user', 'update', 'shop', 'bob', '--attribute', `long=${'x'.repeat(2049)}`], /at most 2048 characters/);
      fails(['user', 'update', 'shop', 'bob', '--attribute', 'bell=\x07'], /control characters/);
      fails(['user', 'update', 'shop', 'bob', '--attribute', 'a=1', '--remove-attribute', 'a'], /both set and removed/);
      assert.equal(line('bob'), before);
      fails(['user', 'create', 'shop', 'carol', '--password', 'carol password 123', '--attribute', 'firstName=Carol'], /use --first-name/);
      assert.equal(ok(['user', 'list', 'shop', '--search', 'carol']), '');
    });

    test('--help names the options', () => {
      assert.match(ok(['user', 'create', '--help']), /--attribute <name=value>/);
      const help = ok(['user', 'update', '--help']);
      assert.match(help, /--attribute <name=value>/);
      assert.match(help, /--remove-attribute <name>/);
    });
  });
}
