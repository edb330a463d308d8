import type { Kysely, Transaction } from 'kysely';
import type { Database } from '../schema.js';
import type { AuthorizationCode, RefreshChain, RefreshToken, Subject } from '../types.js';
import { toChain, toCode } from './mappers.js';

export interface NewToken {
  hash: string;
  expiresAt: number;
}

export interface NewChain {
  id: string;
  maxExpiresAt: number;
}

export type Decision<R> = { reject: R } | { chain: NewChain; token: NewToken };

function toSubject(r: { user_id: string; username: string | null; email: string | null; user_enabled: number | null; org_alias: string | null }): Subject {
  return { userId: r.user_id, username: r.username ?? '', email: r.email, enabled: r.user_enabled === 1, organizationAlias: r.org_alias };
}

export type RedeemOutcome<R> =
  | { status: 'not_found' }
  | { status: 'reused'; code: AuthorizationCode }
  | { status: 'rejected'; reason: R }
  | { status: 'issued'; code: AuthorizationCode; chain: RefreshChain; token: NewToken; subject: Subject };

export type RotateDecision<R> = { reject: R } | { next: NewToken };

export type RotateOutcome<R> =
  | { status: 'not_found' }
  | { status: 'reused'; chain: RefreshChain }
  | { status: 'rejected'; reason: R; chain: RefreshChain }
  | { status: 'rotated'; chain: RefreshChain; token: NewToken; subject: Subject };

export class CodeRepository {
  constructor(private readonly db: Kysely<Database>) {}

  async create(c: Omit<AuthorizationCode, 'usedAt' | 'chainId'>): Promise<void> {
    await this.db
      .insertInto('authorization_codes')
      .values({
        hash: c.hash,
        realm_id: c.realmId,
        client_id: c.clientId,
        redirect_uri: c.redirectUri,
        user_id: c.userId,
        session_id: c.sessionId,
        organization_id: c.organizationId,
        scopes: JSON.stringify(c.scopes),
        code_challenge: c.codeChallenge,
        code_challenge_method: c.codeChallengeMethod,
        nonce: c.nonce,
        auth_time: c.authTime,
        created_at: c.createdAt,
        expires_at: c.expiresAt,
        used_at: null,
        chain_id: null,
      })
      .execute();
  }

  /**
   * Redeems a code in one transaction: marks it used whatever `decide` says (a code is good for one
   * attempt), and when `decide` accepts, creates the refresh chain and its first token. A code that was
   * already used revokes the chain its first redemption created (RFC 6749 4.1.2, RFC 9700 4.5).
   */
  async redeem<R>(hash: string, now: number, decide: (code: AuthorizationCode, subject: Subject) => Decision<R>): Promise<RedeemOutcome<R>> {
    return this.db.transaction().execute(async (trx): Promise<RedeemOutcome<R>> => {
      const row = await trx
        .selectFrom('authorization_codes as a')
        .leftJoin('users as u', 'u.id', 'a.user_id')
        .leftJoin('organizations as o', 'o.id', 'a.organization_id')
        .selectAll('a')
        .select(['u.username', 'u.email', 'u.enabled as user_enabled', 'o.alias as org_alias'])
        .where('a.hash', '=', hash)
        .executeTakeFirst();
      if (!row) return { status: 'not_found' };
      const code = toCode(row);
      const subject = toSubject(row);
      const claimed = await trx
        .updateTable('authorization_codes')
        .set({ used_at: now })
        .where('hash', '=', hash)
        .where('used_at', 'is', null)
        .executeTakeFirst();
      if (code.usedAt !== null || Number(claimed.numUpdatedRows) !== 1) {
        if (code.chainId) await revokeChainIn(trx, code.chainId, now, 'authorization code reused');
        return { status: 'reused', code };
      }
      const d = decide(code, subject);
      if ('reject' in d) return { status: 'rejected', reason: d.reject };
      const chain: RefreshChain = {
        id: d.chain.id,
        realmId: code.realmId,
        clientId: code.clientId,
        userId: code.userId,
        organizationId: code.organizationId,
        scopes: code.scopes,
        sessionId: code.sessionId,
        authTime: code.authTime,
        createdAt: now,
        maxExpiresAt: d.chain.maxExpiresAt,
        revokedAt: null,
      };
      await trx
        .insertInto('refresh_chains')
        .values({
          id: chain.id,
          realm_id: chain.realmId,
          client_id: chain.clientId,
          user_id: chain.userId,
          organization_id: chain.organizationId,
          scopes: JSON.stringify(chain.scopes),
          session_id: chain.sessionId,
          auth_time: chain.authTime,
          created_at: now,
          max_expires_at: chain.maxExpiresAt,
          revoked_at: null,
          revoked_reason: null,
        })
        .execute();
      await trx.insertInto('refresh_tokens').values({ hash: d.token.hash, chain_id: chain.id, created_at: now, expires_at: d.token.expiresAt, used_at: null }).execute();
      await trx.updateTable('authorization_codes').set({ chain_id: chain.id }).where('hash', '=', hash).execute();
      return { status: 'issued', code, chain, token: d.token, subject };
    });
  }

  async deleteExpired(before: number): Promise<number> {
    const r = await this.db.deleteFrom('authorization_codes').where('expires_at', '<', before).executeTakeFirst();
    return Number(r.numDeletedRows);
  }
}

async function revokeChainIn(trx: Transaction<Database> | Kysely<Database>, chainId: string, now: number, reason: string): Promise<void> {
  await trx
    .updateTable('refresh_chains')
    .set({ revoked_at: now, revoked_reason: reason })
    .where('id', '=', chainId)
    .where('revoked_at', 'is', null)
    .execute();
}

export class RefreshRepository {
  constructor(private readonly db: Kysely<Database>) {}

  /**
   * Rotates a refresh token in one transaction: the presented token is marked used and its successor
   * inserted. A token presented after it was used means it leaked, so the whole chain is revoked
   * (RFC 9700 4.14.2). `decide` sees the token and its chain and either rejects (nothing changes) or
   * names the successor.
   */
  async rotate<R>(
    hash: string,
    now: number,
    decide: (token: RefreshToken, chain: RefreshChain, subject: Subject) => RotateDecision<R>,
  ): Promise<RotateOutcome<R>> {
    return this.db.transaction().execute(async (trx): Promise<RotateOutcome<R>> => {
      const row = await trx
        .selectFrom('refresh_tokens as t')
        .innerJoin('refresh_chains as c', 'c.id', 't.chain_id')
        .leftJoin('users as u', 'u.id', 'c.user_id')
        .leftJoin('organizations as o', 'o.id', 'c.organization_id')
        .select([
          'u.username',
          'u.email',
          'u.enabled as user_enabled',
          'o.alias as org_alias',
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
        ])
        .where('t.hash', '=', hash)
        .executeTakeFirst();
      if (!row) return { status: 'not_found' };
      const chain = toChain(row);
      const token: RefreshToken = {
        hash: row.hash,
        chainId: row.id,
        createdAt: Number(row.t_created_at),
        expiresAt: Number(row.t_expires_at),
        usedAt: row.t_used_at === null ? null : Number(row.t_used_at),
      };
      if (token.usedAt !== null) {
        await revokeChainIn(trx, chain.id, now, 'refresh token reused');
        return { status: 'reused', chain };
      }
      const subject = toSubject(row);
      const d = decide(token, chain, subject);
      if ('reject' in d) return { status: 'rejected', reason: d.reject, chain };
      const claimed = await trx
        .updateTable('refresh_tokens')
        .set({ used_at: now })
        .where('hash', '=', hash)
        .where('used_at', 'is', null)
        .executeTakeFirst();
      if (Number(claimed.numUpdatedRows) !== 1) {
        // Another request rotated the same token between our read and our write: that is reuse too.
        await revokeChainIn(trx, chain.id, now, 'refresh token reused');
        return { status: 'reused', chain };
      }
      await trx.insertInto('refresh_tokens').values({ hash: d.next.hash, chain_id: chain.id, created_at: now, expires_at: d.next.expiresAt, used_at: null }).execute();
      return { status: 'rotated', chain, token: d.next, subject };
    });
  }

  async revokeChain(chainId: string, now: number, reason: string): Promise<void> {
    await revokeChainIn(this.db, chainId, now, reason);
  }

  async getChain(chainId: string): Promise<RefreshChain | undefined> {
    const r = await this.db.selectFrom('refresh_chains').selectAll().where('id', '=', chainId).executeTakeFirst();
    return r ? toChain(r) : undefined;
  }
}
