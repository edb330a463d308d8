import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import KcAdminClient from '@keycloak/keycloak-admin-client';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { dialects, runsCommonTests, createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { openDatabase } from '../../src/storage/database.js';
import { Store } from '../../src/storage/store.js';

const BIN = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../bin/realmgate.js');

for (const dialect of dialects()) {
  describe(`realmgate CLI: lifecycle and bootstrap (${dialect})`, () => {
    let tdb: TestDatabase;
    before(async () => {
      tdb = await createTestDatabase(dialect);
      await tdb.db.close();
    });
    after(async () => {
      tdb.db = await openDatabase(tdb.url);
      await tdb.drop();
    });

    function run(args: string[], input = '', env: Record<string, string> = {}): { status: number | null; stdout: string; stderr: string } {
      const r = spawnSync(process.execPath, [BIN, ...args], { env: { ...process.env, DATABASE_URL: tdb.url, LOG_LEVEL: 'silent', ...env }, input, encoding: 'utf8', timeout: 30_000 });
      return { status: r.status, stdout: r.stdout, stderr: r.stderr };
    }

    function ok(args: string[], input?: string, env?: Record<string, string>): string {
      const r = run(args, input, env);
      assert.equal(r.status, 0, `${args.join(' ')}: ${r.stderr}`);
      return r.stdout;
    }

    async function withStore<T>(fn: (s: Store) => Promise<T>): Promise<T> {
      const db = await openDatabase(tdb.url);
      try {
        return await fn(new Store(db));
      } finally {
        await db.close();
      }
    }

    test('every command names the database it opened, on one stderr line', () => {
      const r = run(['realm', 'list']);
      assert.equal(r.status, 0);
      const shown = tdb.url.startsWith('sqlite:') ? tdb.url : tdb.url.replace(/\/\/[^@/]*@/, '//***@');
      assert.equal(r.stderr, `realmgate: database ${shown}\n`);
    });

    test('list commands of an unknown realm exit 1', () => {
      for (const args of [['client', 'list', 'nope'], ['user', 'list', 'nope'], ['admin-events', 'nope'], ['org', 'list', 'nope'], ['events', 'nope'], ['keys', 'list', 'nope']]) {
        const r = run(args);
        assert.equal(r.status, 1, args.join(' '));
        assert.match(r.stderr, /realm nope does not exist/);
      }
    });

    test('bootstrap-admin creates master, admin-cli and the admin once', async () => {
      assert.match(ok(['bootstrap-admin', '--username', 'Root', '--password-stdin'], 'root password 1\n'), /created admin root in realm master/);
      assert.match(ok(['bootstrap-admin', '--password-stdin'], 'another password\n'), /already has an administrator/);
      await withStore(async (s) => {
        const cli = await s.clients.get('master', 'admin-cli');
        assert.equal(cli?.public, true);
        assert.equal(cli?.directAccessGrantsEnabled, true);
        const root = await s.users.findByUsername('master', 'root');
        assert.deepEqual((await s.roles.userRoles(root!.id)).realm.sort(), ['admin', 'create-realm']);
        const events = await s.adminEvents.list('master');
        assert.ok(events.some((e) => e.via === 'cli' && e.resourceType === 'REALM_ROLE_MAPPING'));
      });
    });

    test('realm disable, enable, delete; client disable, enable, rotate-secret, delete; each an admin event', async () => {
      ok(['realm', 'create', 'shop']);
      ok(['client', 'create', 'shop', 'robot', '--no-standard-flow', '--service-account']);
      ok(['client', 'create', 'shop', 'web', '--redirect-uri', 'https://shop.example.com/cb', '--require-pkce']);
      let out = ok(['client', 'update', 'shop', 'web', '--password-grant', 'on']);
      assert.match(out, /flows:\s+code password/);
      assert.match(out, /PKCE:\s+required/);
      ok(['client', 'disable', 'shop', 'web']);
      await withStore(async (s) => assert.equal((await s.clients.get('shop', 'web'))?.enabled, false));
      ok(['client', 'enable', 'shop', 'web']);
      const before = await withStore(async (s) => (await s.clients.get('shop', 'robot'))!.secretHash);
      out = ok(['client', 'rotate-secret', 'shop', 'robot']);
      assert.match(out, /new client secret of robot \(shown only now\): [A-Za-z0-9_-]{43}/);
      await withStore(async (s) => assert.notEqual((await s.clients.get('shop', 'robot'))!.secretHash, before));
      assert.match(out, /the old secret is refused from now on/);
      // --keep-previous: the secret just replaced stays valid beside the new one until the time printed.
      const current = await withStore(async (s) => (await s.clients.get('shop', 'robot'))!.secretHash);
      out = ok(['client', 'rotate-secret', 'shop', 'robot', '--keep-previous', '2h']);
      const until = Date.parse(/the old secret is still accepted until (\S+):/.exec(out)![1]!) / 1000;
      assert.ok(Math.abs(until - (Date.now() / 1000 + 7200)) < 60, out);
      await withStore(async (s) => assert.deepEqual((await s.clients.get('shop', 'robot'))!.rotatedSecret, { hash: current, expiresAt: until }));
      for (const bad of ['31d', 'soon', '-5', '1w']) {
        const r = run(['client', 'rotate-secret', 'shop', 'robot', '--keep-previous', bad]);
        assert.equal(r.status, 1, bad);
        assert.match(r.stderr, /previous secret|not a duration/, bad);
      }
      await withStore(async (s) => assert.equal((await s.clients.get('shop', 'robot'))!.rotatedSecret?.hash, current, 'a refused rotation changes nothing'));
      assert.match(ok(['client', 'invalidate-previous-secret', 'shop', 'robot']), /previous secret of robot is refused from now on/);
      await withStore(async (s) => assert.equal((await s.clients.get('shop', 'robot'))!.rotatedSecret, null));
      assert.match(ok(['client', 'invalidate-previous-secret', 'shop', 'robot']), /had no previous secret still valid/);
      assert.equal(run(['client', 'delete', 'shop', 'web']).status, 1);
      ok(['client', 'delete', 'shop', 'web', '--yes']);
      assert.equal(run(['client', 'rotate-secret', 'shop', 'web']).status, 1);
      ok(['realm', 'disable', 'shop']);
      await withStore(async (s) => {
        assert.equal((await s.realms.get('shop'))?.enabled, false);
        const ops = (await s.adminEvents.list('shop')).map((e) => `${e.operation} ${e.resourceType} ${e.resourcePath}`);
        for (const expected of ['UPDATE REALM ', 'DELETE CLIENT clients/web', 'ACTION CLIENT clients/robot/client-secret', 'CREATE CLIENT clients/robot']) assert.ok(ops.includes(expected), `${expected} in ${ops.join('; ')}`);
      });
      const listed = ok(['admin-events', 'shop']).trim().split('\n');
      assert.match(listed[0]!, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z\tUPDATE\tREALM\t-\tcli:\S+\t-\t-\tcli$/);
      assert.ok(listed.some((l) => l.includes('\tACTION\tCLIENT\tclients/robot/client-secret\t')));
      ok(['realm', 'enable', 'shop']);
      assert.equal(run(['realm', 'delete', 'shop']).status, 1);
      ok(['realm', 'delete', 'shop', '--yes']);
      assert.doesNotMatch(ok(['realm', 'list']), /shop/);
      assert.equal(run(['realm', 'delete', 'master', '--yes']).status, 1);
    });
  });
}

if (runsCommonTests()) describe('realmgate start with a bootstrap admin', () => {
  test('REALMGATE_BOOTSTRAP_ADMIN_* create the admin at start; keycloak-admin-client logs in and works', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'realmgate-bootstrap-'));
    const port = await new Promise<number>((resolve) => {
      const srv = net.createServer().listen(0, '127.0.0.1', () => {
        const p = (srv.address() as net.AddressInfo).port;
        srv.close(() => resolve(p));
      });
    });
    const url = `http://127.0.0.1:${port}`;
    const env = {
      ...process.env,
      DATABASE_URL: `sqlite:${path.join(dir, 'rg.db')}`,
      PORT: String(port),
      AUTH_URL: url,
      LOG_LEVEL: 'warn',
      REALMGATE_BOOTSTRAP_ADMIN_USERNAME: 'boss',
      REALMGATE_BOOTSTRAP_ADMIN_PASSWORD: 'boss password 1',
    };
    const child = spawn(process.execPath, [BIN, 'start'], { env });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    try {
      const deadline = Date.now() + 30_000;
      while (!/listening on/.test(out)) {
        if (Date.now() > deadline || child.exitCode !== null) throw new Error(`server did not start:\n${out}`);
        await new Promise((r) => setTimeout(r, 50));
      }
      assert.match(out, /realmgate: database sqlite:/);
      assert.match(out, /bootstrap admin/);
      const kc = new KcAdminClient({ baseUrl: `${url}/auth`, realmName: 'master' });
      await kc.auth({ username: 'boss', password: 'boss password 1', grantType: 'password', clientId: 'admin-cli' });
      await kc.realms.create({ realm: 'fresh' });
      assert.ok((await kc.realms.find()).some((r) => r.realm === 'fresh'));
    } finally {
      await new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.on('exit', () => resolve());
        child.kill('SIGTERM');
      });
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
