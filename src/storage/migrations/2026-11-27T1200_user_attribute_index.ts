import type { Kysely } from 'kysely';
import { attributeIndexRows } from '../attribute-index.js';

// The index of user attribute values (src/storage/attribute-index.ts): Keycloak's exact attribute search
// (GET /users?q=name:value, keycloak-admin-client's users.find({ q })) looks the users up by it instead of
// reading every user's attributes column. Filled here from the attributes already stored; written with
// them from then on. Additive only; frozen once landed.
/** The two tables as this migration reads and writes them (the application's schema may change later). */
interface Tables {
  users: { id: string; realm_id: string; attributes: string };
  user_attribute_values: { realm_id: string; name: string; value_key: string; user_id: string };
}

export async function up(untyped: Kysely<unknown>): Promise<void> {
  const db = untyped as unknown as Kysely<Tables>;
  await db.schema
    .createTable('user_attribute_values')
    .addColumn('realm_id', 'varchar(64)', (c) => c.notNull())
    .addColumn('name', 'varchar(255)', (c) => c.notNull())
    .addColumn('value_key', 'varchar(255)', (c) => c.notNull())
    .addColumn('user_id', 'varchar(36)', (c) => c.notNull())
    .addPrimaryKeyConstraint('user_attribute_values_pk', ['realm_id', 'name', 'value_key', 'user_id'])
    .execute();
  await db.schema.createIndex('user_attribute_values_user').on('user_attribute_values').column('user_id').execute();
  // The users that have attributes, 500 at a time in id order (a large table is never read whole).
  let after = '';
  for (;;) {
    const users = await db.selectFrom('users').select(['id', 'realm_id', 'attributes']).where('id', '>', after).where('attributes', '<>', '{}').orderBy('id').limit(500).execute();
    if (users.length === 0) break;
    const rows = users.flatMap((u) => {
      let parsed: unknown;
      try {
        parsed = JSON.parse(u.attributes);
      } catch {
        return [];
      }
      return parsed && typeof parsed === 'object' && !Array.isArray(parsed) ? attributeIndexRows(u.realm_id, u.id, parsed as Record<string, string[]>) : [];
    });
    // At most 200 rows a statement (4 parameters each: below SQLite's and PostgreSQL's limits).
    for (let i = 0; i < rows.length; i += 200) await db.insertInto('user_attribute_values').values(rows.slice(i, i + 200)).execute();
    after = users[users.length - 1]!.id;
  }
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('user_attribute_values').execute();
}
