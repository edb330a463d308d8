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

  /** The ids of the realm's users imported from the provider (their federationLink), by username. */
  async linkedUserIds(realmId: string, id: string): Promise<string[]> {
    const rows = await this.db.selectFrom('users').select('id').where('realm_id', '=', realmId).where('federation_link', '=', id).orderBy('username').execute();
    return rows.map((r) => r.id);
  }

  /** Keycloak's unlinkUsers: the provider's users become local users (federationLink NULL); returns their ids. */
  async unlinkUsers(realmId: string, id: string): Promise<string[]> {
    // One statement: exactly the users it unlinked, even with a sign-in importing one meanwhile.
    const rows = await this.db.updateTable('users').set({ federation_link: null }).where('realm_id', '=', realmId).where('federation_link', '=', id).returning('id').execute();
    return rows.map((r) => r.id);
  }

  // ---- What the group and role mappers made or matched (ldap_mapper_links) ----

  /**
   * The groups (or roles) a mapper made or matched that still exist, with the directory group's name
   * (and a group's parent); links to deleted ones are left out (and forgotten by the next sync).
   */
  async links(mapperId: string, kind: LinkKind): Promise<Array<{ targetId: string; name: string; parentId: string }>> {
    const base = this.db.selectFrom('ldap_mapper_links').where('mapper_id', '=', mapperId).where('kind', '=', kind);
    const rows =
      kind === 'group'
        ? await base.innerJoin('groups', 'groups.id', 'ldap_mapper_links.target_id').select(['ldap_mapper_links.target_id', 'ldap_mapper_links.name', 'groups.parent_id']).execute()
        : await base.innerJoin('roles', 'roles.id', 'ldap_mapper_links.target_id').select(['ldap_mapper_links.target_id', 'ldap_mapper_links.name', 'roles.client_id as parent_id']).execute();
    return rows.map((r) => ({ targetId: r.target_id, name: r.name, parentId: r.parent_id }));
  }

  /** Forgets the links of a mapper whose group or role was deleted. */
  async pruneLinks(mapperId: string, kind: LinkKind): Promise<void> {
    const live = new Set((await this.links(mapperId, kind)).map((l) => l.targetId));
    const all = await this.db.selectFrom('ldap_mapper_links').select('target_id').where('mapper_id', '=', mapperId).where('kind', '=', kind).execute();
    await this.unlink(mapperId, kind, all.map((r) => r.target_id).filter((id) => !live.has(id)));
  }

  /** Records a link (idempotent: two sign-ins may record the same one at once). */
  async link(mapperId: string, kind: LinkKind, targetId: string, name: string): Promise<void> {
    await this.db.insertInto('ldap_mapper_links').values({ mapper_id: mapperId, kind, target_id: targetId, name }).onConflict((oc) => oc.columns(['mapper_id', 'kind', 'target_id']).doNothing()).execute();
  }

  async unlink(mapperId: string, kind: LinkKind, targetIds: string[]): Promise<void> {
    if (targetIds.length === 0) return;
    await this.db.deleteFrom('ldap_mapper_links').where('mapper_id', '=', mapperId).where('kind', '=', kind).where('target_id', 'in', targetIds).execute();
  }

  /** The mappers that made or matched this group or role. */
  async linksOf(targetId: string): Promise<Array<{ mapperId: string; kind: LinkKind }>> {
    const rows = await this.db.selectFrom('ldap_mapper_links').select(['mapper_id', 'kind']).where('target_id', '=', targetId).execute();
    return rows.map((r) => ({ mapperId: r.mapper_id, kind: r.kind }));
  }

  /** Forgets a mapper's links (the mapper deleted); its groups and roles stay, as local ones. */
  async unlinkMappers(mapperIds: string[]): Promise<void> {
    if (mapperIds.length === 0) return;
    await this.db.deleteFrom('ldap_mapper_links').where('mapper_id', 'in', mapperIds).execute();
  }
}

export type LinkKind = 'group' | 'role';
