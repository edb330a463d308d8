import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { spawn } from 'node:child_process';
import type { AddressInfo } from 'node:net';
import { importJWK, jwtVerify, decodeProtectedHeader } from 'jose';
import { BIN, cliDatabase, cliRunner } from '../helpers/cli.js';
import { dialects } from '../helpers/db.js';

// `client create|update --backchannel-logout-url ...` through the installed command (npm run build first).

for (const dialect of dialects()) {
  describe(`realmgate client back-channel logout settings (${dialect})`, () => {
    const database = cliDatabase(dialect, 'realmgate-backchannel-');
    const { run, ok, fails } = cliRunner(() => database.url);

    test('create and update set, show and clear the settings; bad URLs are refused in one line', async () => {
      ok(['realm', 'create', 'acme']);
      ok(['client', 'create', 'acme', 'portal', '--redirect-uri', 'https://portal.example/cb', '--backchannel-logout-url', 'http://portal.internal:8080/logout?via=bc', '--no-backchannel-logout-session-required']);
      let r = run(['client', 'update', 'acme', 'portal', '--name', 'Portal']);
      assert.equal(r.status, 0, r.stderr);
      assert.match(r.stdout, /back-channel:\s+http:\/\/portal\.internal:8080\/logout\?via=bc \(without sid\)\n/);
      r = run(['client', 'update', 'acme', 'portal', '--backchannel-logout-session-required', '--backchannel-logout-revoke-offline-tokens']);
      assert.equal(r.status, 0, r.stderr);
      assert.match(r.stdout, /back-channel:\s+http:\/\/portal\.internal:8080\/logout\?via=bc \(with sid\), revokes offline tokens\n/);
      r = run(['client', 'update', 'acme', 'portal', '--backchannel-logout-url', 'https://portal.example/bc', '--no-backchannel-logout-revoke-offline-tokens']);
      assert.match(r.stdout, /back-channel:\s+https:\/\/portal\.example\/bc \(with sid\)\n/);
      for (const bad of ['https://portal.example/bc#x', 'ftp://portal.example/bc', 'portal/bc', 'https://u:p@portal.example/bc']) {
        fails(['client', 'update', 'acme', 'portal', '--backchannel-logout-url', bad], /back-channel logout URL/);
      }
      fails(['client', 'create', 'acme', 'bad', '--redirect-uri', 'https://bad.example/cb', '--backchannel-logout-url', 'https://bad.example/bc#frag'], /fragment/);
      r = run(['client', 'update', 'acme', 'portal', '--backchannel-logout-url', '']);
      assert.match(r.stdout, /back-channel:\s+\n/);
      const { openDatabase } = await import('../../src/storage/database.js');
      const db = await openDatabase(database.url);
      try {
        const row = await db.kysely.selectFrom('clients').select(['backchannel_logout_url', 'backchannel_logout_session_required', 'backchannel_logout_revoke_offline']).where('client_id', '=', 'portal').executeTakeFirstOrThrow();
        assert.deepEqual({ ...row, backchannel_logout_session_required: Number(row.backchannel_logout_session_required), backchannel_logout_revoke_offline: Number(row.backchannel_logout_revoke_offline) }, { backchannel_logout_url: null, backchannel_logout_session_required: 1, backchannel_logout_revoke_offline: 0 });
      } finally {
        await db.close();
      }
      const help = run(['client', 'update', '--help']).stdout;
      assert.match(help, /--backchannel-logout-url <url>/);
      assert.match(help, /--no-backchannel-logout-session-required/);
      assert.match(run(['client', 'create', '--help']).stdout, /--backchannel-logout-revoke-offline-tokens/);
    });

    test('user logout from the command line sends the logout token itself (the server would never learn of it)', async () => {
      const got: string[] = [];
      const receiver = http.createServer((req, res) => {
        let body = '';
        req.on('data', (d: Buffer) => (body += d.toString()));
        req.on('end', () => {
          got.push(body);
          res.writeHead(204).end();
        });
      });
      await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
      try {
        const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/bc`;
        ok(['client', 'create', 'acme', 'told', '--redirect-uri', 'https://told.example/cb', '--backchannel-logout-url', url]);
        ok(['user', 'create', 'acme', 'ulla', '--password', 'ulla-password-1']);
        // A browser session of ulla's in which the client holds tokens, as a sign-in through a server leaves it.
        const { openDatabase } = await import('../../src/storage/database.js');
        const db = await openDatabase(database.url);
        let userId: string;
        try {
          userId = (await db.kysely.selectFrom('users').select('id').where('username', '=', 'ulla').executeTakeFirstOrThrow()).id;
          const now = Math.floor(Date.now() / 1000);
          await db.kysely.insertInto('browser_sessions').values({ id: 'sess-cli-1', secret_hash: 'h-cli-1', realm_id: 'acme', user_id: userId, auth_time: now, created_at: now, expires_at: now + 3600, ended_at: null }).execute();
          await db.kysely
            .insertInto('refresh_chains')
            .values({ id: 'chain-cli-1', realm_id: 'acme', client_id: 'told', user_id: userId, organization_id: '', scopes: '["openid"]', session_id: 'sess-cli-1', auth_time: now, created_at: now, max_expires_at: now + 86_400, revoked_at: null, revoked_reason: null, current_hash: null, rotated_at: null })
            .execute();
        } finally {
          await db.close();
        }
        // Asynchronously: the receiver runs in this process.
        const r = await new Promise<{ status: number | null; stdout: string; stderr: string }>((resolve) => {
          const child = spawn(process.execPath, [BIN, 'user', 'logout', 'acme', 'ulla'], { env: { ...process.env, DATABASE_URL: database.url, LOG_LEVEL: 'silent' } });
          let stdout = '';
          let stderr = '';
          child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
          child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
          child.on('close', (status) => resolve({ status, stdout, stderr }));
        });
        assert.equal(r.status, 0, r.stderr);
        assert.match(r.stdout, /ended 1 session\(s\)/);
        assert.match(r.stderr, /back-channel logout: 1 client\(s\) told/);
        assert.equal(got.length, 1);
        const token = new URLSearchParams(got[0]).get('logout_token')!;
        const header = decodeProtectedHeader(token);
        assert.equal(header.typ, 'logout+jwt');
        const db2 = await openDatabase(database.url);
        try {
          const key = await db2.kysely.selectFrom('signing_keys').select('public_jwk').where('kid', '=', header.kid!).executeTakeFirstOrThrow();
          const { payload } = await jwtVerify(token, await importJWK(JSON.parse(key.public_jwk), header.alg), { audience: 'told', typ: 'logout+jwt' });
          assert.equal(payload.sid, 'sess-cli-1');
          assert.equal(payload.sub, userId!);
          assert.match(String(payload.iss), /\/auth\/realms\/acme$/);
        } finally {
          await db2.close();
        }
      } finally {
        await new Promise<void>((r) => receiver.close(() => r()));
      }
    });
  });
}
