import type { Kysely } from 'kysely';
import type { Database } from '../schema.js';
import { inTransaction } from './in-transaction.js';
import type { UserStorageMapper, UserStorageProvider } from '../types.js';

type Row = Database['user_storage_providers'];

function toProvider(r: Row): UserStorageProvider {
  return {
    id: r.id,
    realmId: r.realm_id,
    name: r.name,
    providerId: 'ldap',
    config: JSON.parse(r.config) as Record<string, string[]>,
    sealedBindCredential: r.bind_credential,
    mappers: JSON.parse(r.mappers) as UserStorageMapper[],
    createdAt: Number(r.created_at),
  };
}

function toRow(p: UserStorageProvider): Row {
  return {
    id: p.id,
    realm_id: p.realmId,
    name: p.name,
    provider_id: p.providerId,
    config: JSON.stringify(p.config),
    bind_credential: p.sealedBindCredential,
    mappers: JSON.stringify(p.mappers),
    created_at: p.createdAt,
  };
}

/** A realm's user storage providers (Keycloak's UserStorageProvider components: LDAP directories). */
export class UserStorageRepository {
  constructor(private readonly db: Kysely<Database>) {}

  /** The realm's providers, oldest first (Keycloak's order of equal priorities). */
  async list(realmId: string): Promise<UserStorageProvider[]> {
    const rows = await this.db.selectFrom('user_storage_providers').selectAll().where('realm_id', '=', realmId).orderBy('created_at').orderBy('id').execute();
    return rows.map(toProvider);
  }

  async get(realmId: string, id: string): Promise<UserStorageProvider | undefined> {
    const r = await this.db.selectFrom('user_storage_providers').selectAll().where('realm_id', '=', realmId).where('id', '=', id).executeTakeFirst();
    return r ? toProvider(r) : undefined;
  }

  /** Whether the realm has any provider: the sign-in asks LDAP only then (and loads the LDAP client only then). */
  async any(realmId: string): Promise<boolean> {
    const r = await this.db.selectFrom('user_storage_providers').select('id').where('realm_id', '=', realmId).limit(1).executeTakeFirst();
    return r !== undefined;
  }

  async create(p: UserStorageProvider): Promise<void> {
    await this.db.insertInto('user_storage_providers').values(toRow(p)).execute();
  }

  async update(p: UserStorageProvider): Promise<void> {
    const { id, realm_id, created_at, ...rest } = toRow(p);
    void created_at;
    await this.db.updateTable('user_storage_providers').set(rest).where('id', '=', id).where('realm_id', '=', realm_id).execute();
  }

  /** Deletes the provider; its users stay, unlinked, in the same transaction (see the operation). */
  async delete(realmId: string, id: string): Promise<boolean> {
    return inTransaction(this.db, async (trx) => {
      const r = await trx.deleteFrom('user_storage_providers').where('realm_id', '=', realmId).where('id', '=', id).executeTakeFirst();
      await trx.updateTable('users').set({ federation_link: null }).where('realm_id', '=', realmId).where('federation_link', '=', id).execute();
      return Number(r.numDeletedRows) > 0;
    });
  }
}
