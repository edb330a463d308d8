/**
 * The embedded database's disk full: every write is refused by SQLite (SQLITE_FULL). The server must
 * answer 503 with Retry-After in the protocol's form (it answered 500 with a stack trace logged per
 * request, thousands of lines filling the disk further), lose nothing (the refused refresh token still
 * works), keep the file intact, and serve again as soon as space is freed, without a restart. The disk
 * is a real, small tmpfs; mounting one needs root (CI runs as root).
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { openDatabase, migrate } from '../../src/storage/database.js';
import { Store } from '../../src/storage/store.js';
import { heldTokenState } from './invariants.js';
import { REALM, killServerProcess, outputMatches, seedTokenClient, startServerProcess } from './harness.js';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'realmgate-full-'));
const mounted = spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=8m', 'tmpfs', dir]).status === 0;

describe('SQLite: the disk full', { skip: !mounted && 'mounting a tmpfs needs root (CAP_SYS_ADMIN)' }, () => {
  test('writes refused: 503 with Retry-After and an error line without a stack; nothing lost; served again once space is freed', async () => {
    const url = `sqlite:${path.join(dir, 'realmgate.db')}`;
    const db = await openDatabase(url);
    await migrate(db);
    const store = new Store(db);
    const tc = await seedTokenClient(store, 4);
    const server = await startServerProcess(url, {}, ['--workers', '1']);
    const filler = path.join(dir, 'filler');
    try {
      const tokens = await Promise.all(Array.from({ length: 4 }, () => tc.newChain(server)));
      // Every block of the file system taken (dd stops with "No space left on device").
      spawnSync('dd', ['if=/dev/zero', `of=${filler}`, 'bs=64k']);
      assert.equal(fs.statfsSync(dir).bavail, 0, 'the file system still has room');
      for (let round = 0; round < 3; round++) {
        for (const token of tokens) {
          const res = await fetch(`${server.base}/auth/realms/${REALM}/protocol/openid-connect/token`, {
            method: 'POST',
            headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: tc.authorization },
            body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: token }),
          });
          const body = await res.text();
          assert.equal(res.status, 503, body);
          assert.equal(res.headers.get('retry-after'), '2');
          assert.equal((JSON.parse(body) as { error: string }).error, 'temporarily_unavailable');
          assert.equal(await heldTokenState(store, token), 'current');
        }
      }
      await outputMatches(server, /"code":"SQLITE_FULL","reason":"database or disk is full","msg":"the database has no room to write: free disk space"/);
      assert.doesNotMatch(server.output(), /"stack"|\n\s+at /, 'a stack trace logged');

      fs.rmSync(filler);
      for (const token of tokens) {
        const r = await tc.post(server, { grant_type: 'refresh_token', refresh_token: token });
        assert.equal(r.status, 200, `a token refused while the disk was full no longer works: ${JSON.stringify(r.json)}`);
      }
      assert.equal(server.child.exitCode, null, 'the server exited');
      const check = await sql<{ integrity_check: string }>`PRAGMA integrity_check`.execute(db.kysely);
      assert.deepEqual(check.rows.map((x) => x.integrity_check), ['ok']);
    } finally {
      await killServerProcess(server);
      await tc.close();
      await db.close();
    }
  });
});

process.on('exit', () => {
  if (mounted) spawnSync('umount', [dir]);
  fs.rmSync(dir, { recursive: true, force: true });
});
