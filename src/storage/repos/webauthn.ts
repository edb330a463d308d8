import type { Kysely, Selectable } from 'kysely';
import type { Database, WebAuthnCredentialTable } from '../schema.js';
import type { WebAuthnCredential } from '../types.js';
import { isUniqueViolation } from '../dialects/errors.js';
import { ConflictError } from '../types.js';

function parseTransports(s: string): string[] {
  try {
    const v: unknown = JSON.parse(s);
    return Array.isArray(v) ? v.filter((t): t is string => typeof t === 'string') : [];
  } catch {
    return [];
  }
}

function toCredential(r: Selectable<WebAuthnCredentialTable>): WebAuthnCredential {
  return {
    id: r.id,
    realmId: r.realm_id,
    userId: r.user_id,
    label: r.label,
    credentialId: Buffer.from(r.credential_id, 'base64url'),
    publicKey: Buffer.from(r.public_key, 'base64'),
    alg: Number(r.alg),
    aaguid: r.aaguid,
    signCount: Number(r.sign_count),
    attestationFormat: r.attestation_format,
    transports: parseTransports(r.transports),
    createdAt: Number(r.created_at),
    passwordless: Number(r.passwordless) === 1,
  };
}

/** Users' WebAuthn security keys (Keycloak's webauthn credentials) and the challenges given out for them. */
export class WebAuthnRepository {
  constructor(private readonly db: Kysely<Database>) {}

  /** The user's keys, oldest first: every one, or only the two-factor ones (`kind` 'two-factor') or the passwordless ones. */
  async list(userId: string, kind?: 'two-factor' | 'passwordless'): Promise<WebAuthnCredential[]> {
    let q = this.db.selectFrom('webauthn_credentials').selectAll().where('user_id', '=', userId);
    if (kind) q = q.where('passwordless', '=', kind === 'passwordless' ? 1 : 0);
    const rows = await q.orderBy('created_at').orderBy('id').execute();
    return rows.map(toCredential);
  }

  /** Whether the user has a two-factor security key (Keycloak's webauthn; one indexed lookup). */
  async has(userId: string): Promise<boolean> {
    return (await this.db.selectFrom('webauthn_credentials').select('id').where('user_id', '=', userId).where('passwordless', '=', 0).limit(1).executeTakeFirst()) !== undefined;
  }

  /** Whether a user of the realm has a passwordless key (the login page then offers "Sign in with a passkey"). */
  async realmHasPasswordless(realmId: string): Promise<boolean> {
    return (await this.db.selectFrom('webauthn_credentials').select('id').where('realm_id', '=', realmId).where('passwordless', '=', 1).limit(1).executeTakeFirst()) !== undefined;
  }

  /** Adds a key; a credential id the user has already is a ConflictError. */
  async create(c: WebAuthnCredential): Promise<void> {
    try {
      await this.db
        .insertInto('webauthn_credentials')
        .values({
          id: c.id,
          realm_id: c.realmId,
          user_id: c.userId,
          label: c.label,
          credential_id: c.credentialId.toString('base64url'),
          public_key: c.publicKey.toString('base64'),
          alg: c.alg,
          aaguid: c.aaguid,
          sign_count: c.signCount,
          attestation_format: c.attestationFormat,
          transports: JSON.stringify(c.transports),
          created_at: c.createdAt,
          passwordless: c.passwordless ? 1 : 0,
        })
        .execute();
    } catch (err) {
      if (isUniqueViolation(err)) throw new ConflictError('the user has this security key already');
      throw err;
    }
  }

  async rename(userId: string, id: string, label: string | null): Promise<boolean> {
    const r = await this.db.updateTable('webauthn_credentials').set({ label }).where('id', '=', id).where('user_id', '=', userId).executeTakeFirst();
    return Number(r.numUpdatedRows) === 1;
  }

  async delete(userId: string, id: string): Promise<boolean> {
    const r = await this.db.deleteFrom('webauthn_credentials').where('id', '=', id).where('user_id', '=', userId).executeTakeFirst();
    return Number(r.numDeletedRows) === 1;
  }

  /**
   * Moves the key's signature counter from `from` to `to`, once: one conditional update, so that of two
   * assertions with the same counter (a replay, a clone) at most one wins.
   */
  async advanceCounter(id: string, from: number, to: number): Promise<boolean> {
    const r = await this.db.updateTable('webauthn_credentials').set({ sign_count: to }).where('id', '=', id).where('sign_count', '=', from).executeTakeFirst();
    return Number(r.numUpdatedRows) === 1;
  }

  /** Stores a challenge's hash for `boundTo`, replacing the earlier ones of that binding and purpose. */
  async putChallenge(c: { hash: string; realmId: string; boundTo: string; purpose: string; expiresAt: number }): Promise<void> {
    await this.db.deleteFrom('webauthn_challenges').where('bound_to', '=', c.boundTo).where('purpose', '=', c.purpose).execute();
    await this.db.insertInto('webauthn_challenges').values({ hash: c.hash, realm_id: c.realmId, bound_to: c.boundTo, purpose: c.purpose, expires_at: c.expiresAt }).execute();
  }

  /** Consumes a challenge: true once, for its binding and purpose, before it expires (one conditional delete). */
  async consumeChallenge(c: { hash: string; boundTo: string; purpose: string; now: number }): Promise<boolean> {
    const r = await this.db.deleteFrom('webauthn_challenges').where('hash', '=', c.hash).where('bound_to', '=', c.boundTo).where('purpose', '=', c.purpose).where('expires_at', '>', c.now).executeTakeFirst();
    return Number(r.numDeletedRows) === 1;
  }

  /** The collector's slice: challenges expired before `now`. */
  async deleteExpiredChallenges(now: number, limit: number): Promise<number> {
    const old = this.db.selectFrom('webauthn_challenges').select('hash').where('expires_at', '<=', now).limit(limit);
    const r = await this.db.deleteFrom('webauthn_challenges').where('hash', 'in', old).executeTakeFirst();
    return Number(r.numDeletedRows);
  }
}
