import type { Kysely } from 'kysely';
import type { Database } from '../schema.js';
import { inTransaction } from './in-transaction.js';
import { ConflictError, type FederatedIdentity, type IdentityProvider, type IdentityProviderType } from '../types.js';
import { isUniqueViolation } from '../dialects/errors.js';

type ProviderRow = Database['identity_providers'];

function toProvider(r: ProviderRow): IdentityProvider {
  return {
    id: r.id,
    realmId: r.realm_id,
    alias: r.alias,
    providerId: r.provider_id as IdentityProviderType,
    displayName: r.display_name,
    enabled: Number(r.enabled) === 1,
    hideOnLogin: Number(r.hide_on_login) === 1,
    trustEmail: Number(r.trust_email) === 1,
    linkOnly: Number(r.link_only) === 1,
    organizationId: r.organization_id,
    config: JSON.parse(r.config) as Record<string, string>,
    sealedClientSecret: r.client_secret,
    createdAt: Number(r.created_at),
  };
}

function toRow(p: IdentityProvider): ProviderRow {
  return {
    id: p.id,
    realm_id: p.realmId,
    alias: p.alias,
    provider_id: p.providerId,
    display_name: p.displayName,
    enabled: p.enabled ? 1 : 0,
    hide_on_login: p.hideOnLogin ? 1 : 0,
    trust_email: p.trustEmail ? 1 : 0,
    link_only: p.linkOnly ? 1 : 0,
    organization_id: p.organizationId,
    config: JSON.stringify(p.config),
    client_secret: p.sealedClientSecret,
    created_at: p.createdAt,
  };
}

type LinkRow = Database['federated_identities'];

function toLink(r: LinkRow): FederatedIdentity {
  return {
    realmId: r.realm_id,
    identityProvider: r.identity_provider,
    federatedUserId: r.federated_user_id,
    federatedUsername: r.federated_username,
    userId: r.user_id,
    createdAt: Number(r.created_at),
  };
}

/** A realm's identity providers and its users' accounts at them (Keycloak's federated identities). */
export class IdentityProviderRepository {
  constructor(private readonly db: Kysely<Database>) {}

  /** The realm's providers, by alias. */
  async list(realmId: string): Promise<IdentityProvider[]> {
    const rows = await this.db.selectFrom('identity_providers').selectAll().where('realm_id', '=', realmId).orderBy('alias').execute();
    return rows.map(toProvider);
  }

  async get(realmId: string, alias: string): Promise<IdentityProvider | undefined> {
    const r = await this.db.selectFrom('identity_providers').selectAll().where('realm_id', '=', realmId).where('alias', '=', alias).executeTakeFirst();
    return r ? toProvider(r) : undefined;
  }

  async create(p: IdentityProvider): Promise<void> {
    try {
      await this.db.insertInto('identity_providers').values(toRow(p)).execute();
    } catch (err) {
      if (isUniqueViolation(err)) throw new ConflictError(`identity provider ${p.alias} already exists in realm ${p.realmId}`);
      throw err;
    }
  }

  /** Replaces everything of the provider but its id, realm, alias and creation time. */
  async update(p: IdentityProvider): Promise<boolean> {
    const { id: _id, realm_id: _r, alias: _a, created_at: _c, ...values } = toRow(p);
    const r = await this.db.updateTable('identity_providers').set(values).where('realm_id', '=', p.realmId).where('alias', '=', p.alias).executeTakeFirst();
    return Number(r.numUpdatedRows) === 1;
  }

  /** Deletes the provider and every user's link to it, in one transaction. */
  async delete(realmId: string, alias: string): Promise<boolean> {
    return inTransaction(this.db, async (trx) => {
      await trx.deleteFrom('federated_identities').where('realm_id', '=', realmId).where('identity_provider', '=', alias).execute();
      const r = await trx.deleteFrom('identity_providers').where('realm_id', '=', realmId).where('alias', '=', alias).executeTakeFirst();
      return Number(r.numDeletedRows) === 1;
    });
  }

  /** The user linked to an account at the provider, if any. */
  async findLink(realmId: string, alias: string, federatedUserId: string): Promise<FederatedIdentity | undefined> {
    const r = await this.db
      .selectFrom('federated_identities')
      .selectAll()
      .where('realm_id', '=', realmId)
      .where('identity_provider', '=', alias)
      .where('federated_user_id', '=', federatedUserId)
      .executeTakeFirst();
    return r ? toLink(r) : undefined;
  }

  /** A user's links, by provider alias. */
  async links(userId: string): Promise<FederatedIdentity[]> {
    const rows = await this.db.selectFrom('federated_identities').selectAll().where('user_id', '=', userId).orderBy('identity_provider').execute();
    return rows.map(toLink);
  }

  /** Links an account at a provider to a user; a ConflictError when either side is linked already. */
  async link(l: FederatedIdentity): Promise<void> {
    try {
      await this.db
        .insertInto('federated_identities')
        .values({
          realm_id: l.realmId,
          identity_provider: l.identityProvider,
          federated_user_id: l.federatedUserId,
          federated_username: l.federatedUsername,
          user_id: l.userId,
          created_at: l.createdAt,
        })
        .execute();
    } catch (err) {
      if (isUniqueViolation(err)) throw new ConflictError(`the ${l.identityProvider} account ${l.federatedUserId} or the user is linked already`);
      throw err;
    }
  }

  async unlink(userId: string, alias: string): Promise<boolean> {
    const r = await this.db.deleteFrom('federated_identities').where('user_id', '=', userId).where('identity_provider', '=', alias).executeTakeFirst();
    return Number(r.numDeletedRows) === 1;
  }
}
