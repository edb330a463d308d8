import { sql, type Kysely } from 'kysely';
import type { Database } from '../schema.js';
import { inTransaction } from './in-transaction.js';
import type { User } from '../types.js';
import { toUser } from './mappers.js';
import { matches } from './organization-admin.js';
import type { DialectName } from '../database.js';
import { attributeContains } from '../dialects/json-attributes.js';
import { attributeValueKey } from '../attribute-index.js';

/** Keycloak's user search: `search` over username, email and names, or field filters; exact or substring. */
export interface UserQuery {
  search?: string;
  username?: string;
  email?: string;
  firstName?: string;
  lastName?: string;
  /** Keycloak's `q`: every [name, value] must be a value of that attribute (ignoring case; containing it when exact is false). */
  attributes?: ReadonlyArray<readonly [string, string]>;
  exact?: boolean;
  enabled?: boolean;
  first?: number;
  max?: number;
}

/** Administration of users beyond creation: search, membership changes, deletion. */
export class UserAdminRepository {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly dialect: DialectName,
  ) {}

  async search(realmId: string, q: UserQuery): Promise<User[]> {
    const rows = await this.filtered(realmId, q).selectAll().orderBy('username').offset(q.first ?? 0).limit(q.max ?? 100).execute();
    return rows.map(toUser);
  }

  /** Which of these users have a TOTP authenticator (Keycloak's `totp` of a user listing): one indexed query. */
  async withOtp(userIds: readonly string[]): Promise<Set<string>> {
    if (userIds.length === 0) return new Set();
    const rows = await this.db.selectFrom('otp_credentials').select('user_id').distinct().where('user_id', 'in', [...userIds]).execute();
    return new Set(rows.map((r) => r.user_id));
  }

  /** The users of `userIds` with a security key (`key`: a second factor) or a passkey (`passkey`), one query. */
  async withWebAuthn(userIds: readonly string[]): Promise<Map<string, { key: boolean; passkey: boolean }>> {
    const out = new Map<string, { key: boolean; passkey: boolean }>();
    if (userIds.length === 0) return out;
    const rows = await this.db.selectFrom('webauthn_credentials').select(['user_id', 'passwordless']).distinct().where('user_id', 'in', [...userIds]).execute();
    for (const r of rows) {
      const m = out.get(r.user_id) ?? { key: false, passkey: false };
      if (Number(r.passwordless) === 1) m.passkey = true;
      else m.key = true;
      out.set(r.user_id, m);
    }
    return out;
  }

  async count(realmId: string, q: UserQuery): Promise<number> {
    const r = await this.filtered(realmId, q).select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow();
    return Number(r.n);
  }

  private filtered(realmId: string, q: UserQuery) {
    let query = this.db.selectFrom('users').where('realm_id', '=', realmId);
    if (q.search !== undefined && q.search !== '' && q.search !== '*') {
      // Keycloak: a search "*" lists everyone; a trailing or leading * is the substring wildcard.
      const s = q.search.replace(/^\*|\*$/g, '').toLowerCase();
      query = query.where((eb) =>
        eb.or([matches(sql.ref('username'), s, q.exact), matches(sql.ref('email'), s, q.exact), matches(sql.ref('first_name'), s, q.exact), matches(sql.ref('last_name'), s, q.exact)]),
      );
    }
    if (q.username !== undefined) query = query.where(matches(sql.ref('username'), q.username.toLowerCase(), q.exact));
    if (q.email !== undefined) query = query.where(matches(sql.ref('email'), q.email.toLowerCase(), q.exact));
    if (q.firstName !== undefined) query = query.where(matches(sql.ref('first_name'), q.firstName.toLowerCase(), q.exact));
    if (q.lastName !== undefined) query = query.where(matches(sql.ref('last_name'), q.lastName.toLowerCase(), q.exact));
    // Keycloak: an attribute's value matches exactly unless exact=false is given. Exact: the index of
    // attribute values (src/storage/attribute-index.ts), not a scan of every user's attributes.
    for (const [name, value] of q.attributes ?? []) {
      if (q.exact === false) query = query.where(attributeContains(this.dialect, name, value));
      else {
        const indexed = this.db.selectFrom('user_attribute_values').select('user_id').where('realm_id', '=', realmId).where('name', '=', name).where('value_key', '=', attributeValueKey(value));
        query = query.where('id', 'in', indexed);
      }
    }
    if (q.enabled !== undefined) query = query.where('enabled', '=', q.enabled ? 1 : 0);
    return query;
  }

  /** Replaces the user's organization memberships; chains bound to an organization left are revoked. */
  async setOrganizations(userId: string, organizationIds: string[], now: number): Promise<void> {
    await inTransaction(this.db, async (trx) => {
      const current = (await trx.selectFrom('memberships').select('organization_id').where('user_id', '=', userId).execute()).map((r) => r.organization_id);
      const removed = current.filter((id) => !organizationIds.includes(id));
      const added = organizationIds.filter((id) => !current.includes(id));
      if (removed.length > 0) {
        await trx.deleteFrom('memberships').where('user_id', '=', userId).where('organization_id', 'in', removed).execute();
        await trx
          .updateTable('refresh_chains')
          .set({ revoked_at: now, revoked_reason: 'organization membership removed' })
          .where('user_id', '=', userId)
          .where('organization_id', 'in', removed)
          .where('revoked_at', 'is', null)
          .execute();
      }
      if (added.length > 0) await trx.insertInto('memberships').values(added.map((organization_id) => ({ organization_id, user_id: userId }))).execute();
    });
  }

  /**
   * Deletes the user and everything of theirs: memberships, consents and browser sessions go with the
   * row (foreign keys); refresh chains, codes, device grants, pending interactions and failure
   * counters are deleted here, in the same transaction. Audit events stay: they are the record.
   */
  async delete(user: User): Promise<void> {
    await inTransaction(this.db, async (trx) => {
      await trx.deleteFrom('refresh_chains').where('realm_id', '=', user.realmId).where('user_id', '=', user.id).execute();
      await trx.deleteFrom('authorization_codes').where('user_id', '=', user.id).execute();
      await trx.deleteFrom('device_codes').where('user_id', '=', user.id).execute();
      await trx.deleteFrom('interactions').where('user_id', '=', user.id).execute();
      await trx.deleteFrom('user_roles').where('user_id', '=', user.id).execute();
      await trx.deleteFrom('group_members').where('user_id', '=', user.id).execute();
      await trx.deleteFrom('user_attribute_values').where('user_id', '=', user.id).execute();
      await trx.deleteFrom('otp_credentials').where('user_id', '=', user.id).execute();
      await trx.deleteFrom('recovery_codes').where('user_id', '=', user.id).execute();
      await trx.deleteFrom('webauthn_credentials').where('user_id', '=', user.id).execute();
      await trx.deleteFrom('password_history').where('user_id', '=', user.id).execute();
      await trx.deleteFrom('federated_identities').where('user_id', '=', user.id).execute();
      await trx.deleteFrom('login_failures').where('realm_id', '=', user.realmId).where('subject', '=', `user:${user.username}`).execute();
      await trx.deleteFrom('users').where('id', '=', user.id).execute();
    });
  }
}
