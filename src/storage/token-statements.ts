import type { Kysely, Transaction } from 'kysely';
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
}

export type CodeRow = AuthorizationCodeTable & SubjectColumns;

/** A refresh token (its columns prefixed t_) joined with its chain. */
export type TokenRow = Omit<RefreshChainTable, 'user_id'> &
  SubjectColumns & { hash: string; t_created_at: number; t_expires_at: number; t_used_at: number | null };

export type ChainValues = Omit<RefreshChainTable, 'revoked_at' | 'revoked_reason'>;

/**
 * The statements of the two hot transactions (code redemption, refresh rotation). The logic over them
 * is written once (repos/tokens.ts); each database runs them its own way: PostgreSQL through Kysely in
 * a transaction, SQLite as prepared statements in a group commit (dialects/sqlite-token-batch.ts).
 */
export interface TokenStatements {
  findCode(hash: string): Promise<CodeRow | undefined>;
  /** Marks the code used; false when it already was. */
  claimCode(hash: string, now: number): Promise<boolean>;
  setCodeChain(hash: string, chainId: string): Promise<void>;
  insertChain(chain: ChainValues): Promise<void>;
  findToken(hash: string): Promise<TokenRow | undefined>;
  /** Marks the refresh token used; false when it already was. */
  claimToken(hash: string, now: number): Promise<boolean>;
  insertToken(t: { hash: string; chain_id: string; created_at: number; expires_at: number }): Promise<void>;
  revokeChain(id: string, now: number, reason: string): Promise<void>;
  /** The audit event of the transaction, committed with it (no second commit, no second fsync). */
  insertEvent(e: EventTable): Promise<void>;
}

/** Runs `fn` in one transaction; everything it did is committed (durably) before the promise resolves. */
export type TokenTransactionRunner = <T>(fn: (s: TokenStatements) => Promise<T>) => Promise<T>;

class KyselyTokenStatements implements TokenStatements {
  constructor(private readonly trx: Transaction<Database>) {}

  findCode(hash: string): Promise<CodeRow | undefined> {
    return this.trx
      .selectFrom('authorization_codes as a')
      .leftJoin('users as u', 'u.id', 'a.user_id')
      .leftJoin('organizations as o', 'o.id', 'a.organization_id')
      .selectAll('a')
      .select(['u.username', 'u.email', 'u.first_name', 'u.last_name', 'u.email_verified', 'u.enabled as user_enabled', 'o.alias as org_alias'])
      .where('a.hash', '=', hash)
      .executeTakeFirst();
  }

  async claimCode(hash: string, now: number): Promise<boolean> {
    const r = await this.trx.updateTable('authorization_codes').set({ used_at: now }).where('hash', '=', hash).where('used_at', 'is', null).executeTakeFirst();
    return Number(r.numUpdatedRows) === 1;
  }

  async setCodeChain(hash: string, chainId: string): Promise<void> {
    await this.trx.updateTable('authorization_codes').set({ chain_id: chainId }).where('hash', '=', hash).execute();
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
        'u.first_name',
        'u.last_name',
        'u.email_verified',
        'u.enabled as user_enabled',
        'o.alias as org_alias',
      ])
      .where('t.hash', '=', hash)
      .executeTakeFirst();
  }

  async claimToken(hash: string, now: number): Promise<boolean> {
    const r = await this.trx.updateTable('refresh_tokens').set({ used_at: now }).where('hash', '=', hash).where('used_at', 'is', null).executeTakeFirst();
    return Number(r.numUpdatedRows) === 1;
  }

  async insertToken(t: { hash: string; chain_id: string; created_at: number; expires_at: number }): Promise<void> {
    await this.trx.insertInto('refresh_tokens').values({ ...t, used_at: null }).execute();
  }

  async insertEvent(e: EventTable): Promise<void> {
    await this.trx.insertInto('events').values(e).execute();
  }

  async revokeChain(id: string, now: number, reason: string): Promise<void> {
    await this.trx
      .updateTable('refresh_chains')
      .set({ revoked_at: now, revoked_reason: reason })
      .where('id', '=', id)
      .where('revoked_at', 'is', null)
      .execute();
  }
}

/** The token statements inside an existing Kysely transaction. */
export function kyselyTokenStatements(trx: Transaction<Database>): TokenStatements {
  return new KyselyTokenStatements(trx);
}

/** The portable runner: one Kysely transaction per call. */
export function kyselyTokenRunner(db: Kysely<Database>): TokenTransactionRunner {
  return (fn) => db.transaction().execute((trx) => fn(new KyselyTokenStatements(trx)));
}
