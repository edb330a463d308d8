import type { Store } from '../../storage/store.js';
import type { Realm } from '../../storage/types.js';
import { ValidationError } from '../validation.js';

export function now(): number {
  return Math.floor(Date.now() / 1000);
}

export async function requireRealm(store: Store, realmId: string): Promise<Realm> {
  const realm = await store.realms.get(realmId);
  if (!realm) throw new ValidationError(`realm ${realmId} does not exist`);
  return realm;
}
