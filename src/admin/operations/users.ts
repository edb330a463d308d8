import type { Store } from '../../storage/store.js';
import { hashPassword } from '../../crypto/passwords.js';
import { randomId } from '../../crypto/random.js';
import { ValidationError } from '../validation.js';
import { now, requireRealm } from './common.js';

export async function createUser(
  store: Store,
  input: { realmId: string; username: string; password: string; email?: string; orgAliases?: string[] },
): Promise<{ id: string }> {
  await requireRealm(store, input.realmId);
  if (!/^[A-Za-z0-9][A-Za-z0-9._@+-]{0,254}$/.test(input.username)) {
    throw new ValidationError("username must be 1-255 letters, digits, '.', '_', '@', '+' or '-'");
  }
  if (input.password.length < 8) throw new ValidationError('the password must have at least 8 characters');
  if (input.password.length > 1024) throw new ValidationError('the password must have at most 1024 characters');
  if (input.email !== undefined && !/^[^\s@]+@[^\s@]+$/.test(input.email)) throw new ValidationError(`${JSON.stringify(input.email)} is not an email address`);
  const orgIds: string[] = [];
  for (const alias of input.orgAliases ?? []) {
    const org = await store.organizations.findByAlias(input.realmId, alias);
    if (!org) throw new ValidationError(`organization ${alias} does not exist in realm ${input.realmId}`);
    orgIds.push(org.id);
  }
  const id = randomId();
  await store.users.create({
    id,
    realmId: input.realmId,
    username: input.username.toLowerCase(),
    email: input.email ?? null,
    passwordHash: await hashPassword(input.password),
    now: now(),
    organizationIds: [...new Set(orgIds)],
  });
  return { id };
}
