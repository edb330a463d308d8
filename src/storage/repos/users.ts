import { sortableId } from '../../crypto/random.js';
import { sql, type Kysely, type SqlBool } from 'kysely';
import type { Database } from '../schema.js';
import { inTransaction } from './in-transaction.js';
import { ConflictError, type Organization, type RequiredAction, type User, type UserAttributes } from '../types.js';
import { isUniqueViolation } from '../dialects/errors.js';
import { toUser } from './mappers.js';
import { attributeIndexRows } from '../attribute-index.js';

export class UserRepository {
  constructor(private readonly db: Kysely<Database>) {}

  /** Creates a user and, in the same transaction, its organization memberships. */
  async create(
    u: Omit<User, 'createdAt' | 'enabled' | 'requiredActions' | 'attributes' | 'passwordChangedAt'> & { now: number; organizationIds: string[]; requiredActions?: RequiredAction[]; attributes?: UserAttributes; passwordChangedAt?: number; federationLink?: string | null; enabled?: boolean },
  ): Promise<void> {
    try {
      await inTransaction(this.db, async (trx) => {
        await trx
          .insertInto('users')
          .values({
            id: u.id,
            realm_id: u.realmId,
            username: u.username,
            email: u.email,
            password_hash: u.passwordHash,
            enabled: u.enabled === false ? 0 : 1,
            created_at: u.now,
            first_name: u.firstName,
            last_name: u.lastName,
            email_verified: u.emailVerified ? 1 : 0,
            required_actions: JSON.stringify(u.requiredActions ?? []),
            attributes: JSON.stringify(u.attributes ?? {}),
            password_changed_at: u.passwordChangedAt ?? u.now,
            ...(u.federationLink ? { federation_link: u.federationLink } : {}),
          })
          .execute();
        // The search index of the attributes, with them (src/storage/attribute-index.ts).
        await insertIndexRows(trx, attributeIndexRows(u.realmId, u.id, u.attributes ?? {}));
        if (u.organizationIds.length > 0) {
          await trx
            .insertInto('memberships')
            .values(u.organizationIds.map((organization_id) => ({ organization_id, user_id: u.id })))
            .execute();
        }
      });
    } catch (err) {
      if (isUniqueViolation(err)) throw new ConflictError(`user ${u.username} already exists in realm ${u.realmId}`);
      throw err;
    }
  }

  async findByUsername(realmId: string, username: string): Promise<User | undefined> {
    const row = await this.db
      .selectFrom('users')
      .selectAll()
      .where('realm_id', '=', realmId)
      .where('username', '=', username)
      .executeTakeFirst();
    return row ? toUser(row) : undefined;
  }

  /**
   * The users of the realm with this email, ignoring case, at most `limit` (two tell "unique" from "shared"):
   * the index users_realm_email (realm_id, lower(email)).
   */
  async findByEmail(realmId: string, email: string, limit = 2): Promise<User[]> {
    const rows = await this.db
      .selectFrom('users')
      .selectAll()
      .where('realm_id', '=', realmId)
      .where(sql<SqlBool>`lower(email) = ${email.toLowerCase()}`)
      .orderBy('id')
      .limit(limit)
      .execute();
    return rows.map(toUser);
  }

  async get(id: string): Promise<User | undefined> {
    const row = await this.db.selectFrom('users').selectAll().where('id', '=', id).executeTakeFirst();
    return row ? toUser(row) : undefined;
  }

  /** The username of a user of the realm (undefined: no such user), for a caller that has not read the user. */
  async usernameOf(realmId: string, id: string): Promise<string | undefined> {
    const row = await this.db.selectFrom('users').select('username').where('id', '=', id).where('realm_id', '=', realmId).executeTakeFirst();
    return row?.username;
  }

  async list(realmId: string): Promise<User[]> {
    const rows = await this.db.selectFrom('users').selectAll().where('realm_id', '=', realmId).orderBy('username').execute();
    return rows.map(toUser);
  }

  async update(
    id: string,
    patch: { passwordHash?: string; enabled?: boolean; email?: string | null; firstName?: string | null; lastName?: string | null; emailVerified?: boolean; requiredActions?: RequiredAction[]; attributes?: UserAttributes; username?: string; federationLink?: string | null },
  ): Promise<void> {
    const values: Record<string, string | number | null> = {};
    if (patch.username !== undefined) values.username = patch.username;
    if (patch.federationLink !== undefined) values.federation_link = patch.federationLink;
    if (patch.firstName !== undefined) values.first_name = patch.firstName;
    if (patch.lastName !== undefined) values.last_name = patch.lastName;
    if (patch.emailVerified !== undefined) values.email_verified = patch.emailVerified ? 1 : 0;
    if (patch.passwordHash !== undefined) values.password_hash = patch.passwordHash;
    if (patch.enabled !== undefined) values.enabled = patch.enabled ? 1 : 0;
    if (patch.email !== undefined) values.email = patch.email;
    // One statement with the password: a new password and the end of UPDATE_PASSWORD land together.
    if (patch.requiredActions !== undefined) values.required_actions = JSON.stringify([...new Set(patch.requiredActions)]);
    // The whole set: Keycloak's PUT with attributes replaces them all.
    if (patch.attributes === undefined) {
      if (Object.keys(values).length > 0) await this.db.updateTable('users').set(values).where('id', '=', id).execute();
      return;
    }
    const attributes = patch.attributes;
    values.attributes = JSON.stringify(attributes);
    // The attributes and their search index change together.
    await inTransaction(this.db, async (trx) => {
      const row = await trx.updateTable('users').set(values).where('id', '=', id).returning('realm_id').executeTakeFirst();
      await trx.deleteFrom('user_attribute_values').where('user_id', '=', id).execute();
      if (row) await insertIndexRows(trx, attributeIndexRows(row.realm_id, id, attributes));
    });
  }

  /**
   * Sets a new password (its hash, the time, the required actions after it) in one transaction with the
   * history passwordHistory(N) needs: `keepHistory` earlier hashes are kept, the one replaced first among
   * them; 0 forgets them all (no policy asks for them).
   */
  async setPassword(user: Pick<User, 'id' | 'realmId' | 'passwordHash'>, input: { passwordHash: string; now: number; requiredActions?: RequiredAction[]; keepHistory: number }): Promise<void> {
    await inTransaction(this.db, async (trx) => {
      if (input.keepHistory > 0 && !user.passwordHash.startsWith('!')) {
        await trx.insertInto('password_history').values({ id: sortableId(), user_id: user.id, realm_id: user.realmId, password_hash: user.passwordHash, created_at: input.now }).execute();
      }
      const kept = trx.selectFrom('password_history').select('id').where('user_id', '=', user.id).orderBy('created_at', 'desc').orderBy('id', 'desc').limit(input.keepHistory);
      // The ids to keep are read first: one plain statement per database, no LIMIT inside NOT IN.
      const keep = input.keepHistory > 0 ? (await kept.execute()).map((r) => r.id) : [];
      let del = trx.deleteFrom('password_history').where('user_id', '=', user.id);
      if (keep.length > 0) del = del.where('id', 'not in', keep);
      await del.execute();
      const values: Record<string, string | number> = { password_hash: input.passwordHash, password_changed_at: input.now };
      if (input.requiredActions !== undefined) values.required_actions = JSON.stringify([...new Set(input.requiredActions)]);
      await trx.updateTable('users').set(values).where('id', '=', user.id).execute();
    });
  }

  /** The user's earlier password hashes, the most recent first, at most `limit`. */
  async passwordHistory(userId: string, limit: number): Promise<string[]> {
    if (limit <= 0) return [];
    const rows = await this.db.selectFrom('password_history').select('password_hash').where('user_id', '=', userId).orderBy('created_at', 'desc').orderBy('id', 'desc').limit(limit).execute();
    return rows.map((r) => r.password_hash);
  }

  /** The user's earlier password hashes with when each was replaced, the most recent first (the export). */
  async passwordHistoryEntries(userId: string): Promise<Array<{ passwordHash: string; createdAt: number }>> {
    const rows = await this.db.selectFrom('password_history').select(['password_hash', 'created_at']).where('user_id', '=', userId).orderBy('created_at', 'desc').orderBy('id', 'desc').execute();
    return rows.map((r) => ({ passwordHash: r.password_hash, createdAt: Number(r.created_at) }));
  }

  /** Keeps earlier hashes (an import's password-history credentials), with their times. */
  async addPasswordHistory(user: Pick<User, 'id' | 'realmId'>, entries: Array<{ passwordHash: string; createdAt: number }>): Promise<void> {
    if (entries.length === 0) return;
    await this.db.insertInto('password_history').values(entries.map((e) => ({ id: sortableId(), user_id: user.id, realm_id: user.realmId, password_hash: e.passwordHash, created_at: e.createdAt }))).execute();
  }

  async organizations(userId: string): Promise<Organization[]> {
    const rows = await this.db
      .selectFrom('memberships')
      .innerJoin('organizations', 'organizations.id', 'memberships.organization_id')
      .select(['organizations.id', 'organizations.realm_id', 'organizations.alias', 'organizations.name'])
      .where('memberships.user_id', '=', userId)
      // A disabled organization cannot be chosen at login (Keycloak 26) until it is enabled again.
      .where('organizations.enabled', '=', 1)
      .orderBy('organizations.name')
      .execute();
    return rows.map((r) => ({ id: r.id, realmId: r.realm_id, alias: r.alias, name: r.name }));
  }

  async addMembership(userId: string, organizationId: string): Promise<void> {
    await this.db
      .insertInto('memberships')
      .values({ user_id: userId, organization_id: organizationId })
      .onConflict((oc) => oc.columns(['organization_id', 'user_id']).doNothing())
      .execute();
  }
}

export class OrganizationRepository {
  constructor(private readonly db: Kysely<Database>) {}

  async create(o: Organization & { now: number }): Promise<void> {
    try {
      await this.db.insertInto('organizations').values({ id: o.id, realm_id: o.realmId, alias: o.alias, name: o.name, created_at: o.now }).execute();
    } catch (err) {
      if (isUniqueViolation(err)) throw new ConflictError(`organization ${o.alias} already exists in realm ${o.realmId}`);
      throw err;
    }
  }

  async findByAlias(realmId: string, alias: string): Promise<Organization | undefined> {
    const r = await this.db.selectFrom('organizations').selectAll().where('realm_id', '=', realmId).where('alias', '=', alias).executeTakeFirst();
    return r ? { id: r.id, realmId: r.realm_id, alias: r.alias, name: r.name } : undefined;
  }

  async get(id: string): Promise<Organization | undefined> {
    const r = await this.db.selectFrom('organizations').selectAll().where('id', '=', id).executeTakeFirst();
    return r ? { id: r.id, realmId: r.realm_id, alias: r.alias, name: r.name } : undefined;
  }

  async list(realmId: string): Promise<Organization[]> {
    const rows = await this.db.selectFrom('organizations').selectAll().where('realm_id', '=', realmId).orderBy('alias').execute();
    return rows.map((r) => ({ id: r.id, realmId: r.realm_id, alias: r.alias, name: r.name }));
  }
}

/** Inserts index rows, at most 200 a statement (4 parameters each: within every database's limit). */
async function insertIndexRows(db: Kysely<Database>, rows: ReturnType<typeof attributeIndexRows>): Promise<void> {
  for (let i = 0; i < rows.length; i += 200) await db.insertInto('user_attribute_values').values(rows.slice(i, i + 200)).execute();
}
