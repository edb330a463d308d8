import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import pg from 'pg';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { Store } from '../../src/storage/store.js';
import { createClient, createOrganization, createRealm, createUser } from '../../src/admin/operations.js';
import { randomId, randomToken, tokenHash } from '../../src/crypto/random.js';
import { parsePostgresUrl } from '../../src/storage/dialects/postgres.js';
import { postgresAdvanceBatcher } from '../../src/storage/dialects/postgres-token-statements.js';
import type { CurrentAdvance } from '../../src/storage/token-statements.js';

// PostgreSQL's group commit of refresh rotations (src/storage/dialects/postgres-advance-batch.ts), driven
// directly on a real database: the statements it sends are counted on the connections it takes.
describe('PostgreSQL refresh rotations share statements', { skip: !process.env.TEST_DATABASE_URL && 'TEST_DATABASE_URL is not set' }, () => {
  let tdb: TestDatabase;
  let store: Store;
  let pool: pg.Pool;
  let userId: string;
  let orgId: string;
  const now = 1_800_000_000;
  /** Statements sent through the batcher's connections, by prepared-statement name. */
  const sent = new Map<string, number>();

  before(async () => {
    tdb = await createTestDatabase('postgres');
    store = new Store(tdb.db);
    await createRealm(store, { id: 'r' });
    orgId = (await createOrganization(store, { realmId: 'r', alias: 'o' })).id;
    userId = (await createUser(store, { realmId: 'r', username: 'u', password: 'password-u', orgAliases: ['o'] })).id;
    await createClient(store, { realmId: 'r', clientId: 'c', redirectUris: ['https://c.example/cb'] });
    const { connectionString, schema } = parsePostgresUrl(tdb.url);
    // deadlock_timeout: in the deadlock below, the batch's connection is the one that finds it (PostgreSQL
    // checks once per wait, when the timeout passes: after the cycle forms, before the other side's check).
    pool = new pg.Pool({ connectionString, max: 4, options: `-c search_path=${schema} -c deadlock_timeout=400ms` });
    pool.on('connect', (client) => {
      const query = client.query.bind(client) as (q: unknown) => Promise<unknown>;
      (client as unknown as { query: (q: unknown) => Promise<unknown> }).query = (q: unknown) => {
        const name = (q as { name?: string }).name ?? 'unnamed';
        sent.set(name, (sent.get(name) ?? 0) + 1);
        return query(q);
      };
    });
  });
  after(async () => {
    await pool.end();
    await tdb.drop();
  });

  /** A new chain at generation 1, and the rotation of its current token the refresh grant would foresee. */
  async function newChain(): Promise<CurrentAdvance> {
    const hash = tokenHash(randomToken());
    await store.codes.create({
      hash, realmId: 'r', clientId: 'c', redirectUri: 'https://c.example/cb', userId, sessionId: randomId(), organizationId: orgId, scopes: ['openid'],
      codeChallenge: null, codeChallengeMethod: null, nonce: null, authTime: now, createdAt: now, expiresAt: now + 45,
    });
    const first = tokenHash(randomToken());
    const r = await store.codes.redeem(hash, now, () => ({ chain: { id: randomId(), maxExpiresAt: now + 1000 }, token: { hash: first, expiresAt: now + 100 } }));
    assert.equal(r.status, 'issued');
    const chain = (r as { chain: { id: string; sessionId: string } }).chain;
    return {
      id: chain.id, expectHash: first, generation: 1, realmId: 'r', clientId: 'c', userId, sessionId: chain.sessionId, scopes: JSON.stringify(['openid']),
      minMaxExpiresAt: now + 100, notBefore: 0, nextHash: tokenHash(randomToken()), now: now + 1, event: null,
    };
  }

  async function currentOf(id: string): Promise<{ current_hash: string | null; generation: number }> {
    return tdb.db.kysely.selectFrom('refresh_chains').select(['current_hash', 'generation']).where('id', '=', id).executeTakeFirstOrThrow();
  }

  test('rotations arriving together go as one statement, each answered with its own row', async () => {
    const batcher = postgresAdvanceBatcher(pool);
    const advances = await Promise.all(Array.from({ length: 20 }, () => newChain()));
    sent.clear();
    const rows = await Promise.all(advances.map((a) => batcher.advance(a)));
    assert.equal(sent.get('rg_advance_batch'), 1, 'one statement for the twenty');
    assert.equal(sent.get('rg_advance_current'), undefined);
    for (const [k, a] of advances.entries()) {
      assert.equal(rows[k]?.id, a.id, 'each caller gets its own chain');
      assert.equal(rows[k]?.current_hash, a.nextHash);
      assert.equal(rows[k]?.username, 'u');
      assert.deepEqual(await currentOf(a.id), { current_hash: a.nextHash, generation: 2 });
    }
  });

  test('the events of a batch (a realm that stores refreshes) are written with it, each with its own values, only for rotations that won', async () => {
    const batcher = postgresAdvanceBatcher(pool);
    const advances = await Promise.all(Array.from({ length: 5 }, () => newChain()));
    // The refresh grant's events come without a username (it decides from the token alone): the statement
    // takes the user's from the row it joins; one given is kept.
    const event = (a: CurrentAdvance, k: number) => ({
      id: randomId(), realm_id: 'r', time: now + 1, type: 'REFRESH_TOKEN', outcome: 'success', client_id: 'c', user_id: userId, username: k === 0 ? 'given' : null, ip: `192.0.2.${k}`, reason: k === 0 ? null : `reason ${k}`,
    });
    // The last one does not hold its chain's current hash: it rotates nothing and writes no event.
    const withEvents = advances.map((a, k) => ({ ...a, expectHash: k === 4 ? tokenHash(randomToken()) : a.expectHash, event: k % 2 === 1 ? null : event(a, k) }));
    sent.clear();
    const rows = await Promise.all(withEvents.map((a) => batcher.advance(a)));
    assert.deepEqual(Object.fromEntries(sent), { rg_advance_batch: 1 }, 'one statement, not retried one by one');
    assert.deepEqual(rows.map((r) => r !== undefined), [true, true, true, true, false]);
    const ids = withEvents.flatMap((a) => (a.event ? [a.event.id] : []));
    const stored = await tdb.db.kysely.selectFrom('events').selectAll().where('id', 'in', ids).orderBy('ip').execute();
    assert.deepEqual(stored, [withEvents[0]!.event, { ...withEvents[2]!.event, username: 'u' }]);
  });

  test('a rotation alone goes at once, as one statement of its own', async () => {
    const batcher = postgresAdvanceBatcher(pool);
    const a = await newChain();
    sent.clear();
    assert.equal((await batcher.advance(a))?.current_hash, a.nextHash);
    assert.deepEqual(Object.fromEntries(sent), { rg_advance_current: 1 });
    // With its event (no username given: the user's, from the row the statement joins).
    const b = await newChain();
    const event = { id: randomId(), realm_id: 'r', time: now + 1, type: 'REFRESH_TOKEN', outcome: 'success', client_id: 'c', user_id: userId, username: null, ip: null, reason: null };
    sent.clear();
    const row = await batcher.advance({ ...b, event });
    assert.equal(row?.current_hash, b.nextHash);
    assert.equal(row?.username, 'u');
    assert.deepEqual(Object.fromEntries(sent), { rg_advance_current_ev: 1 });
    assert.deepEqual(await tdb.db.kysely.selectFrom('events').selectAll().where('id', '=', event.id).execute(), [{ ...event, username: 'u' }]);
  });

  test('two rotations of one chain never share a statement: the first wins, the second finds the row moved', async () => {
    const batcher = postgresAdvanceBatcher(pool);
    const a = await newChain();
    const others = await Promise.all(Array.from({ length: 4 }, () => newChain()));
    const rival = { ...a, nextHash: tokenHash(randomToken()) };
    const [first, second, ...rest] = await Promise.all([batcher.advance(a), batcher.advance(rival), ...others.map((o) => batcher.advance(o))]);
    assert.equal(first?.current_hash, a.nextHash);
    assert.equal(second, undefined, 'the expected hash no longer holds: the caller takes the full path');
    assert.deepEqual(await currentOf(a.id), { current_hash: a.nextHash, generation: 2 });
    for (const [k, o] of others.entries()) assert.equal(rest[k]?.current_hash, o.nextHash);
  });

  test('a value the database refuses fails only its own rotation; the batch is retried one by one', async () => {
    const batcher = postgresAdvanceBatcher(pool);
    const advances = await Promise.all(Array.from({ length: 6 }, () => newChain()));
    // PostgreSQL refuses NUL in text: the shared statement fails as a whole and changes nothing.
    const bad = { ...advances[0]!, id: `${advances[0]!.id}\u0000` };
    sent.clear();
    const settled = await Promise.allSettled([batcher.advance(bad), ...advances.map((a) => batcher.advance(a))]);
    assert.equal(settled[0]!.status, 'rejected');
    assert.match(String((settled[0] as PromiseRejectedResult).reason.code), /^22/, 'a data exception');
    for (const [k, a] of advances.entries()) {
      const s = settled[k + 1]!;
      assert.equal(s.status, 'fulfilled');
      assert.equal((s as PromiseFulfilledResult<{ current_hash: string } | undefined>).value?.current_hash, a.nextHash);
      assert.deepEqual(await currentOf(a.id), { current_hash: a.nextHash, generation: 2 });
    }
    assert.equal(sent.get('rg_advance_batch'), 1);
    assert.ok((sent.get('rg_advance_current') ?? 0) >= 7, 'each retried alone');
  });

  test('two processes\' batches over the same chains, in opposite orders: one winner per chain, no deadlock', async () => {
    // Two batchers stand for two server processes (each has its own); every chain is rotated by both at once.
    const [one, two] = [postgresAdvanceBatcher(pool), postgresAdvanceBatcher(pool)];
    for (let round = 0; round < 5; round++) {
      const advances = await Promise.all(Array.from({ length: 24 }, () => newChain()));
      const rivals = advances.map((a) => ({ ...a, nextHash: tokenHash(randomToken()) })).reverse();
      sent.clear();
      const [a, b] = await Promise.all([Promise.all(advances.map((x) => one.advance(x))), Promise.all(rivals.map((x) => two.advance(x)))]);
      b.reverse();
      for (const [k, x] of advances.entries()) {
        const won = [a[k], b[k]].filter((r) => r !== undefined);
        assert.equal(won.length, 1, 'exactly one winner');
        assert.deepEqual(await currentOf(x.id), { current_hash: won[0]!.current_hash, generation: 2 });
      }
      assert.equal(sent.get('rg_advance_current'), undefined, 'no batch was retried (a deadlock would have been)');
    }
  });

  test('a row another transaction holds is skipped, not waited for: the rest of the batch rotates at once, that caller is answered "not rotated"', async () => {
    const batcher = postgresAdvanceBatcher(pool);
    const [held, ...others] = await Promise.all(Array.from({ length: 5 }, () => newChain()));
    const { connectionString, schema } = parsePostgresUrl(tdb.url);
    const other = new pg.Client({ connectionString, options: `-c search_path=${schema}` });
    await other.connect();
    sent.clear();
    try {
      // An operator's psql left inside a transaction holding the chain's row.
      await other.query('BEGIN');
      await other.query('SELECT id FROM refresh_chains WHERE id = $1 FOR UPDATE', [held!.id]);
      // The pool's connections have no lock_timeout: a batch that waited for the row would wait for ever.
      const rows = await Promise.race([
        Promise.all([held!, ...others].map((a) => batcher.advance(a))),
        new Promise<never>((_, reject) => setTimeout(() => reject(new Error('the batch waited for the held row')), 10_000).unref()),
      ]);
      assert.deepEqual(Object.fromEntries(sent), { rg_advance_batch: 1 }, 'one statement, not retried one by one');
      assert.equal(rows[0], undefined, 'the held chain: not rotated here (its caller takes the full path, which waits for the row)');
      for (const [k, o] of others.entries()) {
        assert.equal(rows[k + 1]?.current_hash, o.nextHash);
        assert.deepEqual(await currentOf(o.id), { current_hash: o.nextHash, generation: 2 });
      }
      await other.query('ROLLBACK');
    } finally {
      await other.end();
    }
    // Untouched while held; once free it rotates as usual.
    assert.deepEqual(await currentOf(held!.id), { current_hash: held!.expectHash, generation: 1 });
    assert.equal((await batcher.advance(held!))?.current_hash, held!.nextHash);
  });
});
