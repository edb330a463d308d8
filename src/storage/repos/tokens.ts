import type { Kysely } from 'kysely';
import type { Database } from '../schema.js';
import type { AuthorizationCode, RefreshChain, RefreshToken, Subject } from '../types.js';
import type { Db } from '../database.js';
import { kyselyTokenStatements, type ChainValues, type TokenStatements } from '../token-statements.js';
import type { EventTable } from '../schema.js';
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
  /** RFC 9449 5: the key thumbprint the chain is bound to (a public client's, with a proof); absent: none. */
  dpopJkt?: string | null;
}

export type Decision<R> = { reject: R } | { chain: NewChain; token: NewToken };

export type RedeemOutcome<R> =
  | { status: 'not_found' }
  | { status: 'foreign' }
  | { status: 'reused'; code: AuthorizationCode }
  | { status: 'rejected'; reason: R }
  | { status: 'issued'; code: AuthorizationCode; chain: RefreshChain; token: NewToken; subject: Subject };

export type RotateDecision<R> = { reject: R } | { next: NewToken };

export type RotateOutcome<R> =
  | { status: 'not_found' }
  /** newer: the token is of a later generation than its chain (the database was restored from an earlier backup): ended too, not a reuse. */
  | { status: 'reused'; chain: RefreshChain; newer?: boolean }
  | { status: 'rejected'; reason: R; chain: RefreshChain }
  /** grace: the presented token had already been rotated; the grace window gave it a successor. */
  | { status: 'rotated'; chain: RefreshChain; token: NewToken; subject: Subject; grace: boolean };

/** The refresh token presented, as its claims describe it. */
export interface PresentedToken {
  hash: string;
  chainId: string;
  generation: number;
  issuedAt: number;
  expiresAt: number;
  /**
   * Whether its signature holds, when the caller has not checked it yet. A token whose hash is the chain's
   * current one needs no more proof; any other is checked before it counts as a reuse or gets a grace
   * answer, and is not found (nothing changes) if it fails.
   */
  signed?: () => boolean;
}

/**
 * A rotation already decided from the verified claims of a current token (see CurrentAdvance): where
 * the database can run it as one statement, it is tried first, and the full path runs only if the row is
 * not exactly what the claims say.
 */
export interface Foreseen<T extends NewToken> {
  expect: { realmId: string; clientId: string; userId: string; sessionId: string; scopes: readonly string[]; notBefore: number };
  next: T;
}

/** The realm's refresh concurrency grace (Realm.refreshGraceSeconds, refreshGraceMax); 0 seconds: off. */
export interface GracePolicy {
  seconds: number;
  max: number;
}

/** Who asked, for the audit event written inside the transaction. */
export interface AuditInfo {
  ip: string | null;
  /** The realm's optional event types to store (Realm.storedEventTypes); undefined: the defaults. */
  storedEventTypes?: readonly string[];
}

/** The authenticated client presenting a code. */
export interface Presenter {
  realmId: string;
  clientId: string;
}

function auditRow(type: EventType, outcome: 'success' | 'failure', chain: { realmId: string; clientId: string; userId: string }, now: number, info: AuditInfo | undefined, reason?: string, username?: string) {
  return eventRow({ id: sortableId(), time: now, realmId: chain.realmId, type, outcome, clientId: chain.clientId, userId: chain.userId, username: username ?? null, ip: info?.ip ?? null, reason: reason ?? null });
}

const CODE_REUSED = 'authorization code reused';
const TOKEN_REUSED = 'refresh token reused';
const TOKEN_NEWER = 'refresh token newer than its chain: the database is older than the token (restored from a backup?)';

/** The row of a new refresh chain (an offline session). */
export function chainValues(chain: RefreshChain, firstTokenHash: string): ChainValues {
  return {
    current_hash: firstTokenHash,
    generation: 1,
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
    dpop_jkt: chain.dpopJkt ?? null,
  };
}

/** Creates a refresh chain (an offline session) and returns it. */
export async function startChain(s: { insertChain(c: ChainValues): Promise<void> }, chain: RefreshChain, firstTokenHash: string): Promise<RefreshChain> {
  await s.insertChain(chainValues(chain, firstTokenHash));
  return chain;
}

/**
 * Redeems a code: marks it used whatever `decide` says (a code is good for one attempt), and when
 * `decide` accepts, creates the refresh chain and its first token in the same step. A code that was
 * already used revokes the chain its first redemption created (RFC 6749 4.1.2, RFC 9700 4.5). A code of
 * another client changes nothing: otherwise whoever saw a leaked code could burn it, or revoke its grant,
 * and so deny the user's login (issue 12).
 * PostgreSQL: two round trips (the read, then one statement that claims and creates).
 */
async function redeemIn<R>(
  s: TokenStatements,
  hash: string,
  now: number,
  decide: (code: AuthorizationCode, subject: Subject) => Decision<R>,
  info?: AuditInfo,
  presenter?: Presenter,
): Promise<RedeemOutcome<R>> {
  const row = await s.findCode(hash);
  if (!row) return { status: 'not_found' };
  const code = toCode(row);
  if (presenter && (code.realmId !== presenter.realmId || code.clientId !== presenter.clientId)) return { status: 'foreign' };
  const reused = async (): Promise<RedeemOutcome<R>> => {
    // A concurrent redemption may have claimed the code after our read: its claim named the chain in
    // the same committed step, so reading the code again finds the chain to revoke.
    const chainId = code.chainId ?? (await s.findCode(hash))?.chain_id;
    const event = auditRow('TOKEN_REUSE', 'failure', code, now, info, CODE_REUSED, row.username ?? undefined);
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
    dpopJkt: d.chain.dpopJkt ?? null,
  };
  const redeemed = await s.redeemCode({
    hash,
    now,
    chain: chainValues(chain, d.token.hash),
    event: isEventStored(info?.storedEventTypes, 'CODE_TO_TOKEN', 'success') ? auditRow('CODE_TO_TOKEN', 'success', chain, now, info, undefined, subject.username) : null,
  });
  if (!redeemed) return reused();
  return { status: 'issued', code, chain, token: d.token, subject };
}

/**
 * Rotates a refresh token. Storage is per chain: the chain's row holds its current token's hash, and a
 * rotation is one conditional update of that row (exactly one of concurrent rotations wins); no token
 * row is written. A token whose hash is the chain's current hash is the one the server issued; any other
 * must be signed (`presented.signed`, unless the caller verified it), and a signed token of this chain
 * that is not the current one is of an earlier generation: it was used already,
 * so it leaked, and the whole chain is revoked (RFC 9700 4.14.2). Unless the realm's grace window
 * covers it: presented again within `grace.seconds` of the rotation that replaced it, at most
 * `grace.max` times, it gets a successor (a client that lost the response, two tabs refreshing at once).
 * `decide` either rejects (nothing changes) or names the successor, whose generation it is given.
 * PostgreSQL: two round trips (the read, the conditional update), or one when `foreseen` holds for the row
 * (TokenStatements.advanceCurrent).
 */
async function rotateIn<R>(
  s: TokenStatements,
  presented: PresentedToken,
  now: number,
  grace: GracePolicy,
  decide: (token: RefreshToken, chain: RefreshChain, subject: Subject, generation: number) => RotateDecision<R>,
  info?: AuditInfo,
  foreseen?: Foreseen<NewToken>,
): Promise<RotateOutcome<R>> {
  if (foreseen && s.advanceCurrent) {
    const e = foreseen.expect;
    const row = await s.advanceCurrent({
      id: presented.chainId,
      expectHash: presented.hash,
      generation: presented.generation,
      realmId: e.realmId,
      clientId: e.clientId,
      userId: e.userId,
      sessionId: e.sessionId,
      scopes: JSON.stringify(e.scopes),
      minMaxExpiresAt: foreseen.next.expiresAt,
      notBefore: e.notBefore,
      nextHash: foreseen.next.hash,
      now,
      // The username is not known before the statement: it takes it from the user's row it joins (the
      // one it returns), so the event names the user without another query.
      event: isEventStored(info?.storedEventTypes, 'REFRESH_TOKEN', 'success') ? auditRow('REFRESH_TOKEN', 'success', e, now, info) : null,
    });
    if (row) return { status: 'rotated', chain: toChain(row), token: foreseen.next, subject: toSubject(row), grace: false };
  }
  let chain: RefreshChain | undefined;
  // The user's name, from the chain's row (read with the user's): the events name the user by it.
  let username: string | undefined;
  const reused = async (c: RefreshChain): Promise<RotateOutcome<R>> => {
    await s.revokeChain({ id: c.id, now, reason: TOKEN_REUSED, event: auditRow('TOKEN_REUSE', 'failure', c, now, info, TOKEN_REUSED, username) });
    return { status: 'reused', chain: c };
  };
  // A signed token of a later generation than its chain's: only this server issued it, to a database that
  // has since gone back in time (a restore). No reuse alarm; the chain still ends, so that whoever holds
  // one of its older tokens, which the restored row may accept, cannot use it either. The grant's
  // REFRESH_TOKEN_ERROR says why.
  const newer = async (c: RefreshChain): Promise<RotateOutcome<R>> => {
    await s.revokeChain({ id: c.id, now, reason: TOKEN_NEWER, event: null });
    return { status: 'reused', chain: c, newer: true };
  };
  // Whether the token was current at some reading (then a lost race does not make it suspect).
  let authentic = false;
  // A lost race re-reads the row once more: the winner's rotation may put this token in the grace window.
  for (let attempt = 0; attempt < 3; attempt++) {
    const row = await s.findChain(presented.chainId);
    if (!row) return { status: 'not_found' };
    const current = row.current_hash !== null && row.current_hash === presented.hash;
    if (current) authentic = true;
    else if (!authentic && presented.signed && !presented.signed()) return { status: 'not_found' };
    chain = toChain(row);
    username = row.username ?? undefined;
    const inGrace =
      !current &&
      row.current_hash !== null &&
      chain.revokedAt === null &&
      grace.seconds > 0 &&
      row.rotated_at !== null &&
      now - Number(row.rotated_at) <= grace.seconds &&
      row.grace_used < grace.max &&
      presented.generation >= row.grace_from_gen;
    if (!current && presented.generation > row.generation) return newer(chain);
    if (!current && !inGrace) return reused(chain);
    const token: RefreshToken = { hash: presented.hash, chainId: chain.id, createdAt: presented.issuedAt, expiresAt: presented.expiresAt, usedAt: null };
    const subject = toSubject(row);
    const generation = Math.max(row.generation, presented.generation) + 1;
    const d = decide(token, chain, subject, generation);
    if ('reject' in d) return { status: 'rejected', reason: d.reject, chain };
    // Not stored by default (counted by the grant instead): a row per refresh would grow without bound.
    const event = isEventStored(info?.storedEventTypes, 'REFRESH_TOKEN', 'success')
      ? auditRow('REFRESH_TOKEN', 'success', chain, now, info, inGrace ? 'grace: the presented token had been rotated' : undefined, username)
      : null;
    const advanced = await s.advanceChain(
      current
        ? { id: chain.id, expectHash: presented.hash, nextHash: d.next.hash, generation, rotatedAt: now, graceFromGen: presented.generation, graceUsed: 0, event }
        : // The grace answer leaves the window where it was: it runs from the rotation, not from this answer.
          { id: chain.id, expectHash: row.current_hash!, nextHash: d.next.hash, generation, rotatedAt: Number(row.rotated_at), graceFromGen: row.grace_from_gen, graceUsed: row.grace_used + 1, event },
    );
    if (advanced) return { status: 'rotated', chain, token: d.next, subject, grace: inGrace };
  }
  // Still losing after re-reading: as many concurrent rotations as the grace allows, and more.
  return reused(chain!);
}

export class CodeRepository {
  constructor(private readonly db: Db) {}

  private get k(): Kysely<Database> {
    return this.db.kysely;
  }

  async create(c: Omit<AuthorizationCode, 'usedAt' | 'chainId' | 'resources'> & { resources?: string[] }): Promise<void> {
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
        resources: JSON.stringify(c.resources ?? []),
        dpop_jkt: c.dpopJkt ?? null,
      })
      .execute();
  }

  /** See redeemIn: one transaction, committed before the outcome is returned. */
  redeem<R>(hash: string, now: number, decide: (code: AuthorizationCode, subject: Subject) => Decision<R>, info?: AuditInfo, presenter?: Presenter): Promise<RedeemOutcome<R>> {
    return this.db.runTokenTransaction((s) => redeemIn(s, hash, now, decide, info, presenter));
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

  /** Whether a Foreseen rotation saves anything here (a round trip on PostgreSQL); elsewhere it is not worth minting. */
  get rotatesInOneStatement(): boolean {
    return this.db.rotatesInOneStatement === true;
  }

  /**
   * A chain started without an authorization code (the password grant): the chain holding its first
   * token's hash, and its event, committed together.
   */
  async create(chain: RefreshChain, firstTokenHash: string, event: EventTable | null): Promise<void> {
    await this.db.kysely.transaction().execute(async (trx) => {
      const s = kyselyTokenStatements(trx);
      await startChain(s, chain, firstTokenHash);
      if (event) await s.insertEvent(event);
    });
  }

  /** See rotateIn: one transaction, committed before the outcome is returned. */
  rotate<R>(
    presented: PresentedToken,
    now: number,
    grace: GracePolicy,
    decide: (token: RefreshToken, chain: RefreshChain, subject: Subject, generation: number) => RotateDecision<R>,
    info?: AuditInfo,
    foreseen?: Foreseen<NewToken>,
  ): Promise<RotateOutcome<R>> {
    return this.db.runTokenTransaction((s) => rotateIn(s, presented, now, grace, decide, info, foreseen));
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
      // A chain was last used at its last rotation, or when it started.
      .select(['c.client_id', 'c.organization_id', (eb) => eb.fn.max(eb.fn.coalesce('c.rotated_at', 'c.created_at')).as('last_used'), (eb) => eb.fn.count('c.id').distinct().as('chains')])
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

  /**
   * Revokes the user's live chains (a password change), all of them or only the online ones: a chain
   * is offline when it was granted offline_access. Returns how many were revoked.
   */
  async revokeUserChains(realmId: string, userId: string, now: number, opts: { keepOffline: boolean; reason: string }): Promise<number> {
    const live = await this.db.kysely
      .selectFrom('refresh_chains')
      .select(['id', 'scopes'])
      .where('realm_id', '=', realmId)
      .where('user_id', '=', userId)
      .where('revoked_at', 'is', null)
      .execute();
    const ids = live.filter((c) => !(opts.keepOffline && (JSON.parse(c.scopes) as string[]).includes('offline_access'))).map((c) => c.id);
    if (ids.length === 0) return 0;
    const r = await this.db.kysely
      .updateTable('refresh_chains')
      .set({ revoked_at: now, revoked_reason: opts.reason })
      .where('id', 'in', ids)
      .where('revoked_at', 'is', null)
      .executeTakeFirst();
    return Number(r.numUpdatedRows);
  }

  /**
   * A refresh token from before refresh tokens were JWTs (opaque) names no chain: its row in the old
   * per-token table does. Such rows are never written any more; they only map a legacy token to its chain.
   */
  async legacyToken(hash: string): Promise<{ chainId: string; createdAt: number; expiresAt: number } | undefined> {
    const r = await this.db.kysely.selectFrom('refresh_tokens').select(['chain_id', 'created_at', 'expires_at']).where('hash', '=', hash).executeTakeFirst();
    return r ? { chainId: r.chain_id, createdAt: Number(r.created_at), expiresAt: Number(r.expires_at) } : undefined;
  }

  async getChain(chainId: string): Promise<RefreshChain | undefined> {
    const r = await this.db.kysely.selectFrom('refresh_chains').selectAll().where('id', '=', chainId).executeTakeFirst();
    return r ? toChain(r) : undefined;
  }
}

/** A refresh token as introspection and revocation see it. */
export interface RefreshTokenState {
  /** The chain's current token (the one a refresh accepts), not an earlier generation. */
  current: boolean;
  chain: RefreshChain;
  username: string | null;
  userEnabled: boolean;
}

export class TokenStateRepository {
  constructor(private readonly db: Kysely<Database>) {}

  /** The state of a (verified) refresh token of chain `chainId`, by its hash. */
  async refreshToken(hash: string, chainId: string): Promise<RefreshTokenState | undefined> {
    const r = await this.db
      .selectFrom('refresh_chains as c')
      .leftJoin('users as u', 'u.id', 'c.user_id')
      .selectAll('c')
      .select(['u.username', 'u.enabled as user_enabled'])
      .where('c.id', '=', chainId)
      .executeTakeFirst();
    if (!r) return undefined;
    return { current: r.current_hash === hash, chain: toChain(r), username: r.username, userEnabled: r.user_enabled === 1 };
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
