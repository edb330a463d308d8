import { sql, type Kysely, type RawBuilder, type SqlBool } from 'kysely';
import type { Database } from '../schema.js';
import { inTransaction } from './in-transaction.js';
import { ConflictError, type Organization } from '../types.js';
import { isUniqueViolation } from '../dialects/errors.js';

export interface OrganizationDomain {
  name: string;
  verified: boolean;
}

/** An organization as administrators see it (Keycloak 26's OrganizationRepresentation fields). */
export interface OrganizationDetails extends Organization {
  description: string;
  enabled: boolean;
  /** Where a member who joined through an invitation goes (null: the account page). */
  redirectUrl: string | null;
  domains: OrganizationDomain[];
  createdAt: number;
}

export interface OrganizationQuery {
  search?: string;
  exact?: boolean;
  first?: number;
  max?: number;
}

export interface OrganizationPatch {
  alias?: string;
  name?: string;
  description?: string;
  enabled?: boolean;
  redirectUrl?: string | null;
}

/** Administration of organizations: details, updates, deletion, members and domains. */
export class OrganizationAdminRepository {
  constructor(private readonly db: Kysely<Database>) {}

  async get(id: string): Promise<OrganizationDetails | undefined> {
    const r = await this.db.selectFrom('organizations').selectAll().where('id', '=', id).executeTakeFirst();
    if (!r) return undefined;
    return { ...toDetails(r), domains: (await this.domainsOf([r.id])).get(r.id) ?? [] };
  }

  /** Matches the search text against name, alias and domains (substring, or whole when `exact`). */
  async list(realmId: string, q: OrganizationQuery): Promise<OrganizationDetails[]> {
    let query = this.db.selectFrom('organizations').selectAll().where('realm_id', '=', realmId);
    if (q.search) {
      const s = q.search.toLowerCase();
      const domainIds = this.db.selectFrom('organization_domains').select('organization_id').where('realm_id', '=', realmId);
      query = query.where((eb) =>
        eb.or([
          matches(sql.ref('name'), s, q.exact),
          matches(sql.ref('alias'), s, q.exact),
          eb('id', 'in', domainIds.where(matches(sql.ref('domain'), s, q.exact))),
        ]),
      );
    }
    const rows = await query.orderBy('name').orderBy('id').offset(q.first ?? 0).limit(q.max ?? 100).execute();
    const domains = await this.domainsOf(rows.map((r) => r.id));
    return rows.map((r) => ({ ...toDetails(r), domains: domains.get(r.id) ?? [] }));
  }

  /** The organizations the user belongs to, disabled ones included. */
  async ofUser(userId: string): Promise<OrganizationDetails[]> {
    const rows = await this.db
      .selectFrom('organizations')
      .selectAll()
      .where('id', 'in', this.db.selectFrom('memberships').select('organization_id').where('user_id', '=', userId))
      .orderBy('name')
      .execute();
    const domains = await this.domainsOf(rows.map((r) => r.id));
    return rows.map((r) => ({ ...toDetails(r), domains: domains.get(r.id) ?? [] }));
  }

  async count(realmId: string): Promise<number> {
    const r = await this.db.selectFrom('organizations').select((eb) => eb.fn.countAll().as('n')).where('realm_id', '=', realmId).executeTakeFirstOrThrow();
    return Number(r.n);
  }

  /** Updates the organization and, when `domains` is given, replaces its domains, in one transaction. */
  async update(id: string, realmId: string, patch: OrganizationPatch, domains?: OrganizationDomain[]): Promise<void> {
    const values: Record<string, string | number | null> = {};
    if (patch.alias !== undefined) values.alias = patch.alias;
    if (patch.name !== undefined) values.name = patch.name;
    if (patch.description !== undefined) values.description = patch.description;
    if (patch.enabled !== undefined) values.enabled = patch.enabled ? 1 : 0;
    if (patch.redirectUrl !== undefined) values.redirect_url = patch.redirectUrl;
    try {
      await inTransaction(this.db, async (trx) => {
        if (Object.keys(values).length > 0) await trx.updateTable('organizations').set(values).where('id', '=', id).execute();
        if (domains !== undefined) {
          await trx.deleteFrom('organization_domains').where('organization_id', '=', id).execute();
          if (domains.length > 0) {
            await trx
              .insertInto('organization_domains')
              .values(domains.map((d) => ({ organization_id: id, realm_id: realmId, domain: d.name, verified: d.verified ? 1 : 0 })))
              .execute();
          }
        }
      });
    } catch (err) {
      if (isUniqueViolation(err)) throw new ConflictError('another organization of the realm already has this alias or one of these domains');
      throw err;
    }
  }

  /** Deletes the organization; memberships and domains go with it (foreign keys), consents and chains here; its identity providers are unlinked. */
  async delete(id: string, realmId: string, now: number): Promise<void> {
    await inTransaction(this.db, async (trx) => {
      await trx.deleteFrom('consents').where('realm_id', '=', realmId).where('organization_id', '=', id).execute();
      await trx
        .updateTable('refresh_chains')
        .set({ revoked_at: now, revoked_reason: 'organization deleted' })
        .where('realm_id', '=', realmId)
        .where('organization_id', '=', id)
        .where('revoked_at', 'is', null)
        .execute();
      // Its identity providers stay, no longer the organization's (their users' links stay too).
      await trx.updateTable('identity_providers').set({ organization_id: null }).where('realm_id', '=', realmId).where('organization_id', '=', id).execute();
      await trx.deleteFrom('organizations').where('id', '=', id).execute();
    });
  }

  async members(organizationId: string, page: { first?: number; max?: number }): Promise<string[]> {
    const rows = await this.db
      .selectFrom('memberships')
      .innerJoin('users', 'users.id', 'memberships.user_id')
      .select('users.id')
      .where('memberships.organization_id', '=', organizationId)
      .orderBy('users.username')
      .offset(page.first ?? 0)
      .limit(page.max ?? 100)
      .execute();
    return rows.map((r) => r.id);
  }

  async isMember(organizationId: string, userId: string): Promise<boolean> {
    const r = await this.db.selectFrom('memberships').select('user_id').where('organization_id', '=', organizationId).where('user_id', '=', userId).executeTakeFirst();
    return r !== undefined;
  }

  /** Removes the membership and revokes the user's chains bound to the organization. True when it existed. */
  async removeMember(organizationId: string, userId: string, now: number): Promise<boolean> {
    return inTransaction(this.db, async (trx) => {
      const r = await trx.deleteFrom('memberships').where('organization_id', '=', organizationId).where('user_id', '=', userId).executeTakeFirst();
      await trx
        .updateTable('refresh_chains')
        .set({ revoked_at: now, revoked_reason: 'organization membership removed' })
        .where('organization_id', '=', organizationId)
        .where('user_id', '=', userId)
        .where('revoked_at', 'is', null)
        .execute();
      return Number(r.numDeletedRows) > 0;
    });
  }

  /** Revokes every live chain bound to the organization (when it is disabled). */
  async revokeChains(organizationId: string, now: number, reason: string): Promise<number> {
    const r = await this.db
      .updateTable('refresh_chains')
      .set({ revoked_at: now, revoked_reason: reason })
      .where('organization_id', '=', organizationId)
      .where('revoked_at', 'is', null)
      .executeTakeFirst();
    return Number(r.numUpdatedRows);
  }

  private async domainsOf(ids: string[]): Promise<Map<string, OrganizationDomain[]>> {
    const out = new Map<string, OrganizationDomain[]>();
    if (ids.length === 0) return out;
    const rows = await this.db.selectFrom('organization_domains').selectAll().where('organization_id', 'in', ids).orderBy('domain').execute();
    for (const r of rows) {
      const list = out.get(r.organization_id) ?? [];
      list.push({ name: r.domain, verified: r.verified === 1 });
      out.set(r.organization_id, list);
    }
    return out;
  }
}

function toDetails(r: { id: string; realm_id: string; alias: string; name: string; description: string; enabled: number; redirect_url: string | null; created_at: number }): Omit<OrganizationDetails, 'domains'> {
  return { id: r.id, realmId: r.realm_id, alias: r.alias, name: r.name, description: r.description, enabled: r.enabled === 1, redirectUrl: r.redirect_url ?? null, createdAt: Number(r.created_at) };
}

/**
 * Case-insensitive match of a column against lower-cased text: equality when `exact`, else substring.
 * LIKE treats % and _ as wildcards, so they are escaped; ESCAPE is spelled out because SQLite has no
 * default escape character.
 */
export function matches(column: RawBuilder<unknown>, lowered: string, exact?: boolean): RawBuilder<SqlBool> {
  if (exact) return sql<SqlBool>`lower(${column}) = ${lowered}`;
  const pattern = `%${lowered.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
  return sql<SqlBool>`lower(${column}) like ${pattern} escape '\\'`;
}
