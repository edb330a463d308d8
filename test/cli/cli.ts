import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { cliDatabase, cliRunner, BIN } from '../helpers/cli.js';
import { dialects, runsCommonTests } from '../helpers/db.js';

// The installed command (npm test builds dist/ first, as `npm install` does).

for (const dialect of dialects()) {
  describe(`realmgate CLI (${dialect})`, () => {
    const database = cliDatabase(dialect, 'realmgate-cli-');
    const { run, ok, fails } = cliRunner(() => database.url);

    test('realm update sets the refresh grace and the stored event types', async () => {
      ok(['realm', 'create', 'grace']);
      ok(['realm', 'update', 'grace', '--refresh-grace-seconds', '30', '--refresh-grace-max', '2', '--stored-events', 'REFRESH_TOKEN, LOGOUT']);
      const { openDatabase } = await import('../../src/storage/database.js');
      const { Store } = await import('../../src/storage/store.js');
      const db = await openDatabase(database.url);
      try {
        const realm = await new Store(db).realms.get('grace');
        assert.deepEqual([realm?.refreshGraceSeconds, realm?.refreshGraceMax, realm?.storedEventTypes], [30, 2, ['REFRESH_TOKEN', 'LOGOUT']]);
      } finally {
        await db.close();
      }
      ok(['realm', 'update', 'grace', '--stored-events', 'none']);
    });

    test("realm update sets the realm's events and admin events retention in days, or back to the server's; export writes them as Keycloak does", async () => {
      ok(['realm', 'create', 'kept']);
      ok(['realm', 'update', 'kept', '--events-retention-days', '30', '--admin-events-retention-days', '2555']);
      const rep = JSON.parse(ok(['realm', 'export', 'kept'])) as { eventsExpiration?: number; attributes?: Record<string, string> };
      assert.equal(rep.eventsExpiration, 30 * 86_400);
      assert.equal(rep.attributes?.adminEventsExpiration, String(2555 * 86_400));
      fails(['realm', 'update', 'kept', '--events-retention-days', '0'], /events retention must be from 1 to 7305/);
      fails(['realm', 'update', 'kept', '--admin-events-retention-days', 'forever'], /admin events retention must be a whole number/);
      ok(['realm', 'update', 'kept', '--events-retention-days', 'default']);
      const back = JSON.parse(ok(['realm', 'export', 'kept'])) as { eventsExpiration?: number; attributes?: Record<string, string> };
      assert.equal(back.eventsExpiration, undefined);
      assert.equal(back.attributes?.adminEventsExpiration, String(2555 * 86_400));
    });

    test('display names and organization names refuse control characters; the lists show stored ones escaped', async () => {
      ok(['realm', 'create', 'ctl']);
      fails(['realm', 'update', 'ctl', '--display-name', 'a\x1b[31mRED\nline2'], /the display name must not contain control characters/);
      fails(['realm', 'create', 'ctl2', '--display-name', 'bell\x07'], /the display name must not contain control characters/);
      ok(['org', 'create', 'ctl', 'sales']);
      fails(['org', 'update', 'ctl', 'sales', '--name', 'n\x1b[2J\x01'], /the organization name must not contain control characters/);
      fails(['org', 'create', 'ctl', 'ops', '--description', 'clear\x1b[2J'], /the description must not contain control characters/);
      // A description may run over several lines.
      ok(['org', 'create', 'ctl', 'ops', '--description', 'two\nlines']);
      // Stored before the rule (or by hand): printed escaped, never raw.
      const { openDatabase } = await import('../../src/storage/database.js');
      const { Store } = await import('../../src/storage/store.js');
      const db = await openDatabase(database.url);
      try {
        const store = new Store(db);
        await store.realms.update('ctl', { displayName: 'a\x1b[31mRED\nline2' });
        const org = (await store.organizations.findByAlias('ctl', 'sales'))!;
        await store.organizationAdmin.update(org.id, 'ctl', { name: 'n\x1b[2J\x01' });
      } finally {
        await db.close();
      }
      const realms = ok(['realm', 'list']);
      assert.match(realms, /^ctl\ta\\x1b\[31mRED\\nline2$/m);
      const orgs = ok(['org', 'list', 'ctl']);
      assert.match(orgs, /^sales\tn\\x1b\[2J\\x01\tenabled\t$/m);
      for (const out of [realms, orgs]) assert.doesNotMatch(out, /[\x00-\x08\x0b-\x1f]/);
    });

    test('realm settings: messages name the right unit and range; an idle lifetime longer than the chain maximum is refused', () => {
      ok(['realm', 'create', 'lifetimes']);
      fails(['realm', 'update', 'lifetimes', '--max-login-failures', '0'], /^realmgate: the number of login failures must be a whole number from 1 to 1000$/m);
      fails(['realm', 'update', 'lifetimes', '--access-token-lifetime', '9007199254740993'], /access token lifetime is too large: 9007199254740993 is above 9007199254740991/);
      fails(['realm', 'create', 'lifetimes2', '--refresh-idle-lifetime', '100', '--refresh-max-lifetime', '50'], /the refresh idle lifetime \(100 s\) must not be longer than the refresh chain maximum \(50 s\)/);
      fails(['realm', 'update', 'lifetimes', '--refresh-max-lifetime', '50'], /the refresh idle lifetime \(15552000 s\) must not be longer than the refresh chain maximum \(50 s\)/);
      ok(['realm', 'update', 'lifetimes', '--refresh-idle-lifetime', '50', '--refresh-max-lifetime', '50']);
      fails(['realm', 'update', 'lifetimes', '--refresh-idle-lifetime', '51'], /\(51 s\) must not be longer than the refresh chain maximum \(50 s\)/);
    });

    test('--help lists the commands', () => {
      const r = run(['--help']);
      assert.equal(r.status, 0);
      for (const c of ['start', 'realm', 'org', 'user', 'client']) assert.match(r.stdout, new RegExp(`\\b${c}\\b`));
      // What a script can tell apart: a refused command from a database that is busy or away.
      assert.match(r.stdout, /^Exit status: 0 done; 1 refused \(the error in one line\); 75 the database is busy or cannot be reached \(try again\)\.$/m);
    });

    test("a command loads its own database's driver only, neither Node.js's fetch (undici) nor http2, and leaves no navigator behind", () => {
      // pg 8 probes a global Response as it loads (a Cloudflare Worker test): without a navigator, on
      // Node.js 20, that loaded fetch, http, http2 and tls, ~20 ms of every command and ~3.5 MB of a server
      // on PostgreSQL (src/storage/dialects/postgres.ts, loadPg).
      const probe = path.join(database.dir, 'probe.cjs');
      fs.writeFileSync(
        probe,
        `process.on('exit', () => process.stderr.write('probe ' + JSON.stringify({
          loaded: process.moduleLoadList.filter((m) => /undici|http2/.test(m)),
          navigator: typeof globalThis.navigator,
          drivers: ['better-sqlite3', 'pg'].filter((d) => Object.keys(require.cache).some((f) => f.includes('/node_modules/' + d + '/'))),
        }) + '\\n'));`,
      );
      const r = spawnSync(process.execPath, ['--require', probe, BIN, 'realm', 'list'], { env: { ...process.env, DATABASE_URL: database.url, LOG_LEVEL: 'silent' }, encoding: 'utf8' });
      assert.equal(r.status, 0, r.stderr);
      const line = /^probe (.*)$/m.exec(r.stderr);
      assert.ok(line, r.stderr);
      const nativeNavigator = Number(process.versions.node.split('.')[0]) >= 21;
      assert.deepEqual(JSON.parse(line[1]!), { loaded: [], navigator: nativeNavigator ? 'object' : 'undefined', drivers: [dialect === 'sqlite' ? 'better-sqlite3' : 'pg'] });
    });

    test('--version and -V print the version of package.json, the one the admin API reports, and exit 0', () => {
      const pkg = JSON.parse(fs.readFileSync(path.resolve('package.json'), 'utf8')) as { version: string };
      for (const flag of ['--version', '-V']) {
        const r = run([flag]);
        assert.equal(r.status, 0, r.stderr);
        assert.equal(r.stdout, `${pkg.version}\n`);
      }
      assert.match(run(['--help']).stdout, /-V, --version +print Realmgate's version and exit/);
    });

  });
}

if (runsCommonTests()) describe('realmgate start', () => {
  async function startAndRead(args: string[], env: Record<string, string>, until: RegExp): Promise<{ out: string; stop: () => Promise<void> }> {
    const child = spawn(process.execPath, [BIN, 'start', '--port', '0', ...args], { env: { ...process.env, ...env, LOG_LEVEL: 'warn' } });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    const deadline = Date.now() + 30_000;
    while (!until.test(out)) {
      if (Date.now() > deadline || child.exitCode !== null) throw new Error(`server did not start:\n${out}`);
      await new Promise((r) => setTimeout(r, 50));
    }
    return {
      out,
      stop: () =>
        new Promise<void>((resolve) => {
          child.on('exit', () => resolve());
          child.kill('SIGTERM');
        }),
    };
  }

  test('--demo on an empty database creates the demo realm and prints credentials and an authorization URL', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'realmgate-cli-'));
    try {
      const env = { DATABASE_URL: `sqlite:${path.join(dir, 'demo.db')}` };
      const first = await startAndRead(['--demo'], env, /listening on (http:\/\/\S+)/);
      const url = /listening on (http:\/\/\S+)/.exec(first.out)![1]!;
      assert.match(first.out, /user:\s+demo \/ \S+/);
      assert.match(first.out, /client:\s+demo-app \/ \S+/);
      const authUrl = /(http:\/\/\S+\/auth\/realms\/demo\/protocol\/openid-connect\/auth\?\S+)/.exec(first.out)?.[1];
      assert.ok(authUrl);
      const disc = await fetch(`${url}/auth/realms/demo/.well-known/openid-configuration`);
      assert.equal(disc.status, 200);
      const page = await fetch(authUrl.replace(/^http:\/\/localhost:\d+/, url), { redirect: 'manual' });
      assert.equal(page.status, 303);
      await first.stop();
      // A second start finds the realm and creates nothing new; it runs on another port, and the URL it
      // prints still works (the demo client's redirect URI follows the server's address).
      const second = await startAndRead(['--demo'], { ...env, AUTH_URL: 'http://127.0.0.1:8099' }, /listening on (http:\/\/\S+)/);
      assert.match(second.out, /already exists/);
      assert.match(second.out, /npx realmgate user set-password/);
      const url2 = /listening on (http:\/\/\S+)/.exec(second.out)![1]!;
      const authUrl2 = /(http:\/\/\S+\/auth\/realms\/demo\/protocol\/openid-connect\/auth\?\S+)/.exec(second.out)![1]!;
      assert.match(authUrl2, /^http:\/\/127\.0\.0\.1:8099\//);
      const page2 = await fetch(authUrl2.replace(/^http:\/\/127\.0\.0\.1:8099/, url2), { redirect: 'manual' });
      assert.equal(page2.status, 303, 'the printed authorization URL is accepted');
      await second.stop();
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  test('without --demo nothing is created', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'realmgate-cli-'));
    try {
      const env = { DATABASE_URL: `sqlite:${path.join(dir, 'plain.db')}` };
      const s = await startAndRead([], env, /listening on (http:\/\/\S+)/);
      const url = /listening on (http:\/\/\S+)/.exec(s.out)![1]!;
      assert.equal((await fetch(`${url}/auth/realms/demo/.well-known/openid-configuration`)).status, 404);
      assert.equal((await fetch(`${url}/health/ready`)).status, 200);
      await s.stop();
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
