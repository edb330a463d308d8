import { createHash } from 'node:crypto';
import type { UserAttributes } from './types.js';

/**
 * The index of user attribute values that the admin API's exact search (`q=name:value`, Keycloak's)
 * reads instead of scanning every user's JSON: one row per user, attribute name and distinct value. The
 * key of a value ignores case, as Keycloak compares lower(value), folding every letter on both databases
 * (JavaScript's toLowerCase; SQLite's lower() folds ASCII only). A long value is keyed by its SHA-256, so
 * that the key fits an index entry (PostgreSQL's btree refuses one over ~2.7 KB; a value may have 2,048
 * characters). Changing this function changes every key: it would need a migration that rebuilds the rows.
 */
export function attributeValueKey(value: string): string {
  const lower = value.toLowerCase();
  return lower.length <= 255 ? lower : `sha256:${createHash('sha256').update(lower).digest('hex')}`;
}

/** The index rows of one user's attributes (each name's values once, by key). */
export function attributeIndexRows(realmId: string, userId: string, attributes: UserAttributes): Array<{ realm_id: string; user_id: string; name: string; value_key: string }> {
  const rows: Array<{ realm_id: string; user_id: string; name: string; value_key: string }> = [];
  for (const [name, values] of Object.entries(attributes)) {
    if (!Array.isArray(values)) continue;
    for (const key of new Set(values.filter((v): v is string => typeof v === 'string').map(attributeValueKey))) rows.push({ realm_id: realmId, user_id: userId, name, value_key: key });
  }
  return rows;
}
