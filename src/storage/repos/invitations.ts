import { sql, type Kysely, type Selectable } from 'kysely';
import type { Database, OrganizationInvitationTable } from '../schema.js';

export interface Invitation {
  id: string;
  realmId: string;
  organizationId: string;
  email: string;
  firstName: string | null;
  lastName: string | null;
  /** The existing user invited; null: the link registers a new user. */
  userId: string | null;
  createdAt: number;
  expiresAt: number;
}

/** Keycloak's invitation filters (status PENDING or EXPIRED at `now`; email exact; the others contain, any case). */
export interface InvitationQuery {
  now: number;
  status?: 'PENDING' | 'EXPIRED';
  email?: string;
  search?: string;
  firstName?: string;
  lastName?: string;
  first?: number;
  max?: number;
}

const toInvitation = (r: Selectable<OrganizationInvitationTable>): Invitation => ({
  id: r.id,
  realmId: r.realm_id,
  organizationId: r.organization_id,
  email: r.email,
  firstName: r.first_name,
  lastName: r.last_name,
  userId: r.user_id,
  createdAt: Number(r.created_at),
  expiresAt: Number(r.expires_at),
});

/** LIKE's own characters taken literally (the pattern is the user's text). */
const contains = (text: string): string => `%${text.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`)}%`;

/** Invitations into organizations, found by id, by organization and email, or by the hash of their link's secret. */
export class InvitationRepository {
  constructor(private readonly db: Kysely<Database>) {}

  async create(inv: Invitation, secretHash: string): Promise<void> {
    await this.db
      .insertInto('organization_invitations')
      .values({ id: inv.id, realm_id: inv.realmId, organization_id: inv.organizationId, email: inv.email, first_name: inv.firstName, last_name: inv.lastName, user_id: inv.userId, secret_hash: secretHash, created_at: inv.createdAt, expires_at: inv.expiresAt })
      .execute();
  }

  async get(id: string): Promise<Invitation | undefined> {
    const r = await this.db.selectFrom('organization_invitations').selectAll().where('id', '=', id).executeTakeFirst();
    return r && toInvitation(r);
  }

  async bySecretHash(realmId: string, secretHash: string): Promise<Invitation | undefined> {
    const r = await this.db.selectFrom('organization_invitations').selectAll().where('secret_hash', '=', secretHash).where('realm_id', '=', realmId).executeTakeFirst();
    return r && toInvitation(r);
  }

  async byEmail(organizationId: string, email: string): Promise<Invitation | undefined> {
    const r = await this.db.selectFrom('organization_invitations').selectAll().where('organization_id', '=', organizationId).where('email', '=', email).orderBy('created_at', 'desc').executeTakeFirst();
    return r && toInvitation(r);
  }

  async list(organizationId: string, q: InvitationQuery): Promise<Invitation[]> {
    let s = this.db.selectFrom('organization_invitations').selectAll().where('organization_id', '=', organizationId);
    if (q.status === 'PENDING') s = s.where('expires_at', '>', q.now);
    if (q.status === 'EXPIRED') s = s.where('expires_at', '<=', q.now);
    if (q.email !== undefined) s = s.where('email', '=', q.email.toLowerCase());
    const like = (col: 'email' | 'first_name' | 'last_name', text: string) => sql<boolean>`lower(${sql.ref(col)}) like ${contains(text)} escape '\\'`;
    if (q.firstName !== undefined) s = s.where(like('first_name', q.firstName));
    if (q.lastName !== undefined) s = s.where(like('last_name', q.lastName));
    if (q.search !== undefined) { const t = q.search; s = s.where((eb) => eb.or([like('email', t), like('first_name', t), like('last_name', t)])); }
    const rows = await s.orderBy('created_at', 'desc').orderBy('id').limit(q.max ?? 100).offset(q.first ?? 0).execute();
    return rows.map(toInvitation);
  }

  /** Deletes it; false when there was none. */
  async delete(id: string): Promise<boolean> {
    const r = await this.db.deleteFrom('organization_invitations').where('id', '=', id).executeTakeFirst();
    return Number(r.numDeletedRows) === 1;
  }

  /** Uses it once: one conditional delete, so that of two requests with the same link one wins. */
  async consume(id: string, secretHash: string, now: number): Promise<boolean> {
    const r = await this.db.deleteFrom('organization_invitations').where('id', '=', id).where('secret_hash', '=', secretHash).where('expires_at', '>', now).executeTakeFirst();
    return Number(r.numDeletedRows) === 1;
  }

  /** The collector's slice: invitations expired before `before`. */
  async deleteExpired(before: number, limit: number): Promise<number> {
    const ids = (await this.db.selectFrom('organization_invitations').select('id').where('expires_at', '<', before).limit(limit).execute()).map((r) => r.id);
    if (ids.length === 0) return 0;
    const r = await this.db.deleteFrom('organization_invitations').where('id', 'in', ids).where('expires_at', '<', before).executeTakeFirst();
    return Number(r.numDeletedRows);
  }
}
