import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { Kysely } from 'kysely';
import { walSync } from '../../src/storage/dialects/wal-sync.js';
import { sqliteDialect } from '../../src/storage/dialects/sqlite.js';
import { sqliteTokenRunner } from '../../src/storage/dialects/sqlite-token-batch.js';
import { migrate, openDatabase } from '../../src/storage/database.js';
import { Store } from '../../src/storage/store.js';
import { createRealm } from '../../src/admin/operations.js';
import type { Database } from '../../src/storage/schema.js';

/** A sync whose completions the test releases one by one. */
function gatedSync(): { sync: (fh: unknown) => Promise<void>; calls: number; release(err?: Error): void; waitForCall(n: number): Promise<void> } {
  const pending: Array<{ resolve: () => void; reject: (e: Error) => void }> = [];
  const gate = {
    calls: 0,
    sync: () =>
      new Promise<void>((resolve, reject) => {
        gate.calls++;
        pending.push({ resolve, reject });
      }),
    release(err?: Error) {
      const p = pending.shift();
      if (!p) throw new Error('no sync in flight');
      if (err) p.reject(err);
      else p.resolve();
    },
    async waitForCall(n: number) {
      for (let i = 0; i < 2000 && gate.calls < n; i++) await new Promise((r) => setImmediate(r));
      assert.equal(gate.calls, n, `sync called ${gate.calls} times, expected ${n}`);
    },
  };
  return gate;
}

/** A migrated database with realm `r`, open. */
async function realmDb(url: string, opts: { synchronous?: 'FULL' | 'NORMAL' } = {}): Promise<Awaited<ReturnType<typeof openDatabase>>> {
  const db = await openDatabase(url, opts);
  await migrate(db);
  await createRealm(new Store(db), { id: 'r' });
  return db;
}

/** An audit row of realm `r`. */
const eventOf = (id: string) => ({ id, realm_id: 'r', time: 1, type: 'REVOKE', outcome: 'success', client_id: null, user_id: null, username: null, ip: null, reason: null });

function tempWal(): { dir: string; file: string } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'realmgate-wal-'));
  const file = path.join(dir, 'x.db');
  fs.writeFileSync(`${file}-wal`, '');
  return { dir, file };
}

function settled(p: Promise<unknown>): () => boolean {
  let done = false;
  p.then(
    () => (done = true),
    () => (done = true),
  );
  return () => done;
}

test('syncs are coalesced: callers during a sync wait for the next one, which starts when it ends', async () => {
  const { dir, file } = tempWal();
  try {
    const gate = gatedSync();
    const sync = walSync(`${file}-wal`, gate.sync as never);
    const a = sync();
    await gate.waitForCall(1);
    // Two commits after the first sync started: neither may be answered by it.
    const b = sync();
    const c = sync();
    const aDone = settled(a);
    const bDone = settled(b);
    gate.release();
    await a;
    assert.ok(aDone());
    await gate.waitForCall(2);
    assert.equal(bDone(), false, 'b waits for a sync that started after it asked');
    gate.release();
    await Promise.all([b, c]);
    // Nothing in flight and nobody waiting: no further sync.
    await new Promise((r) => setImmediate(r));
    assert.equal(gate.calls, 2);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('a failed sync fails its callers, and the next call tries again', async () => {
  const { dir, file } = tempWal();
  try {
    const gate = gatedSync();
    const sync = walSync(`${file}-wal`, gate.sync as never);
    const a = sync();
    await gate.waitForCall(1);
    gate.release(new Error('EIO'));
    await assert.rejects(a, /EIO/);
    const b = sync();
    await gate.waitForCall(2);
    gate.release();
    await b;
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('close waits for the sync in flight and the one queued behind it, then lets go of the descriptor', async () => {
  const { dir, file } = tempWal();
  try {
    const gate = gatedSync();
    const fds: number[] = [];
    const sync = walSync(`${file}-wal`, ((fd: number) => (fds.push(fd), gate.sync(fd))) as never);
    const a = sync();
    await gate.waitForCall(1);
    const b = sync();
    const closing = sync.close();
    const closed = settled(closing);
    for (let i = 0; i < 20; i++) await new Promise((r) => setImmediate(r));
    assert.equal(closed(), false, 'closed under a sync in flight');
    gate.release();
    await a;
    await gate.waitForCall(2);
    assert.equal(closed(), false, 'closed before the queued sync ran');
    gate.release();
    await b;
    // Closing ends in the thread pool (fs.close): awaited, never counted in turns of the event loop.
    await closing;
    assert.throws(() => fs.fstatSync(fds[0]!), /EBADF/, 'the descriptor is closed');
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('the real sync on a real WAL file resolves', async () => {
  const { dir, file } = tempWal();
  try {
    const sync = walSync(`${file}-wal`);
    await Promise.all([sync(), sync(), sync()]);
    await sync();
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('a token batch is committed, then answered only once its WAL sync is done; other commits stay FULL', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'realmgate-wal-'));
  const file = path.join(dir, 'x.db');
  try {
    await (await realmDb(`sqlite:${file}`)).close();

    const { dialect, raw } = sqliteDialect({ file, synchronous: 'FULL', busyTimeoutMs: 5000 });
    const kysely = new Kysely<Database>({ dialect });
    const gate = gatedSync();
    const run = sqliteTokenRunner(raw, kysely, { walSync: walSync(`${file}-wal`, gate.sync as never), busyTimeoutMs: 5000 });
    const event = eventOf('e1');
    let during: unknown;
    const answered = run(async (s) => {
      during = raw.pragma('synchronous', { simple: true });
      await s.revokeChain({ id: null, now: 1, reason: 'test', event });
      return 'done';
    });
    const isAnswered = settled(answered);
    await gate.waitForCall(1);
    // Committed: another connection sees the row...
    const other = new BetterSqlite3(file, { readonly: true });
    assert.equal((other.prepare('SELECT count(*) AS n FROM events WHERE id = ?').get('e1') as { n: number }).n, 1);
    other.close();
    // ...but nobody has been told before the sync.
    assert.equal(isAnswered(), false);
    assert.equal(during, 1, 'the batch commits under NORMAL (its sync is the WAL sync)');
    // The connection is back to FULL for every other transaction.
    assert.equal(raw.pragma('synchronous', { simple: true }), 2);
    gate.release();
    assert.equal(await answered, 'done');

    // A failed sync: the caller hears of a failure, never of success.
    const failing = run(async () => 'never');
    await gate.waitForCall(2);
    gate.release(new Error('EIO'));
    await assert.rejects(failing, /EIO/);
    await kysely.destroy();
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('token transactions commit on a file under FULL (WAL synced off the loop) and NORMAL, and in memory', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'realmgate-wal-'));
  try {
    for (const synchronous of ['FULL', 'NORMAL'] as const) {
      const db = await realmDb(`sqlite:${path.join(dir, `${synchronous}.db`)}`, { synchronous });
      // A token transaction that writes: its answer comes after the commit (and, under FULL, the sync).
      await db.runTokenTransaction((s) => s.revokeChain({ id: null, now: 1, reason: 'x', event: eventOf(`e-${synchronous}`) }));
      await db.close();
      const check = new BetterSqlite3(path.join(dir, `${synchronous}.db`), { readonly: true });
      assert.equal((check.prepare('SELECT count(*) AS n FROM events').get() as { n: number }).n, 1);
      check.close();
    }
    const mem = await realmDb('sqlite::memory:');
    await mem.runTokenTransaction((s) => s.revokeChain({ id: null, now: 1, reason: 'x', event: null }));
    await mem.close();
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test("while another process holds SQLite's write lock, a token batch waits without blocking the event loop", async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'realmgate-wal-'));
  const file = path.join(dir, 'x.db');
  try {
    const db = await realmDb(`sqlite:${file}`);
    // Another writer (a second worker, the CLI) takes the write lock and keeps it for 150 ms.
    const other = new BetterSqlite3(file);
    other.exec('BEGIN IMMEDIATE');
    const started = Date.now();
    let ticks = 0;
    const ticker = setInterval(() => ticks++, 5);
    const released = new Promise<void>((resolve) =>
      setTimeout(() => {
        other.exec('COMMIT');
        resolve();
      }, 150),
    );
    const event = eventOf('e1');
    await db.runTokenTransaction((s) => s.revokeChain({ id: null, now: 1, reason: 'x', event }));
    clearInterval(ticker);
    await released;
    const waited = Date.now() - started;
    // SQLite's own busy handler would have slept on the event loop: no timer, so no release, until its timeout.
    assert.ok(waited >= 140 && waited < 2000, `waited ${waited} ms`);
    assert.ok(ticks >= 10, `the event loop ran ${ticks} timer ticks while the batch waited`);
    other.close();
    await db.close();
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
