import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import pg from 'pg';
import { dialects } from '../helpers/db.js';
import { startTestServer, basic, realmPath, type TestServer } from '../helpers/server.js';
import { CookieJar, authorizeQuery, inject, runAuthorization, tokenRequest } from '../helpers/flow.js';
import { Collector } from '../../src/collector.js';
import { createRealm, deleteRealm, updateRealm } from '../../src/admin/operations.js';
import { openDatabase } from '../../src/storage/database.js';
import { Store } from '../../src/storage/store.js';
import { parsePostgresUrl } from '../../src/storage/dialects/postgres.js';
import { isDatabaseBusy } from '../../src/storage/dialects/errors.js';

const TABLES = ['interactions', 'authorization_codes', 'refresh_chains', 'refresh_tokens', 'browser_sessions', 'events', 'login_failures', 'revoked_access_tokens'] as const;

// Issue 11 item 2: bounded storage.
for (const dialect of dialects()) {
  describe(`collector of expired rows (${dialect})`, () => {
    let ts: TestServer;
    before(async () => {
      ts = await startTestServer({ dialect, config: { maxInteractionsPerAddress: 1000 } });
    });
    after(() => ts.close());

    async function sizes(): Promise<Record<(typeof TABLES)[number], number>> {
      const out = {} as Record<(typeof TABLES)[number], number>;
      for (const t of TABLES) out[t] = Number((await sql<{ n: number | string }>`select count(*) as n from ${sql.table(t)}`.execute(ts.store.db.kysely)).rows[0]!.n);
      return out;
    }

    /** A round of real traffic: sign-ins, code exchanges, refreshes, a reuse, failures, abandoned requests. */
    async function traffic(): Promise<string[]> {
      const auth = basic(ts.client.id, ts.client.secret);
      const live: string[] = [];
      for (let i = 0; i < 3; i++) {
        const r = await runAuthorization(ts);
        let rt = (await tokenRequest(ts, { grant_type: 'authorization_code', code: r.code!, redirect_uri: ts.client.redirectUri }, { authorization: auth })).json().refresh_token as string;
        const first = rt;
        for (let j = 0; j < 5; j++) {
          const res = await tokenRequest(ts, { grant_type: 'refresh_token', refresh_token: rt }, { authorization: auth });
          assert.equal(res.statusCode, 200, res.body);
          rt = res.json().refresh_token;
        }
        // The last chain of the round is revoked by a reuse.
        if (i === 2) assert.equal((await tokenRequest(ts, { grant_type: 'refresh_token', refresh_token: first }, { authorization: auth })).statusCode, 400);
        else live.push(rt);
      }
      await runAuthorization(ts, { password: 'wrong-password' }).catch(() => undefined);
      for (let i = 0; i < 5; i++) await inject(ts.app, new CookieJar(), 'GET', `${realmPath('/protocol/openid-connect/auth')}?${authorizeQuery(ts)}`);
      await tokenRequest(ts, { grant_type: 'refresh_token', refresh_token: 'x' }, { authorization: basic(ts.client.id, 'bad') });
      return live;
    }

    const collector = (store = ts.store, intervalSeconds = 300): Collector => new Collector({ store, clock: ts.clock, intervalSeconds, eventsRetentionDays: 90, adminEventsRetentionDays: 365 });

    test('tables stay flat under repeated traffic: everything expired is deleted, nothing live is', async () => {
      const c = collector();
      const baseline = await sizes();
      for (let round = 0; round < 3; round++) {
        const live = await traffic();
        const grown = await sizes();
        // Storage is per chain: refreshes add no rows, new chains do.
        assert.ok(grown.refresh_chains > baseline.refresh_chains && grown.events > baseline.events && grown.interactions > baseline.interactions);
        // Right away, the collector deletes nothing that is still needed: live chains keep refreshing.
        const early = await c.runOnce();
        assert.equal(early.ran, true);
        assert.equal(early.deleted.refresh_chains, 0);
        for (const rt of live) assert.equal((await tokenRequest(ts, { grant_type: 'refresh_token', refresh_token: rt }, { authorization: basic(ts.client.id, ts.client.secret) })).statusCode, 200);
        // Past every lifetime (the longest: a chain's 730 days) and the events' 90-day retention.
        ts.clock.advance(731 * 86_400 + 2 * 86_400);
        const run = await c.runOnce();
        assert.equal(run.ran, true);
        assert.deepEqual(await sizes(), baseline, `round ${round}: ${JSON.stringify(run.deleted)}`);
      }
      await c.stop();
    });

    test('work per run is bounded: a backlog larger than one run is worked off over several', async () => {
      const now = Math.floor(ts.clock.nowMs() / 1000);
      const rows = Array.from({ length: 1500 }, (_, i) => ({
        id: `old-${i}`,
        realm_id: 'test',
        time: now - 100 * 86_400,
        type: 'LOGIN',
        outcome: 'success',
        client_id: null,
        user_id: null,
        username: null,
        ip: null,
        reason: null,
      }));
      for (let i = 0; i < rows.length; i += 250) await ts.store.db.kysely.insertInto('events').values(rows.slice(i, i + 250)).execute();
      const c = collector();
      const run = await c.runOnce();
      assert.equal(run.deleted.events, 1500);
      assert.equal((await sizes()).events, 0);
      await c.stop();
    });

    test("admin events go after the server's 365 days, events after its 90; a realm's own retention (eventsExpiration, adminEventsExpiration) comes first", async () => {
      const now = Math.floor(ts.clock.nowMs() / 1000);
      await createRealm(ts.store, { id: 'keeps-defaults' });
      const day = 86_400;
      const admin = (realm: string, ageDays: number) => ({
        id: `adm-${realm}-${ageDays}`,
        realm_id: realm,
        time_ms: (now - ageDays * day) * 1000,
        operation_type: 'UPDATE',
        resource_type: 'USER',
        resource_path: 'users/x',
        auth_realm_id: null,
        auth_client_id: null,
        auth_user_id: null,
        auth_username: null,
        ip: null,
        via: 'cli',
        representation: null,
      });
      const event = (realm: string, ageDays: number) => ({ id: `evt-${realm}-${ageDays}`, realm_id: realm, time: now - ageDays * day, type: 'LOGIN', outcome: 'success', client_id: null, user_id: null, username: null, ip: null, reason: null });
      for (const realm of ['test', 'keeps-defaults']) {
        await ts.store.db.kysely.insertInto('admin_events').values([400, 300, 5].map((d) => admin(realm, d))).execute();
        await ts.store.db.kysely.insertInto('events').values([100, 40, 10].map((d) => event(realm, d))).execute();
      }
      const left = async (): Promise<string[]> => {
        const a = await ts.store.db.kysely.selectFrom('admin_events').select('id').where('id', 'like', 'adm-%').execute();
        const e = await ts.store.db.kysely.selectFrom('events').select('id').where('id', 'like', 'evt-%').execute();
        return [...a, ...e].map((r) => r.id).sort();
      };
      const c = collector();
      await c.runOnce();
      // The server's retentions: admin events 365 days, events 90, in every realm.
      const afterDefaults = ['adm-keeps-defaults-300', 'adm-keeps-defaults-5', 'adm-test-300', 'adm-test-5', 'evt-keeps-defaults-10', 'evt-keeps-defaults-40', 'evt-test-10', 'evt-test-40'];
      assert.deepEqual(await left(), afterDefaults);
      // Realm test keeps its events 30 days and its admin events 7: its older rows go at the next run, other realms' stay.
      await updateRealm(ts.store, { realmId: 'test', settings: { eventsRetention: 30 * day, adminEventsRetention: 7 * day } });
      await c.runOnce();
      assert.deepEqual(await left(), ['adm-keeps-defaults-300', 'adm-keeps-defaults-5', 'adm-test-5', 'evt-keeps-defaults-10', 'evt-keeps-defaults-40', 'evt-test-10']);
      await updateRealm(ts.store, { realmId: 'test', settings: { eventsRetention: null, adminEventsRetention: null } });
      await deleteRealm(ts.store, { realmId: 'keeps-defaults' });
      await ts.store.db.kysely.deleteFrom('admin_events').where('id', 'like', 'adm-%').execute();
      await ts.store.db.kysely.deleteFrom('events').where('id', 'like', 'evt-%').execute();
      await c.stop();
    });

    test('device codes: one that issued nothing goes ten minutes after expiry, one that issued tokens stays a day', async () => {
      const now = Math.floor(ts.clock.nowMs() / 1000);
      // [hash, status, seconds since it expired, kept?]
      const cases: Array<[string, string, number, boolean]> = [
        ['pending-just-expired', 'pending', 300, true],
        ['pending-long-expired', 'pending', 601, false],
        ['approved-never-polled', 'approved', 700, false],
        ['denied', 'denied', 700, false],
        ['consumed-hours-ago', 'consumed', 3 * 3_600, true],
        ['consumed-two-days-ago', 'consumed', 2 * 86_400, false],
        ['pending-live', 'pending', -300, true],
      ];
      for (const [hash, status, ago] of cases) {
        await ts.store.db.kysely
          .insertInto('device_codes')
          .values({ hash, user_code_hash: `u-${hash}`, realm_id: 'test', client_id: ts.client.id, scopes: '[]', status, interval: 5, last_polled_at: null, user_id: null, session_id: null, organization_id: null, auth_time: null, chain_id: null, created_at: now - ago - 600, expires_at: now - ago, resources: '[]', ip: '192.0.2.9' })
          .execute();
      }
      const c = collector();
      const run = await c.runOnce();
      assert.equal(run.deleted.device_codes, cases.filter(([, , , kept]) => !kept).length);
      const left = (await ts.store.db.kysely.selectFrom('device_codes').select('hash').execute()).map((r) => r.hash).sort();
      assert.deepEqual(left, cases.filter(([, , , kept]) => kept).map(([hash]) => hash).sort());
      await ts.store.db.kysely.deleteFrom('device_codes').execute();
      await c.stop();
    });


    test('client initial access tokens go once expired; live ones and those that never expire stay', async () => {
      const now = Math.floor(ts.clock.nowMs() / 1000);
      // [id, expires_at, kept?]
      const cases: Array<[string, number, boolean]> = [
        ['iat-expired', now - 1, false],
        ['iat-long-expired', now - 400 * 86_400, false],
        ['iat-live', now + 60, true],
        ['iat-never', 0, true],
      ];
      for (const [id, expiresAt] of cases) {
        await ts.store.clientRegistration.createInitialAccess({ id, realmId: 'test', tokenHash: `h-${id}`, createdAt: now - 500 * 86_400, expiresAt, count: 3, remaining: 2 });
      }
      const c = collector();
      const run = await c.runOnce();
      assert.equal(run.deleted.client_initial_access, 2);
      const left = (await ts.store.db.kysely.selectFrom('client_initial_access').select('id').execute()).map((r) => r.id).sort();
      assert.deepEqual(left, ['iat-live', 'iat-never']);
      // Past the live one's expiry, it goes too; the one without an expiry never does.
      ts.clock.advance(61);
      assert.equal((await c.runOnce()).deleted.client_initial_access, 1);
      assert.deepEqual((await ts.store.db.kysely.selectFrom('client_initial_access').select('id').execute()).map((r) => r.id), ['iat-never']);
      await ts.store.db.kysely.deleteFrom('client_initial_access').execute();
      await c.stop();
    });
    test('two collectors on one database: one runs, the other skips, and takes over once the lease is free', async () => {
      // A second node: its own connection (pool) to the same database.
      const otherDb = await openDatabase(ts.db.url, { synchronous: 'NORMAL' });
      try {
        const a = collector(ts.store, 60);
        const b = collector(new Store(otherDb), 60);
        const both = await Promise.all([a.runOnce(), b.runOnce()]);
        assert.equal(both.filter((r) => r.ran).length, 1, 'exactly one ran');
        const [winner, loser] = both[0]!.ran ? [a, b] : [b, a];
        // The holder renews its lease; the other keeps skipping while it is valid.
        ts.clock.advance(60);
        assert.equal((await winner.runOnce()).ran, true);
        assert.equal((await loser.runOnce()).ran, false);
        // The holder stops (a node shutting down): the other takes over at its next tick.
        await winner.stop();
        assert.equal((await loser.runOnce()).ran, true);
        // A holder that dies without stopping: its lease expires (3 intervals) and the other takes over.
        ts.clock.advance(181);
        assert.equal((await winner.runOnce()).ran, true);
        await loser.stop();
        await winner.stop();
      } finally {
        await otherDb.close();
      }
    });
  });

  describe(`caps on unfinished authorization requests (${dialect})`, () => {
    let ts: TestServer;
    before(async () => {
      ts = await startTestServer({ dialect, config: { maxInteractionsPerAddress: 3, maxInteractions: 5 } });
    });
    after(() => ts.close());

    const start = (ip: string) =>
      ts.app.inject({ method: 'GET', url: `${realmPath('/protocol/openid-connect/auth')}?${authorizeQuery(ts)}`, remoteAddress: ip });

    test('per address, then overall: a clear error page, and the collector frees room', async () => {
      for (let i = 0; i < 3; i++) assert.equal((await start('10.5.0.1')).statusCode, 303);
      const perAddress = await start('10.5.0.1');
      assert.equal(perAddress.statusCode, 429);
      assert.match(perAddress.body, /Too many sign-ins were started from your network/);
      assert.ok(perAddress.headers['retry-after']);
      for (let i = 0; i < 2; i++) assert.equal((await start('10.5.0.2')).statusCode, 303);
      const overall = await start('10.5.0.3');
      assert.equal(overall.statusCode, 429);
      assert.match(overall.body, /too many sign-ins right now/);
      // Unfinished requests expire (30 minutes); once collected, new ones are accepted again.
      ts.clock.advance(31 * 60);
      const c = new Collector({ store: ts.store, clock: ts.clock, intervalSeconds: 300, eventsRetentionDays: 90, adminEventsRetentionDays: 365 });
      assert.equal((await c.runOnce()).deleted.interactions, 5);
      await c.stop();
      assert.equal((await start('10.5.0.3')).statusCode, 303);
      assert.equal((await start('10.5.0.1')).statusCode, 303);
    });
  });
}

/**
 * PostgreSQL connections wait for another transaction's lock no longer than REALMGATE_DB_WAIT_TIMEOUT_MS
 * (short here). The collector's lease is a row with an expiry, not a lock held across a run: two nodes'
 * collectors still take turns. Its row locked by another transaction (an operator's psql), a run gives
 * up as busy after the wait timeout, and so does a node stopping meanwhile, instead of waiting for ever
 * (the stop waited for the run); the next run works.
 */
describe('collector under the wait timeout (postgres)', { skip: !process.env.TEST_DATABASE_URL && 'TEST_DATABASE_URL is not set' }, () => {
  const WAIT_MS = 1000;
  let ts: TestServer;
  before(async () => {
    ts = await startTestServer({ dialect: 'postgres', config: { dbWaitTimeoutMs: WAIT_MS } });
  });
  after(() => ts.close());

  const collector = (store: Store): Collector => new Collector({ store, clock: ts.clock, intervalSeconds: 60, eventsRetentionDays: 90, adminEventsRetentionDays: 365 });

  test("two nodes' collectors take turns; a run behind another transaction's lock on the lease gives up as busy, the next one runs", async () => {
    const otherDb = await openDatabase(ts.db.url, { waitTimeoutMs: WAIT_MS });
    const { connectionString, schema } = parsePostgresUrl(ts.db.url);
    const psql = new pg.Client({ connectionString, options: `-c search_path=${schema}` });
    await psql.connect();
    try {
      const a = collector(ts.store);
      const b = collector(new Store(otherDb));
      const both = await Promise.all([a.runOnce(), b.runOnce()]);
      assert.equal(both.filter((r) => r.ran).length, 1, 'exactly one ran');
      const [holder, other] = both[0]!.ran ? [a, b] : [b, a];
      await psql.query('BEGIN');
      assert.equal((await psql.query("SELECT name FROM leases WHERE name = 'collector' FOR UPDATE")).rowCount, 1);
      const start = performance.now();
      await assert.rejects(holder.runOnce(), (err) => isDatabaseBusy(err));
      assert.ok(performance.now() - start >= WAIT_MS);
      // The node stopping meanwhile: giving its lease up waits no longer either, and the stop completes.
      await holder.stop();
      await psql.query('ROLLBACK');
      // The lease was not given up: the same node's next run runs, the other's skips.
      assert.equal((await holder.runOnce()).ran, true);
      assert.equal((await other.runOnce()).ran, false);
      await holder.stop();
      await other.stop();
    } finally {
      await psql.end();
      await otherDb.close();
    }
  });
});
