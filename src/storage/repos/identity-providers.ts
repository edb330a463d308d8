import type { Kysely } from 'kysely';
import type { Database } from '../schema.js';
import { inTransaction } from './in-transaction.js';
import { ConflictError, type FederatedIdentity, type IdentityProvider, type IdentityProviderMapper, type IdentityProviderType } from '../types.js';
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

type MapperRow = Database['identity_provider_mappers'];

function toMapper(r: MapperRow): IdentityProviderMapper {
  return {
    id: r.id,
    realmId: r.realm_id,
    identityProvider: r.identity_provider,
    name: r.name,
    type: r.mapper_type,
    config: JSON.parse(r.config) as Record<string, string>,
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

  /** Deletes the provider, its mappers and every user's link to it, in one transaction. */
  async delete(realmId: string, alias: string): Promise<boolean> {
    return inTransaction(this.db, async (trx) => {
      await trx.deleteFrom('federated_identities').where('realm_id', '=', realmId).where('identity_provider', '=', alias).execute();
      await trx.deleteFrom('identity_provider_mappers').where('realm_id', '=', realmId).where('identity_provider', '=', alias).execute();
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

  // ---- The providers' mappers (Keycloak's identity provider mappers) ----

  /** A provider's mappers, by name. */
  async mappers(realmId: string, alias: string): Promise<IdentityProviderMapper[]> {
    const rows = await this.db.selectFrom('identity_provider_mappers').selectAll().where('realm_id', '=', realmId).where('identity_provider', '=', alias).orderBy('name').orderBy('id').execute();
    return rows.map(toMapper);
  }

  /** Every mapper of the realm's providers, by provider and name (the export). */
  async realmMappers(realmId: string): Promise<IdentityProviderMapper[]> {
    const rows = await this.db.selectFrom('identity_provider_mappers').selectAll().where('realm_id', '=', realmId).orderBy('identity_provider').orderBy('name').execute();
    return rows.map(toMapper);
  }

  async mapper(realmId: string, alias: string, id: string): Promise<IdentityProviderMapper | undefined> {
    const r = await this.db.selectFrom('identity_provider_mappers').selectAll().where('realm_id', '=', realmId).where('identity_provider', '=', alias).where('id', '=', id).executeTakeFirst();
    return r ? toMapper(r) : undefined;
  }

  /** Adds a mapper; a ConflictError when the provider has one of that name. */
  async createMapper(m: IdentityProviderMapper): Promise<void> {
    try {
      await this.db
        .insertInto('identity_provider_mappers')
        .values({ id: m.id, realm_id: m.realmId, identity_provider: m.identityProvider, name: m.name, mapper_type: m.type, config: JSON.stringify(m.config), created_at: m.createdAt })
        .execute();
    } catch (err) {
      if (isUniqueViolation(err)) throw new ConflictError(`identity provider ${m.identityProvider} has a mapper named ${m.name} already`);
      throw err;
    }
  }

  /** Replaces a mapper's name, type and config; a ConflictError when another mapper of the provider has the name. */
  async updateMapper(m: IdentityProviderMapper): Promise<boolean> {
    try {
      const r = await this.db
        .updateTable('identity_provider_mappers')
        .set({ name: m.name, mapper_type: m.type, config: JSON.stringify(m.config) })
        .where('realm_id', '=', m.realmId)
        .where('identity_provider', '=', m.identityProvider)
        .where('id', '=', m.id)
        .executeTakeFirst();
      return Number(r.numUpdatedRows) === 1;
    } catch (err) {
      if (isUniqueViolation(err)) throw new ConflictError(`identity provider ${m.identityProvider} has a mapper named ${m.name} already`);
      throw err;
    }
  }

  async deleteMapper(realmId: string, alias: string, id: string): Promise<boolean> {
    const r = await this.db.deleteFrom('identity_provider_mappers').where('realm_id', '=', realmId).where('identity_provider', '=', alias).where('id', '=', id).executeTakeFirst();
    return Number(r.numDeletedRows) === 1;
  }
}
