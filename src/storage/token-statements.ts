import type { Kysely, Transaction } from 'kysely';
import type { AuthorizationCodeTable, Database, EventTable, RefreshChainTable } from './schema.js';

/** The joined row of a code, or of a refresh token with its chain, plus the user and organization. */
export interface SubjectColumns {
  user_id: string;
  username: string | null;
  email: string | null;
  user_enabled: number | null;
  org_alias: string | null;
}

export type CodeRow = AuthorizationCodeTable & SubjectColumns;

/** A refresh token (its columns prefixed t_) joined with its chain. */
export type TokenRow = Omit<RefreshChainTable, 'user_id'> &
  SubjectColumns & { hash: string; t_created_at: number; t_expires_at: number; t_used_at: number | null };

export type ChainValues = Omit<RefreshChainTable, 'revoked_at' | 'revoked_reason'>;

export interface TokenValues {
  hash: string;
  chain_id: string;
  created_at: number;
  expires_at: number;
}

/**
 * The statements of the two hot paths (code redemption, refresh rotation). The logic over them is written
 * once (repos/tokens.ts). Every write here is atomic by itself (a claim and what it creates, never one
 * without the other), so that a database can run each as one statement: PostgreSQL runs each as one
 * prepared statement in autocommit, two round trips per refresh (dialects/postgres-token-statements.ts);
 * SQLite runs them as prepared statements in a group commit (dialects/sqlite-token-batch.ts); Kysely in a
 * transaction is the portable fallback (here).
 */
export interface TokenStatements {
  findCode(hash: string): Promise<CodeRow | undefined>;
  /** Marks the code used (a rejected redemption spends it too); false when it already was. */
  claimCode(hash: string, now: number): Promise<boolean>;
  /**
   * Claims the code and, in the same step, names its chain on it, creates the chain, its first token and
   * the event (when not null); false, with nothing written, when the code was already used.
   */
  redeemCode(r: { hash: string; now: number; chain: ChainValues; token: TokenValues; event: EventTable | null }): Promise<boolean>;
  findToken(hash: string): Promise<TokenRow | undefined>;
  /** Marks the token used and inserts its successor (and the event); false, with nothing written, when it was already used. */
  rotateToken(r: { hash: string; now: number; next: TokenValues; event: EventTable | null }): Promise<boolean>;
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
      .select(['u.username', 'u.email', 'u.enabled as user_enabled', 'o.alias as org_alias'])
      .where('a.hash', '=', hash)
      .executeTakeFirst();
  }

  async claimCode(hash: string, now: number): Promise<boolean> {
    const r = await this.trx.updateTable('authorization_codes').set({ used_at: now }).where('hash', '=', hash).where('used_at', 'is', null).executeTakeFirst();
    return Number(r.numUpdatedRows) === 1;
  }

  async redeemCode(r: { hash: string; now: number; chain: ChainValues; token: TokenValues; event: EventTable | null }): Promise<boolean> {
    const claimed = await this.trx
      .updateTable('authorization_codes')
      .set({ used_at: r.now, chain_id: r.chain.id })
      .where('hash', '=', r.hash)
      .where('used_at', 'is', null)
      .executeTakeFirst();
    if (Number(claimed.numUpdatedRows) !== 1) return false;
    await this.insertChain(r.chain);
    await this.insertToken(r.token);
    if (r.event) await this.insertEvent(r.event);
    return true;
  }

  async insertChain(chain: ChainValues): Promise<void> {
    await this.trx.insertInto('refresh_chains').values({ ...chain, revoked_at: null, revoked_reason: null }).execute();
  }

  findToken(hash: string): Promise<TokenRow | undefined> {
    return this.trx
      .selectFrom('refresh_tokens as t')
      .innerJoin('refresh_chains as c', 'c.id', 't.chain_id')
      .leftJoin('users as u', 'u.id', 'c.user_id')
      .leftJoin('organizations as o', 'o.id', 'c.organization_id')
      .select([
        't.hash',
        't.created_at as t_created_at',
        't.expires_at as t_expires_at',
        't.used_at as t_used_at',
        'c.id',
        'c.realm_id',
        'c.client_id',
        'c.user_id',
        'c.organization_id',
        'c.scopes',
        'c.session_id',
        'c.auth_time',
        'c.created_at',
        'c.max_expires_at',
        'c.revoked_at',
        'c.revoked_reason',
        'u.username',
        'u.email',
        'u.enabled as user_enabled',
        'o.alias as org_alias',
      ])
      .where('t.hash', '=', hash)
      .executeTakeFirst();
  }

  async rotateToken(r: { hash: string; now: number; next: TokenValues; event: EventTable | null }): Promise<boolean> {
    const claimed = await this.trx.updateTable('refresh_tokens').set({ used_at: r.now }).where('hash', '=', r.hash).where('used_at', 'is', null).executeTakeFirst();
    if (Number(claimed.numUpdatedRows) !== 1) return false;
    await this.insertToken(r.next);
    if (r.event) await this.insertEvent(r.event);
    return true;
  }

  async insertToken(t: TokenValues): Promise<void> {
    await this.trx.insertInto('refresh_tokens').values({ ...t, used_at: null }).execute();
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
