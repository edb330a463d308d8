import type { Expression, ExpressionBuilder, Kysely, Selectable, SqlBool } from 'kysely';
import type { Database, ProtocolMapperTable } from '../schema.js';
import { ConflictError, type MapperOwnerType, type ProtocolMapper } from '../types.js';
import { isUniqueViolation } from '../dialects/errors.js';

/** Who a mapper belongs to: a client or a client scope of a realm. */
export interface MapperOwner {
  realmId: string;
  ownerType: MapperOwnerType;
  owner: string;
}

/** The name, type and config an update may change. */
export type MapperPatch = Pick<ProtocolMapper, 'name' | 'type' | 'config'>;

function parseConfig(json: string): Record<string, string> {
  const v: unknown = JSON.parse(json);
  const out: Record<string, string> = {};
  if (v && typeof v === 'object' && !Array.isArray(v)) for (const [k, x] of Object.entries(v)) if (typeof x === 'string') out[k] = x;
  return out;
}

function toMapper(r: Selectable<ProtocolMapperTable>): ProtocolMapper {
  return {
    id: r.id,
    realmId: r.realm_id,
    ownerType: r.owner_type === 'scope' ? 'scope' : 'client',
    owner: r.owner,
    name: r.name,
    type: r.type,
    config: parseConfig(r.config),
    createdAt: Number(r.created_at),
  };
}

/** The rows of one owner (and of one id in it, when given). */
function ownedBy(o: MapperOwner, id?: string) {
  return (eb: ExpressionBuilder<Database, 'protocol_mappers'>): Expression<SqlBool> =>
    eb.and({ realm_id: o.realmId, owner_type: o.ownerType, owner: o.owner, ...(id !== undefined ? { id } : {}) });
}

/** Deletes the mappers of a client or scope: called inside the transaction that deletes their owner. */
export async function deleteOwnedMappers(db: Kysely<Database>, realmId: string, ownerType: MapperOwnerType, owner: string): Promise<void> {
  await db.deleteFrom('protocol_mappers').where(ownedBy({ realmId, ownerType, owner })).execute();
}

const duplicate = (m: { name: string }): ConflictError => new ConflictError(`Protocol mapper exists with same name: ${m.name}`);

/** Keycloak's protocol mappers of clients and client scopes. */
export class ProtocolMapperRepository {
  constructor(private readonly db: Kysely<Database>) {}

  /**
   * Every mapper of the realm (the token path reads them once per cache window). By name: the order
   * in which one owner's mappers apply (a later one writing the same claim wins) is stable.
   */
  async listRealm(realmId: string): Promise<ProtocolMapper[]> {
    const rows = await this.db.selectFrom('protocol_mappers').selectAll().where('realm_id', '=', realmId).orderBy('name').execute();
    return rows.map(toMapper);
  }

  async list(o: MapperOwner): Promise<ProtocolMapper[]> {
    const rows = await this.db.selectFrom('protocol_mappers').selectAll().where(ownedBy(o)).orderBy('name').execute();
    return rows.map(toMapper);
  }

  async get(o: MapperOwner, id: string): Promise<ProtocolMapper | undefined> {
    const row = await this.db.selectFrom('protocol_mappers').selectAll().where(ownedBy(o, id)).executeTakeFirst();
    return row ? toMapper(row) : undefined;
  }

  async create(m: ProtocolMapper): Promise<void> {
    try {
      await this.db
        .insertInto('protocol_mappers')
        .values({ id: m.id, realm_id: m.realmId, owner_type: m.ownerType, owner: m.owner, name: m.name, type: m.type, config: JSON.stringify(m.config), created_at: m.createdAt })
        .execute();
    } catch (err) {
      if (isUniqueViolation(err)) throw duplicate(m);
      throw err;
    }
  }

  async update(o: MapperOwner, id: string, patch: MapperPatch): Promise<boolean> {
    try {
      const r = await this.db
        .updateTable('protocol_mappers')
        .set({ name: patch.name, type: patch.type, config: JSON.stringify(patch.config) })
        .where(ownedBy(o, id))
        .executeTakeFirst();
      return Number(r.numUpdatedRows) === 1;
    } catch (err) {
      if (isUniqueViolation(err)) throw duplicate(patch);
      throw err;
    }
  }

  async delete(o: MapperOwner, id: string): Promise<boolean> {
    const r = await this.db.deleteFrom('protocol_mappers').where(ownedBy(o, id)).executeTakeFirst();
    return Number(r.numDeletedRows) === 1;
  }
}
