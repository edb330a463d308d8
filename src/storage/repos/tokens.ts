import type { Kysely } from 'kysely';
import type { Database } from '../schema.js';
import type { AuthorizationCode, RefreshChain, RefreshToken, Subject } from '../types.js';
import type { Db } from '../database.js';
import type { ChainValues, TokenStatements } from '../token-statements.js';
import { toChain, toCode, toSubject } from './mappers.js';
import { sortableId } from '../../crypto/random.js';
import { eventRow, type EventType } from './events.js';
import { isEventStored } from '../../events/stored-types.js';

export interface NewToken {
  hash: string;
  expiresAt: number;
}

export interface NewChain {
  id: string;
  maxExpiresAt: number;
}

export type Decision<R> = { reject: R } | { chain: NewChain; token: NewToken };

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

/** Who asked, for the audit event written inside the transaction. */
export interface AuditInfo {
  ip: string | null;
  /** The realm's optional event types to store (Realm.storedEventTypes); undefined: the defaults. */
  storedEventTypes?: readonly string[];
}

function auditRow(type: EventType, outcome: 'success' | 'failure', chain: { realmId: string; clientId: string; userId: string }, now: number, info: AuditInfo | undefined, reason?: string) {
  return eventRow({ id: sortableId(), time: now, realmId: chain.realmId, type, outcome, clientId: chain.clientId, userId: chain.userId, ip: info?.ip ?? null, reason: reason ?? null });
}

const CODE_REUSED = 'authorization code reused';
const TOKEN_REUSED = 'refresh token reused';

/** The row of a new refresh chain (an offline session). */
export function chainValues(chain: RefreshChain): ChainValues {
  return {
    id: chain.id,
    realm_id: chain.realmId,
    client_id: chain.clientId,
    user_id: chain.userId,
    organization_id: chain.organizationId,
    scopes: JSON.stringify(chain.scopes),
    session_id: chain.sessionId,
    auth_time: chain.authTime,
    created_at: chain.createdAt,
    max_expires_at: chain.maxExpiresAt,
  };
}

/** Creates a refresh chain (an offline session) and returns it. */
export async function startChain(s: { insertChain(c: ChainValues): Promise<void> }, chain: RefreshChain): Promise<RefreshChain> {
  await s.insertChain(chainValues(chain));
  return chain;
}

/**
 * Redeems a code: marks it used whatever `decide` says (a code is good for one attempt), and when
 * `decide` accepts, creates the refresh chain and its first token in the same step. A code that was
 * already used revokes the chain its first redemption created (RFC 6749 4.1.2, RFC 9700 4.5).
 * PostgreSQL: two round trips (the read, then one statement that claims and creates).
 */
async function redeemIn<R>(
  s: TokenStatements,
  hash: string,
  now: number,
  decide: (code: AuthorizationCode, subject: Subject) => Decision<R>,
  info?: AuditInfo,
): Promise<RedeemOutcome<R>> {
  const row = await s.findCode(hash);
  if (!row) return { status: 'not_found' };
  const code = toCode(row);
  const reused = async (): Promise<RedeemOutcome<R>> => {
    // A concurrent redemption may have claimed the code after our read: its claim named the chain in
    // the same committed step, so reading the code again finds the chain to revoke.
    const chainId = code.chainId ?? (await s.findCode(hash))?.chain_id;
    const event = auditRow('TOKEN_REUSE', 'failure', code, now, info, CODE_REUSED);
    await s.revokeChain({ id: chainId ?? null, now, reason: CODE_REUSED, event });
    return { status: 'reused', code };
  };
  if (code.usedAt !== null) return reused();
  const subject = toSubject(row);
  const d = decide(code, subject);
  if ('reject' in d) {
    if (!(await s.claimCode(hash, now))) return reused();
    return { status: 'rejected', reason: d.reject };
  }
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
  const redeemed = await s.redeemCode({
    hash,
    now,
    chain: chainValues(chain),
    token: { hash: d.token.hash, chain_id: chain.id, created_at: now, expires_at: d.token.expiresAt },
    event: isEventStored(info?.storedEventTypes, 'CODE_TO_TOKEN', 'success') ? auditRow('CODE_TO_TOKEN', 'success', chain, now, info) : null,
  });
  if (!redeemed) return reused();
  return { status: 'issued', code, chain, token: d.token, subject };
}

/**
 * Rotates a refresh token: the presented token is marked used and its successor inserted, in one step.
 * A token presented after it was used means it leaked, so the whole chain is revoked (RFC 9700 4.14.2).
 * `decide` either rejects (nothing changes) or names the successor. PostgreSQL: two round trips.
 */
async function rotateIn<R>(
  s: TokenStatements,
  hash: string,
  now: number,
  decide: (token: RefreshToken, chain: RefreshChain, subject: Subject) => RotateDecision<R>,
  info?: AuditInfo,
): Promise<RotateOutcome<R>> {
  const row = await s.findToken(hash);
  if (!row) return { status: 'not_found' };
  const chain = toChain(row);
  const reused = async (): Promise<RotateOutcome<R>> => {
    await s.revokeChain({ id: chain.id, now, reason: TOKEN_REUSED, event: auditRow('TOKEN_REUSE', 'failure', chain, now, info, TOKEN_REUSED) });
    return { status: 'reused', chain };
  };
  if (row.t_used_at !== null) return reused();
  const token: RefreshToken = { hash: row.hash, chainId: row.id, createdAt: Number(row.t_created_at), expiresAt: Number(row.t_expires_at), usedAt: null };
  const subject = toSubject(row);
  const d = decide(token, chain, subject);
  if ('reject' in d) return { status: 'rejected', reason: d.reject, chain };
  const rotated = await s.rotateToken({
    hash,
    now,
    next: { hash: d.next.hash, chain_id: chain.id, created_at: now, expires_at: d.next.expiresAt },
    // Not stored by default (counted by the grant instead): a row per refresh would grow without bound.
    event: isEventStored(info?.storedEventTypes, 'REFRESH_TOKEN', 'success') ? auditRow('REFRESH_TOKEN', 'success', chain, now, info) : null,
  });
  // Another request rotated the same token between our read and our write: that is reuse too.
  if (!rotated) return reused();
  return { status: 'rotated', chain, token: d.next, subject };
}

export class CodeRepository {
  constructor(private readonly db: Db) {}

  private get k(): Kysely<Database> {
    return this.db.kysely;
  }

  async create(c: Omit<AuthorizationCode, 'usedAt' | 'chainId'>): Promise<void> {
    await this.k
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

  /** See redeemIn: one transaction, committed before the outcome is returned. */
  redeem<R>(hash: string, now: number, decide: (code: AuthorizationCode, subject: Subject) => Decision<R>, info?: AuditInfo): Promise<RedeemOutcome<R>> {
    return this.db.runTokenTransaction((s) => redeemIn(s, hash, now, decide, info));
  }

  /** What the code display page may say about a code: its client and when it expires. */
  async peek(hash: string): Promise<{ realmId: string; clientId: string; expiresAt: number; used: boolean } | undefined> {
    const r = await this.k
      .selectFrom('authorization_codes')
      .select(['realm_id', 'client_id', 'expires_at', 'used_at'])
      .where('hash', '=', hash)
      .executeTakeFirst();
    return r ? { realmId: r.realm_id, clientId: r.client_id, expiresAt: Number(r.expires_at), used: r.used_at !== null } : undefined;
  }

  async deleteExpired(before: number): Promise<number> {
    const r = await this.k.deleteFrom('authorization_codes').where('expires_at', '<', before).executeTakeFirst();
    return Number(r.numDeletedRows);
  }
}

export class RefreshRepository {
  constructor(private readonly db: Db) {}

  /** See rotateIn: one transaction, committed before the outcome is returned. */
  rotate<R>(
    hash: string,
    now: number,
    decide: (token: RefreshToken, chain: RefreshChain, subject: Subject) => RotateDecision<R>,
    info?: AuditInfo,
  ): Promise<RotateOutcome<R>> {
    return this.db.runTokenTransaction((s) => rotateIn(s, hash, now, decide, info));
  }

  async revokeChain(chainId: string, now: number, reason: string): Promise<void> {
    await this.db.kysely
      .updateTable('refresh_chains')
      .set({ revoked_at: now, revoked_reason: reason })
      .where('id', '=', chainId)
      .where('revoked_at', 'is', null)
      .execute();
  }

  /** When each live chain of the user was last refreshed (or started), per client and organization. */
  async lastUsedByUser(realmId: string, userId: string, now: number): Promise<Array<{ clientId: string; organizationId: string; lastUsed: number; chains: number }>> {
    const rows = await this.db.kysely
      .selectFrom('refresh_chains as c')
      .innerJoin('refresh_tokens as t', 't.chain_id', 'c.id')
      .select(['c.client_id', 'c.organization_id', (eb) => eb.fn.max('t.created_at').as('last_used'), (eb) => eb.fn.count('c.id').distinct().as('chains')])
      .where('c.realm_id', '=', realmId)
      .where('c.user_id', '=', userId)
      .where('c.revoked_at', 'is', null)
      .where('c.max_expires_at', '>', now)
      .groupBy(['c.client_id', 'c.organization_id'])
      .execute();
    return rows.map((r) => ({ clientId: r.client_id, organizationId: r.organization_id, lastUsed: Number(r.last_used), chains: Number(r.chains) }));
  }

  /** Revokes every chain of the user for a client and organization (the account page's "Revoke access"). */
  async revokeGrant(realmId: string, userId: string, clientId: string, organizationId: string, now: number): Promise<number> {
    const r = await this.db.kysely
      .updateTable('refresh_chains')
      .set({ revoked_at: now, revoked_reason: 'revoked by the user' })
      .where('realm_id', '=', realmId)
      .where('user_id', '=', userId)
      .where('client_id', '=', clientId)
      .where('organization_id', '=', organizationId)
      .where('revoked_at', 'is', null)
      .executeTakeFirst();
    return Number(r.numUpdatedRows);
  }

  async getChain(chainId: string): Promise<RefreshChain | undefined> {
    const r = await this.db.kysely.selectFrom('refresh_chains').selectAll().where('id', '=', chainId).executeTakeFirst();
    return r ? toChain(r) : undefined;
  }
}

/** A refresh token as introspection and revocation see it. */
export interface RefreshTokenState {
  token: RefreshToken;
  chain: RefreshChain;
  username: string | null;
  userEnabled: boolean;
}

export class TokenStateRepository {
  constructor(private readonly db: Kysely<Database>) {}

  async refreshToken(hash: string): Promise<RefreshTokenState | undefined> {
    const r = await this.db
      .selectFrom('refresh_tokens as t')
      .innerJoin('refresh_chains as c', 'c.id', 't.chain_id')
      .leftJoin('users as u', 'u.id', 'c.user_id')
      .selectAll('c')
      .select(['t.hash', 't.created_at as t_created_at', 't.expires_at as t_expires_at', 't.used_at as t_used_at', 'u.username', 'u.enabled as user_enabled'])
      .where('t.hash', '=', hash)
      .executeTakeFirst();
    if (!r) return undefined;
    return {
      token: { hash: r.hash, chainId: r.id, createdAt: Number(r.t_created_at), expiresAt: Number(r.t_expires_at), usedAt: r.t_used_at === null ? null : Number(r.t_used_at) },
      chain: toChain(r),
      username: r.username,
      userEnabled: r.user_enabled === 1,
    };
  }

  async revokeAccessToken(jti: string, realmId: string, expiresAt: number): Promise<void> {
    await this.db
      .insertInto('revoked_access_tokens')
      .values({ jti, realm_id: realmId, expires_at: expiresAt })
      .onConflict((oc) => oc.column('jti').doNothing())
      .execute();
  }

  async isAccessTokenRevoked(jti: string): Promise<boolean> {
    return (await this.db.selectFrom('revoked_access_tokens').select('jti').where('jti', '=', jti).executeTakeFirst()) !== undefined;
  }

  async deleteExpiredRevocations(now: number): Promise<number> {
    const r = await this.db.deleteFrom('revoked_access_tokens').where('expires_at', '<', now).executeTakeFirst();
    return Number(r.numDeletedRows);
  }
}
