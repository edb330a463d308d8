import type pg from 'pg';
import { metrics } from '../../metrics.js';
import type { ChainRow, CurrentAdvance } from '../token-statements.js';

/**
 * Group commit for PostgreSQL's hot refresh statement (TokenStatements.advanceCurrent): the rotations that
 * arrive while earlier ones are in flight go to the database together, as one statement that rotates
 * them all and commits once. On a small machine the statement's fixed cost (a round trip, waking a
 * backend, planning and starting the executor, the commit and its WAL flush, and node-postgres's work
 * per query) outweighs its per-row cost several times, and PostgreSQL's own CPU is shared with the server.
 *
 * What each caller is answered is what the one-rotation statement would answer:
 * - each row's conditions are checked by the UPDATE's WHERE, exactly as alone, so of concurrent rotations
 *   of one chain (in one process or many) exactly one wins;
 * - a batch never holds two rotations of one chain (the later one waits for the next batch, where its
 *   expected hash no longer holds, and it takes the full path, which decides reuse or grace);
 * - nobody is answered before the commit that holds their rotation;
 * - a batch that fails with a database error (a deadlock with another transaction that locks the same rows
 *   in another order, a value PostgreSQL refuses) changed nothing: its rotations are retried one
 *   statement each, so one request's failure is never another's. Batches lock their rows in the order
 *   of the chains' ids, so that batches of several processes do not deadlock each other. A connection error fails the batch's
 *   callers, as it would have failed each of them alone.
 * Under light load a batch holds one rotation and goes at once: no added latency.
 */

/** Rotations per statement (bounded: one statement's parameters and lock set stay small). */
const MAX_BATCH = 64;

/** Statements in flight at once; requests arriving meanwhile wait and go together in the next. */
const MAX_IN_FLIGHT = 2;

const SUBJECT = 'u.username, u.email, u.first_name, u.last_name, u.email_verified, u.enabled AS user_enabled, o.alias AS org_alias';
const EVENT_COLUMNS = 'id, realm_id, time, type, outcome, client_id, user_id, username, ip, reason';

/**
 * The rotations as one JSON parameter (one JSON.stringify: cheaper for the event loop than node-postgres's
 * array literals), read by json_to_recordset. CurrentAdvance's conditions, all in the UPDATE's WHERE.
 */
const BATCH_SQL = `WITH i AS MATERIALIZED (
    SELECT * FROM json_to_recordset($1::json) AS t(o int, id text, eh text, gen int, realm text, client text, usr text, sid text, scopes text,
      min_max bigint, nbf bigint, nh text, now bigint,
      e_id text, e_realm text, e_time bigint, e_type text, e_outcome text, e_client text, e_user text, e_username text, e_ip text, e_reason text)
  ), advanced AS (
    UPDATE refresh_chains c SET current_hash = i.nh, generation = i.gen + 1, rotated_at = i.now, grace_from_gen = i.gen, grace_used = 0
    FROM i
    WHERE c.id = i.id AND c.current_hash = i.eh AND c.generation = i.gen AND c.realm_id = i.realm AND c.client_id = i.client
      AND c.user_id = i.usr AND c.session_id = i.sid AND c.scopes = i.scopes AND c.revoked_at IS NULL
      AND c.max_expires_at >= i.min_max AND c.created_at >= i.nbf
      AND EXISTS (SELECT 1 FROM users u WHERE u.id = c.user_id AND u.enabled = 1)
    RETURNING c.*, i.o AS rg_ord
  ), event AS (
    INSERT INTO events (${EVENT_COLUMNS})
    SELECT i.e_id, i.e_realm, i.e_time, i.e_type, i.e_outcome, i.e_client, i.e_user, i.e_username, i.e_ip, i.e_reason
    FROM advanced a JOIN i ON i.o = a.rg_ord WHERE i.e_id IS NOT NULL
  )
  SELECT json_agg(r)::text AS j FROM (SELECT a.*, ${SUBJECT} FROM advanced a
    LEFT JOIN users u ON u.id = a.user_id LEFT JOIN organizations o ON o.id = a.organization_id) r`;

const BATCH_QUERY = { name: 'rg_advance_batch', text: BATCH_SQL };

interface Pending {
  a: CurrentAdvance;
  resolve: (row: ChainRow | undefined) => void;
  reject: (err: unknown) => void;
}

/** One rotation alone (a batch's retry, one statement each). */
export type AdvanceOne = (client: pg.PoolClient, a: CurrentAdvance) => Promise<ChainRow | undefined>;

/** A database's own error (it has an SQLSTATE): the statement failed, the connection is fine. */
export const isDatabaseError = (err: unknown): boolean =>
  err instanceof Error && 'code' in err && typeof err.code === 'string' && /^[0-9A-Z]{5}$/.test(err.code);

function record(p: Pending, ord: number): Record<string, unknown> {
  const a = p.a;
  const e = a.event;
  return {
    o: ord,
    id: a.id,
    eh: a.expectHash,
    gen: a.generation,
    realm: a.realmId,
    client: a.clientId,
    usr: a.userId,
    sid: a.sessionId,
    scopes: a.scopes,
    min_max: a.minMaxExpiresAt,
    nbf: a.notBefore,
    nh: a.nextHash,
    now: a.now,
    ...(e
      ? { e_id: e.id, e_realm: e.realm_id, e_time: e.time, e_type: e.type, e_outcome: e.outcome, e_client: e.client_id, e_user: e.user_id, e_username: e.username, e_ip: e.ip, e_reason: e.reason }
      : {}),
  };
}

type Row = ChainRow & { rg_ord?: number };

export class AdvanceBatcher {
  private queue: Pending[] = [];
  private inFlight = 0;
  private scheduled = false;

  constructor(
    private readonly pool: pg.Pool,
    private readonly one: AdvanceOne,
  ) {}

  advance(a: CurrentAdvance): Promise<ChainRow | undefined> {
    return new Promise((resolve, reject) => {
      this.queue.push({ a, resolve, reject });
      this.schedule();
    });
  }

  /** Sends the queue at the end of this turn of the event loop (every request parsed in it joins). */
  private schedule(): void {
    if (this.scheduled || this.inFlight >= MAX_IN_FLIGHT || this.queue.length === 0) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      this.flush();
    });
  }

  private flush(): void {
    if (this.inFlight >= MAX_IN_FLIGHT || this.queue.length === 0) return;
    const batch: Pending[] = [];
    const rest: Pending[] = [];
    const chains = new Set<string>();
    for (const p of this.queue) {
      if (batch.length < MAX_BATCH && !chains.has(p.a.id)) {
        chains.add(p.a.id);
        batch.push(p);
      } else rest.push(p);
    }
    this.queue = rest;
    // In the order of their chains: PostgreSQL locks the rows in the batch's order (a nested loop over it),
    // so two processes' batches lock shared rows in one order and do not deadlock each other.
    batch.sort((p, q) => (p.a.id < q.a.id ? -1 : p.a.id > q.a.id ? 1 : 0));
    this.inFlight++;
    metrics.pgBatchSize.observe(batch.length);
    void this.run(batch).finally(() => {
      this.inFlight--;
      this.schedule();
    });
  }

  private async run(batch: Pending[]): Promise<void> {
    let client: pg.PoolClient;
    try {
      client = await this.pool.connect();
    } catch (err) {
      for (const p of batch) p.reject(err);
      return;
    }
    let broken: Error | undefined;
    try {
      let rows: Row[] | undefined;
      if (batch.length > 1) {
        try {
          rows = await this.together(client, batch);
        } catch (err) {
          // Nothing of the batch was written: each alone, so that a failure stays its own request's.
          if (!isDatabaseError(err)) throw err;
        }
      }
      if (rows === undefined) {
        await this.alone(client, batch);
        return;
      }
      const found: (ChainRow | undefined)[] = new Array(batch.length);
      for (const row of rows) {
        const ord = row.rg_ord!;
        delete row.rg_ord;
        found[ord] = row;
      }
      for (let k = 0; k < batch.length; k++) batch[k]!.resolve(found[k]);
    } catch (err) {
      if (err instanceof Error && !isDatabaseError(err)) broken = err;
      for (const p of batch) p.reject(err);
    } finally {
      client.release(broken);
    }
  }

  private async together(client: pg.PoolClient, batch: Pending[]): Promise<Row[]> {
    const json = JSON.stringify(batch.map(record));
    const r = await client.query({ name: BATCH_QUERY.name, text: BATCH_QUERY.text, values: [json] });
    const j = (r.rows[0] as { j: string | null } | undefined)?.j;
    return j ? (JSON.parse(j) as Row[]) : [];
  }

  /** One statement per rotation; a database error fails only its own caller. */
  private async alone(client: pg.PoolClient, batch: Pending[]): Promise<void> {
    for (const p of batch) {
      try {
        p.resolve(await this.one(client, p.a));
      } catch (err) {
        if (!isDatabaseError(err)) throw err;
        p.reject(err);
      }
    }
  }
}
