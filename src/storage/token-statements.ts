import type { Kysely, Selectable, Transaction } from 'kysely';
import type { AuthorizationCodeTable, Database, EventTable, RefreshChainTable } from './schema.js';

/** The joined row of a code, or of a refresh token with its chain, plus the user and organization. */
export interface SubjectColumns {
  user_id: string;
  username: string | null;
  email: string | null;
  first_name: string | null;
  last_name: string | null;
  email_verified: number | null;
  user_enabled: number | null;
  org_alias: string | null;
  user_attributes: string | null;
}

export type CodeRow = AuthorizationCodeTable & SubjectColumns;

/** A refresh chain with its rotation state, plus the user and organization. */
export type ChainRow = Selectable<RefreshChainTable> & Omit<SubjectColumns, 'user_id'>;

/** The row of a new chain: it starts at generation 1 with its first token's hash. */
export type ChainValues = Omit<RefreshChainTable, 'revoked_at' | 'revoked_reason' | 'rotated_at' | 'grace_from_gen' | 'grace_used' | 'generation' | 'current_hash'> & {
  current_hash: string;
  generation: number;
};

/** What a rotation writes into the chain's row. */
export interface Advance {
  id: string;
  /** The hash the row must still hold: the conditional that lets exactly one rotation win. */
  expectHash: string;
  nextHash: string;
  generation: number;
  rotatedAt: number | null;
  graceFromGen: number;
  graceUsed: number;
  event: EventTable | null;
}

/**
 * A rotation decided from the presented token alone: the chain's row must be exactly what the token says
 * (its current token, at its generation, of this realm, client, user, session and scopes, not revoked,
 * alive at least until the new token expires, created after the realm's not-before, its user enabled).
 */
export interface CurrentAdvance {
  id: string;
  expectHash: string;
  /** The presented token's generation, which the row must hold; the new one is one more. */
  generation: number;
  realmId: string;
  clientId: string;
  userId: string;
  sessionId: string;
  /** The scopes column, as stored (JSON). */
  scopes: string;
  /** The new token's expiry: the chain must live at least as long. */
  minMaxExpiresAt: number;
  notBefore: number;
  nextHash: string;
  now: number;
  /** Recorded when the rotation wins; without a username, it takes the user's from the row the statement joins. */
  event: EventTable | null;
}

/**
 * The statements of the two hot paths (code redemption, refresh rotation). The logic over them is written
 * once (repos/tokens.ts). Every write here is atomic by itself (a claim and what it creates, never one
 * without the other), so that a database can run each as one statement: PostgreSQL runs each as one
 * prepared statement in autocommit, two round trips per refresh (dialects/postgres-token-statements.ts);
 * SQLite runs them as prepared statements in a group commit (dialects/sqlite-token-batch.ts); Kysely in a
 * transaction is the portable fallback (here). Refresh storage is per chain: a rotation updates the
 * chain's row and writes no token row (issue 11, item 1).
 */
export interface TokenStatements {
  findCode(hash: string): Promise<CodeRow | undefined>;
  /** Marks the code used (a rejected redemption spends it too); false when it already was. */
  claimCode(hash: string, now: number): Promise<boolean>;
  /**
   * Claims the code and, in the same step, names its chain on it, creates the chain (holding its first
   * token's hash) and records the event (when not null); false, with nothing written, when the code was
   * already used.
   */
  redeemCode(r: { hash: string; now: number; chain: ChainValues; event: EventTable | null }): Promise<boolean>;
  findChain(id: string): Promise<ChainRow | undefined>;
  /** Moves the chain to its next token (and records the event) when it still holds `expectHash`; false otherwise. */
  advanceChain(a: Advance): Promise<boolean>;
  /**
   * Optional, where it saves a round trip (PostgreSQL): the whole rotation of a current token in one
   * statement, returning the chain's joined row; undefined when the row is not exactly as expected
   * (nothing changed: the caller takes the full path, which explains why).
   */
  advanceCurrent?(a: CurrentAdvance): Promise<ChainRow | undefined>;
  /** Revokes the chain (when not already; no chain: null) and records the event, in one step. */
  revokeChain(r: { id: string | null; now: number; reason: string; event: EventTable | null }): Promise<void>;
}

/** Runs `fn`; everything it wrote is committed (durably) before the promise resolves. */
export type TokenTransactionRunner = <T>(fn: (s: TokenStatements) => Promise<T>) => Promise<T>;

/** The token statements over Kysely, inside a transaction (so each compound write is atomic). */
export class KyselyTokenStatements implements TokenStatements {
  constructor(private readonly trx: Transaction<Database>) {}

  findCode(hash: string): Promise<CodeRow | undefined> {
    return this.trx
      .selectFrom('authorization_codes as a')
      .leftJoin('users as u', 'u.id', 'a.user_id')
      .leftJoin('organizations as o', 'o.id', 'a.organization_id')
      .selectAll('a')
      .select(['u.username', 'u.email', 'u.first_name', 'u.last_name', 'u.email_verified', 'u.enabled as user_enabled', 'o.alias as org_alias', 'u.attributes as user_attributes'])
      .where('a.hash', '=', hash)
      .executeTakeFirst();
  }

  async claimCode(hash: string, now: number): Promise<boolean> {
    const r = await this.trx.updateTable('authorization_codes').set({ used_at: now }).where('hash', '=', hash).where('used_at', 'is', null).executeTakeFirst();
    return Number(r.numUpdatedRows) === 1;
  }

  async redeemCode(r: { hash: string; now: number; chain: ChainValues; event: EventTable | null }): Promise<boolean> {
    const claimed = await this.trx
      .updateTable('authorization_codes')
      .set({ used_at: r.now, chain_id: r.chain.id })
      .where('hash', '=', r.hash)
      .where('used_at', 'is', null)
      .executeTakeFirst();
    if (Number(claimed.numUpdatedRows) !== 1) return false;
    await this.insertChain(r.chain);
    if (r.event) await this.insertEvent(r.event);
    return true;
  }

  async insertChain(chain: ChainValues): Promise<void> {
    await this.trx.insertInto('refresh_chains').values({ ...chain, revoked_at: null, revoked_reason: null, rotated_at: null }).execute();
  }

  findChain(id: string): Promise<ChainRow | undefined> {
    return this.trx
      .selectFrom('refresh_chains as c')
      .leftJoin('users as u', 'u.id', 'c.user_id')
      .leftJoin('organizations as o', 'o.id', 'c.organization_id')
      .selectAll('c')
      .select(['u.username', 'u.email', 'u.first_name', 'u.last_name', 'u.email_verified', 'u.enabled as user_enabled', 'o.alias as org_alias', 'u.attributes as user_attributes'])
      .where('c.id', '=', id)
      .executeTakeFirst();
  }

  async advanceChain(a: Advance): Promise<boolean> {
    const r = await this.trx
      .updateTable('refresh_chains')
      .set({ current_hash: a.nextHash, generation: a.generation, rotated_at: a.rotatedAt, grace_from_gen: a.graceFromGen, grace_used: a.graceUsed })
      .where('id', '=', a.id)
      .where('current_hash', '=', a.expectHash)
      .executeTakeFirst();
    if (Number(r.numUpdatedRows) !== 1) return false;
    if (a.event) await this.insertEvent(a.event);
    return true;
  }

  async insertEvent(e: EventTable): Promise<void> {
    await this.trx.insertInto('events').values(e).execute();
  }

  async revokeChain(r: { id: string | null; now: number; reason: string; event: EventTable | null }): Promise<void> {
    if (r.id !== null) {
      await this.trx
        .updateTable('refresh_chains')
        .set({ revoked_at: r.now, revoked_reason: r.reason })
        .where('id', '=', r.id)
        .where('revoked_at', 'is', null)
        .execute();
    }
    if (r.event) await this.insertEvent(r.event);
  }
}

/** The token statements inside an existing Kysely transaction. */
export function kyselyTokenStatements(trx: Transaction<Database>): KyselyTokenStatements {
  return new KyselyTokenStatements(trx);
}

/** The portable runner: one Kysely transaction per call. */
export function kyselyTokenRunner(db: Kysely<Database>): TokenTransactionRunner {
  return (fn) => db.transaction().execute((trx) => fn(new KyselyTokenStatements(trx)));
}
