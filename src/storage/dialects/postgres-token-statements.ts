import type pg from 'pg';
import type { EventTable } from '../schema.js';
import type { Advance, ChainRow, ChainValues, CodeRow, CurrentAdvance, TokenStatements, TokenTransactionRunner } from '../token-statements.js';
import { AdvanceBatcher, isDatabaseError, type AdvanceStatements } from './postgres-advance-batch.js';

/**
 * The hot path on PostgreSQL: each step of repos/tokens.ts is one prepared statement (a pg named query,
 * parsed and planned once per connection, no query building per request) run in autocommit. A compound
 * write (claim the code or token, create what it leads to, record the event) is one statement of
 * data-modifying CTEs, atomic by itself; so a code exchange is two round trips (the read, then the write,
 * which commits), and the conditional UPDATE at its head keeps exactly one winner. A refresh of the
 * current token is one round trip (advanceCurrent: the token says what the row must hold, the UPDATE checks
 * it all and returns the joined row), shared with the other refreshes that arrive meanwhile
 * (postgres-advance-batch.ts: one statement and one commit for all of them); any other refresh takes the
 * two of the full path. A refresh updates the chain's row only (no index on the changed columns: an
 * in-place HOT update).
 * Parameters carry explicit casts: in INSERT ... SELECT, PostgreSQL cannot infer them from the columns.
 */
const SUBJECT = 'u.username, u.email, u.first_name, u.last_name, u.email_verified, u.enabled AS user_enabled, o.alias AS org_alias, u.attributes AS user_attributes';
const EVENT_COLUMNS = 'id, realm_id, time, type, outcome, client_id, user_id, username, ip, reason';
/**
 * The event's ten parameters from $n on, in EVENT_COLUMNS order. With `joinedUsername`, an event without a
 * username takes the joined row's (j.username): a rotation decided from the token alone does not know it.
 */
const eventParams = (n: number, joinedUsername = false): string =>
  ['text', 'text', 'bigint', 'text', 'text', 'text', 'text', 'text', 'text', 'text']
    .map((t, i) => (i === 7 && joinedUsername ? `COALESCE($${n + i}::${t}, j.username)` : `$${n + i}::${t}`))
    .join(', ');

const SQL = {
  // The joined row as one JSON text value: pg describes and parses every column of every result anew, which
  // for 24 columns costs more of the event loop than parsing one JSON text (about 120 against 90 µs per query).
  findCode: `SELECT row_to_json(r)::text AS j FROM (SELECT a.*, ${SUBJECT} FROM authorization_codes a
    LEFT JOIN users u ON u.id = a.user_id LEFT JOIN organizations o ON o.id = a.organization_id WHERE a.hash = $1) r`,
  claimCode: 'UPDATE authorization_codes SET used_at = $1 WHERE hash = $2 AND used_at IS NULL',
  redeemCode: (withEvent: boolean): string => `WITH claimed AS (
      UPDATE authorization_codes SET used_at = $1::bigint, chain_id = $2::text WHERE hash = $3::text AND used_at IS NULL RETURNING hash
    ), chain AS (
      INSERT INTO refresh_chains (id, realm_id, client_id, user_id, organization_id, scopes, session_id, auth_time, created_at, max_expires_at,
        current_hash, generation, dpop_jkt, revoked_at, revoked_reason)
      SELECT $2::text, $4::text, $5::text, $6::text, $7::text, $8::text, $9::text, $10::bigint, $1::bigint, $11::bigint, $12::text, $13::int, $14::text, NULL, NULL
      FROM claimed RETURNING id
    )${withEvent ? `, event AS (INSERT INTO events (${EVENT_COLUMNS}) SELECT ${eventParams(15)} FROM claimed)` : ''}
    SELECT count(*)::int AS n FROM chain`,
  findChain: `SELECT row_to_json(r)::text AS j FROM (SELECT c.*, ${SUBJECT} FROM refresh_chains c
    LEFT JOIN users u ON u.id = c.user_id LEFT JOIN organizations o ON o.id = c.organization_id WHERE c.id = $1) r`,
  advanceChain: (withEvent: boolean): string => `WITH advanced AS (
      UPDATE refresh_chains SET current_hash = $1::text, generation = $2::int, rotated_at = $3::bigint, grace_from_gen = $4::int, grace_used = $5::int
      WHERE id = $6::text AND current_hash = $7::text RETURNING id
    )${withEvent ? `, event AS (INSERT INTO events (${EVENT_COLUMNS}) SELECT ${eventParams(8)} FROM advanced)` : ''}
    SELECT count(*)::int AS n FROM advanced`,
  // CurrentAdvance's conditions, all in the UPDATE's WHERE: exactly one of concurrent rotations matches.
  // With an event, the joined row is read once and serves both the event (its username: a rotation decided
  // from the token's claims does not know it) and the answer.
  advanceCurrent: (withEvent: boolean): string => `WITH advanced AS (
      UPDATE refresh_chains c SET current_hash = $1::text, generation = $2::int + 1, rotated_at = $3::bigint, grace_from_gen = $2::int, grace_used = 0
      WHERE c.id = $4::text AND c.current_hash = $5::text AND c.generation = $2::int AND c.realm_id = $6::text AND c.client_id = $7::text
        AND c.user_id = $8::text AND c.session_id = $9::text AND c.scopes = $10::text AND c.revoked_at IS NULL
        AND c.max_expires_at >= $11::bigint AND c.created_at >= $12::bigint
        AND EXISTS (SELECT 1 FROM users u WHERE u.id = c.user_id AND u.enabled = 1)
      RETURNING c.*
    )${
      withEvent
        ? `, joined AS (SELECT a.*, ${SUBJECT} FROM advanced a LEFT JOIN users u ON u.id = a.user_id LEFT JOIN organizations o ON o.id = a.organization_id),
    event AS (INSERT INTO events (${EVENT_COLUMNS}) SELECT ${eventParams(13, true)} FROM joined j)
    SELECT row_to_json(r)::text AS j FROM joined r`
        : `
    SELECT row_to_json(r)::text AS j FROM (SELECT a.*, ${SUBJECT} FROM advanced a
      LEFT JOIN users u ON u.id = a.user_id LEFT JOIN organizations o ON o.id = a.organization_id) r`
    }`,
  // advanceCurrent for many rotations (postgres-advance-batch.ts): one JSON parameter (one JSON.stringify,
  // cheaper for the event loop than node-postgres's array literals) read by json_to_recordset, each row's
  // conditions as advanceCurrent's; the events of the rotations that won (their username, as advanceCurrent's,
  // the joined row's); the joined rows as one JSON array.
  // The batch takes only the rows nobody else holds (SKIP LOCKED): a row another transaction has locked
  // (an operator's SELECT ... FOR UPDATE, another node rotating the same chain) is left out and answered as
  // not rotated, and that caller's full path waits for it alone, bounded by lock_timeout. Waiting here
  // would hold every other rotation of the batch behind that one row, then fail them all at lock_timeout
  // and retry each alone: up to twice the timeout. Nothing waits, so batches cannot deadlock either. The
  // lock is the UPDATE's own (NO KEY UPDATE: no key changes), so a foreign key check's share lock is no
  // reason to skip a row.
  advanceBatch: `WITH i AS MATERIALIZED (
      SELECT * FROM json_to_recordset($1::json) AS t(o int, id text, eh text, gen int, realm text, client text, usr text, sid text, scopes text,
        min_max bigint, nbf bigint, nh text, now bigint,
        e_id text, e_realm text, e_time bigint, e_type text, e_outcome text, e_client text, e_user text, e_username text, e_ip text, e_reason text)
    ), free AS MATERIALIZED (
      SELECT c.id FROM refresh_chains c WHERE c.id IN (SELECT id FROM i) ORDER BY c.id FOR NO KEY UPDATE SKIP LOCKED
    ), advanced AS (
      UPDATE refresh_chains c SET current_hash = i.nh, generation = i.gen + 1, rotated_at = i.now, grace_from_gen = i.gen, grace_used = 0
      FROM i JOIN free f ON f.id = i.id
      WHERE c.id = i.id AND c.current_hash = i.eh AND c.generation = i.gen AND c.realm_id = i.realm AND c.client_id = i.client
        AND c.user_id = i.usr AND c.session_id = i.sid AND c.scopes = i.scopes AND c.revoked_at IS NULL
        AND c.max_expires_at >= i.min_max AND c.created_at >= i.nbf
        AND EXISTS (SELECT 1 FROM users u WHERE u.id = c.user_id AND u.enabled = 1)
      RETURNING c.*, i.o AS rg_ord
    ), joined AS (
      SELECT a.*, ${SUBJECT} FROM advanced a LEFT JOIN users u ON u.id = a.user_id LEFT JOIN organizations o ON o.id = a.organization_id
    ), event AS (
      INSERT INTO events (${EVENT_COLUMNS})
      SELECT i.e_id, i.e_realm, i.e_time, i.e_type, i.e_outcome, i.e_client, i.e_user, COALESCE(i.e_username, j.username), i.e_ip, i.e_reason
      FROM joined j JOIN i ON i.o = j.rg_ord WHERE i.e_id IS NOT NULL
    )
    SELECT json_agg(r)::text AS j FROM joined r`,
  revokeChain: 'UPDATE refresh_chains SET revoked_at = $1, revoked_reason = $2 WHERE id = $3 AND revoked_at IS NULL',
  revokeChainWithEvent: `WITH revoked AS (
      UPDATE refresh_chains SET revoked_at = $1::bigint, revoked_reason = $2::text WHERE id = $3::text AND revoked_at IS NULL RETURNING id
    ) INSERT INTO events (${EVENT_COLUMNS}) VALUES (${eventParams(4)})`,
  insertEvent: `INSERT INTO events (${EVENT_COLUMNS}) VALUES (${eventParams(1)})`,
} as const;

/** Named once: pg prepares a named query on a connection the first time it runs there. */
const QUERIES = {
  findCode: { name: 'rg_find_code_j', text: SQL.findCode },
  claimCode: { name: 'rg_claim_code', text: SQL.claimCode },
  redeemCode: { name: 'rg_redeem_code', text: SQL.redeemCode(false) },
  redeemCodeWithEvent: { name: 'rg_redeem_code_ev', text: SQL.redeemCode(true) },
  findChain: { name: 'rg_find_chain_j', text: SQL.findChain },
  advanceChain: { name: 'rg_advance_chain', text: SQL.advanceChain(false) },
  advanceChainWithEvent: { name: 'rg_advance_chain_ev', text: SQL.advanceChain(true) },
  advanceCurrent: { name: 'rg_advance_current', text: SQL.advanceCurrent(false) },
  advanceCurrentWithEvent: { name: 'rg_advance_current_ev', text: SQL.advanceCurrent(true) },
  advanceBatch: { name: 'rg_advance_batch', text: SQL.advanceBatch },
  revokeChain: { name: 'rg_revoke_chain', text: SQL.revokeChain },
  revokeChainWithEvent: { name: 'rg_revoke_chain_ev', text: SQL.revokeChainWithEvent },
  insertEvent: { name: 'rg_insert_event', text: SQL.insertEvent },
} as const;

type Value = string | number | null;

function eventValues(e: EventTable): Value[] {
  return [e.id, e.realm_id, e.time, e.type, e.outcome, e.client_id, e.user_id, e.username, e.ip, e.reason];
}

/** advanceCurrent alone, and for many rotations in one statement: what AdvanceBatcher runs. */
const ADVANCE: AdvanceStatements = {
  async one(client, a) {
    const values: Value[] = [a.nextHash, a.generation, a.now, a.id, a.expectHash, a.realmId, a.clientId, a.userId, a.sessionId, a.scopes, a.minMaxExpiresAt, a.notBefore];
    const q = a.event ? QUERIES.advanceCurrentWithEvent : QUERIES.advanceCurrent;
    const [row] = (await client.query({ name: q.name, text: q.text, values: a.event ? [...values, ...eventValues(a.event)] : values })).rows as { j: string }[];
    return row && (JSON.parse(row.j) as ChainRow);
  },
  async together(client, advances) {
    const records = advances.map((a, o) => {
      const e = a.event;
      return {
        o, id: a.id, eh: a.expectHash, gen: a.generation, realm: a.realmId, client: a.clientId, usr: a.userId, sid: a.sessionId, scopes: a.scopes,
        min_max: a.minMaxExpiresAt, nbf: a.notBefore, nh: a.nextHash, now: a.now,
        ...(e ? { e_id: e.id, e_realm: e.realm_id, e_time: e.time, e_type: e.type, e_outcome: e.outcome, e_client: e.client_id, e_user: e.user_id, e_username: e.username, e_ip: e.ip, e_reason: e.reason } : {}),
      };
    });
    const q = QUERIES.advanceBatch;
    const [row] = (await client.query({ name: q.name, text: q.text, values: [JSON.stringify(records)] })).rows as { j: string | null }[];
    const found: (ChainRow | undefined)[] = new Array(advances.length);
    // rg_ord (which rotation the row is) stays on the row: nothing reads it, and deleting it costs a shape change.
    for (const r of row?.j ? (JSON.parse(row.j) as (ChainRow & { rg_ord: number })[]) : []) found[r.rg_ord] = r;
    return found;
  },
};

/** The batcher of a pool's refresh rotations (one per token runner, i.e. per process and database). */
export function postgresAdvanceBatcher(pool: pg.Pool): AdvanceBatcher {
  return new AdvanceBatcher(pool, ADVANCE);
}

/**
 * The statements of one token transaction. A pooled connection is taken at the first statement that
 * needs one and kept to the end (release): a refresh that rotates through the batcher takes none.
 */
class PostgresTokenStatements implements TokenStatements {
  private client: pg.PoolClient | undefined;
  private broken: Error | undefined;

  constructor(
    private readonly pool: pg.Pool,
    private readonly batcher: AdvanceBatcher,
  ) {}

  private async query(q: { name: string; text: string }, values: Value[]): Promise<pg.QueryResult> {
    this.client ??= await this.pool.connect();
    try {
      return await this.client.query({ name: q.name, text: q.text, values });
    } catch (err) {
      // A connection error leaves the client unusable: release() passes it on so that the pool drops it.
      if (err instanceof Error && !isDatabaseError(err)) this.broken = err;
      throw err;
    }
  }

  private async rows<T>(q: { name: string; text: string }, values: Value[]): Promise<T[]> {
    return (await this.query(q, values)).rows as T[];
  }

  private async changed(q: { name: string; text: string }, values: Value[]): Promise<number> {
    return (await this.query(q, values)).rowCount ?? 0;
  }

  release(): void {
    this.client?.release(this.broken);
    this.client = undefined;
  }

  async findCode(hash: string): Promise<CodeRow | undefined> {
    const [row] = await this.rows<{ j: string }>(QUERIES.findCode, [hash]);
    return row && (JSON.parse(row.j) as CodeRow);
  }

  async claimCode(hash: string, now: number): Promise<boolean> {
    return (await this.changed(QUERIES.claimCode, [now, hash])) === 1;
  }

  async redeemCode(r: { hash: string; now: number; chain: ChainValues; event: EventTable | null }): Promise<boolean> {
    const c = r.chain;
    const values: Value[] = [r.now, c.id, r.hash, c.realm_id, c.client_id, c.user_id, c.organization_id, c.scopes, c.session_id, c.auth_time, c.max_expires_at, c.current_hash, c.generation, c.dpop_jkt ?? null];
    const q = r.event ? QUERIES.redeemCodeWithEvent : QUERIES.redeemCode;
    const [row] = await this.rows<{ n: number }>(q, r.event ? [...values, ...eventValues(r.event)] : values);
    return row?.n === 1;
  }

  async findChain(id: string): Promise<ChainRow | undefined> {
    const [row] = await this.rows<{ j: string }>(QUERIES.findChain, [id]);
    return row && (JSON.parse(row.j) as ChainRow);
  }

  async advanceChain(a: Advance): Promise<boolean> {
    const values: Value[] = [a.nextHash, a.generation, a.rotatedAt, a.graceFromGen, a.graceUsed, a.id, a.expectHash];
    const q = a.event ? QUERIES.advanceChainWithEvent : QUERIES.advanceChain;
    const [row] = await this.rows<{ n: number }>(q, a.event ? [...values, ...eventValues(a.event)] : values);
    return row?.n === 1;
  }

  advanceCurrent(a: CurrentAdvance): Promise<ChainRow | undefined> {
    return this.batcher.advance(a);
  }

  async revokeChain(r: { id: string | null; now: number; reason: string; event: EventTable | null }): Promise<void> {
    if (r.id !== null && r.event) await this.changed(QUERIES.revokeChainWithEvent, [r.now, r.reason, r.id, ...eventValues(r.event)]);
    else if (r.id !== null) await this.changed(QUERIES.revokeChain, [r.now, r.reason, r.id]);
    else if (r.event) await this.changed(QUERIES.insertEvent, eventValues(r.event));
  }
}

/**
 * No BEGIN/COMMIT: every statement commits by itself, so the answer is sent only after what it reports is
 * committed (and, with synchronous_commit on, durable). Rotations of current tokens share statements
 * (AdvanceBatcher); everything else takes a pooled connection for the call.
 */
export function postgresTokenRunner(pool: pg.Pool): TokenTransactionRunner {
  const batcher = postgresAdvanceBatcher(pool);
  return async <T>(fn: (s: TokenStatements) => Promise<T>): Promise<T> => {
    const s = new PostgresTokenStatements(pool, batcher);
    try {
      return await fn(s);
    } finally {
      s.release();
    }
  };
}
