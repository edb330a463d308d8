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
 * - a row another transaction holds (another node's batch, an operator's SELECT ... FOR UPDATE) is not
 *   waited for: the batch skips it (SKIP LOCKED) and answers that caller "not rotated", and its full path
 *   (read the chain, then a conditional update that waits for the row, bounded by lock_timeout) decides.
 *   One held row neither delays the rest of its batch nor makes them fail, and a batch never waits for a
 *   lock, so batches of several processes cannot deadlock each other or another transaction;
 * - a batch that fails with a database error (a value PostgreSQL refuses) changed nothing: its rotations
 *   are retried one statement each, so one request's failure is never another's. A connection error
 *   fails the batch's callers, as it would have failed each of them alone.
 * Under light load a batch holds one rotation and goes at once: no added latency.
 */

/** Rotations per statement (bounded: one statement's parameters and lock set stay small). */
const MAX_BATCH = 64;

/** Statements in flight at once; requests arriving meanwhile wait and go together in the next. */
const MAX_IN_FLIGHT = 2;

interface Pending {
  a: CurrentAdvance;
  resolve: (row: ChainRow | undefined) => void;
  reject: (err: unknown) => void;
}

/** The database's two statements (dialects/postgres-token-statements.ts holds the SQL). */
export interface AdvanceStatements {
  /** The rotations in one statement and one commit: each one's joined row, or undefined, in their order. */
  together(client: pg.PoolClient, advances: CurrentAdvance[]): Promise<(ChainRow | undefined)[]>;
  /** One rotation alone (a batch of one, and a failed batch's retry). */
  one(client: pg.PoolClient, a: CurrentAdvance): Promise<ChainRow | undefined>;
}

/** A database's own error (it has an SQLSTATE): the statement failed, the connection is fine. */
export const isDatabaseError = (err: unknown): boolean =>
  err instanceof Error && 'code' in err && typeof err.code === 'string' && /^[0-9A-Z]{5}$/.test(err.code);

export class AdvanceBatcher {
  private queue: Pending[] = [];
  private inFlight = 0;
  private scheduled = false;

  constructor(
    private readonly pool: pg.Pool,
    private readonly statements: AdvanceStatements,
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
      let rows: (ChainRow | undefined)[] | undefined;
      if (batch.length > 1) {
        try {
          rows = await this.statements.together(client, batch.map((p) => p.a));
        } catch (err) {
          // Nothing of the batch was written: each alone, so that a failure stays its own request's.
          if (!isDatabaseError(err)) throw err;
        }
      }
      if (rows === undefined) await this.alone(client, batch);
      else for (let k = 0; k < batch.length; k++) batch[k]!.resolve(rows[k]);
    } catch (err) {
      if (err instanceof Error && !isDatabaseError(err)) broken = err;
      for (const p of batch) p.reject(err);
    } finally {
      client.release(broken);
    }
  }

  /** One statement per rotation; a database error fails only its own caller. */
  private async alone(client: pg.PoolClient, batch: Pending[]): Promise<void> {
    for (const p of batch) {
      try {
        p.resolve(await this.statements.one(client, p.a));
      } catch (err) {
        if (!isDatabaseError(err)) throw err;
        p.reject(err);
      }
    }
  }
}
