import type { Store } from '../../storage/store.js';
import type { Organization } from '../../storage/types.js';
import { randomId } from '../../crypto/random.js';
import { checkName } from '../validation.js';
import { now, requireRealm } from './common.js';

export async function createOrganization(store: Store, input: { realmId: string; alias: string; name?: string }): Promise<Organization> {
  await requireRealm(store, input.realmId);
  checkName('organization alias', input.alias);
  const org: Organization = { id: randomId(), realmId: input.realmId, alias: input.alias, name: input.name ?? input.alias };
  await store.organizations.create({ ...org, now: now() });
  return org;
}
