import { sql, type RawBuilder, type SqlBool } from 'kysely';
import type { DialectName } from '../database.js';

/**
 * The condition "users.attributes (a JSON object of name -> list of strings) gives `name` a value that
 * contains `value`, ignoring case" (Keycloak's attribute search with exact=false, which compares
 * lower(value)). Each database reads the JSON with its own functions; a row whose name holds no list
 * matches nothing. SQLite's lower() folds ASCII letters only, PostgreSQL's every letter. A scan of the
 * realm's users: the exact search reads the index of values instead (src/storage/attribute-index.ts).
 */
export function attributeContains(dialect: DialectName, name: string, value: string): RawBuilder<SqlBool> {
  const pattern = `%${value.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
  const compare = (v: RawBuilder<unknown>): RawBuilder<SqlBool> => sql<SqlBool>`lower(${v}) like lower(${pattern}) escape '\\'`;
  if (dialect === 'postgres') {
    const list = sql`(users.attributes::jsonb -> ${name}::text)`;
    return sql<SqlBool>`exists (select 1 from jsonb_array_elements_text(case when jsonb_typeof(${list}) = 'array' then ${list} else '[]'::jsonb end) as v(value) where ${compare(sql.ref('v.value'))})`;
  }
  return sql<SqlBool>`exists (select 1 from json_each(users.attributes) as a, json_each(case when a.type = 'array' then a.value else '[]' end) as v where a.key = ${name} and v.type = 'text' and ${compare(sql.ref('v.value'))})`;
}
