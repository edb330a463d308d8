import { describe, test, before } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { cliDatabase, cliRunner } from '../helpers/cli.js';
import { dialects } from '../helpers/db.js';

// The files `realm export` writes and `realm import` reads: an export with secrets is 0600 whatever was
// there; only regular files and folders are read; a file that is not JSON is not quoted.
for (const dialect of dialects()) {
  describe(`realm export and import files (${dialect})`, () => {
    const cli = cliDatabase(dialect, 'realmgate-files-');
    const { run, ok, fails } = cliRunner(() => cli.url);
    before(() => {
      ok(['realm', 'create', 'acme']);
      ok(['user', 'create', 'acme', 'alice', '--password', 'alice-password']);
    });

    test('export --with-secrets into an existing 0644 file leaves it 0600, with the whole export', () => {
      const file = path.join(cli.dir, 'existing.json');
      fs.writeFileSync(file, 'old content that is much longer than nothing'.repeat(1000), { mode: 0o644 });
      fs.chmodSync(file, 0o644);
      ok(['realm', 'export', 'acme', '--with-secrets', '--file', file]);
      assert.equal(fs.statSync(file).mode & 0o777, 0o600);
      const rep = JSON.parse(fs.readFileSync(file, 'utf8')) as { realm: string; users: Array<{ credentials?: unknown[] }> };
      assert.equal(rep.realm, 'acme');
      assert.ok(rep.users[0]!.credentials!.length > 0);
      assert.deepEqual(fs.readdirSync(cli.dir).filter((n) => n.endsWith('.tmp')), []);
      // Without secrets an existing file keeps its mode; a new one is 0644.
      fs.chmodSync(file, 0o640);
      ok(['realm', 'export', 'acme', '--file', file]);
      assert.equal(fs.statSync(file).mode & 0o777, 0o640);
    });

    test("export --file '' is an error, not standard output; a --file that is not a regular file is refused", () => {
      const r = run(['realm', 'export', 'acme', '--file', '']);
      assert.equal(r.stdout, '');
      fails(['realm', 'export', 'acme', '--file', ''], /--file needs a file name/);
      fails(['realm', 'export', 'acme', '--with-secrets', '--file', cli.dir], /is not a regular file/);
    });

    test('import refuses a FIFO, and a FIFO inside an export folder, without waiting on it', () => {
      const fifo = path.join(cli.dir, 'fifo.json');
      execFileSync('mkfifo', [fifo]);
      fails(['realm', 'import', fifo], /fifo\.json is not a regular file/);
      const folder = path.join(cli.dir, 'export');
      fs.mkdirSync(folder);
      fs.writeFileSync(path.join(folder, 'dd-realm.json'), JSON.stringify({ realm: 'dd' }));
      execFileSync('mkfifo', [path.join(folder, 'dd-users-0.json')]);
      fails(['realm', 'import', folder], /dd-users-0\.json is not a regular file/);
      assert.doesNotMatch(ok(['realm', 'list']), /\bdd\b/);
    });

    test('a file that is not JSON: the message says where, never what the file holds', () => {
      const file = path.join(cli.dir, 'shadow');
      fs.writeFileSync(file, 'root:$6$SECRETHASHSECRETHASH:19000:0:99999:7:::\n');
      fails(['realm', 'import', file], /shadow is not valid JSON: it does not parse as JSON$/m);
      assert.doesNotMatch(run(['realm', 'import', file]).stderr, /root|SECRET/);
      fs.writeFileSync(file, '{"realm": "x",\n "secret": SECRETHASH}');
      const r = run(['realm', 'import', file]);
      assert.equal(r.status, 1);
      assert.doesNotMatch(r.stderr, /SECRET|"realm"/);
      assert.match(r.stderr, /s(hadow)? is not valid JSON: /);
    });
  });
}
