import type { Store } from '../../storage/store.js';
import { hashPassword } from '../../crypto/passwords.js';
import { randomId } from '../../crypto/random.js';
import { ValidationError } from '../validation.js';
import { now, requireRealm } from './common.js';

export async function createUser(
  store: Store,
  input: { realmId: string; username: string; password: string; email?: string; orgAliases?: string[]; firstName?: string; lastName?: string; emailVerified?: boolean },
): Promise<{ id: string }> {
  await requireRealm(store, input.realmId);
  if (!/^[A-Za-z0-9][A-Za-z0-9._@+-]{0,254}$/.test(input.username)) {
    throw new ValidationError("username must be 1-255 letters, digits, '.', '_', '@', '+' or '-'");
  }
  if (input.password.length < 8) throw new ValidationError('the password must have at least 8 characters');
  if (input.password.length > 1024) throw new ValidationError('the password must have at most 1024 characters');
  if (input.email !== undefined && !/^[^\s@]+@[^\s@]+$/.test(input.email)) throw new ValidationError(`${JSON.stringify(input.email)} is not an email address`);
  for (const [label, v] of [['first name', input.firstName], ['last name', input.lastName]] as const) {
    if (v !== undefined && (v.trim() === '' || v.length > 255 || /[\x00-\x1f\x7f]/.test(v))) throw new ValidationError(`the ${label} must have 1 to 255 characters, no control characters`);
  }
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
    firstName: input.firstName ?? null,
    lastName: input.lastName ?? null,
    emailVerified: input.emailVerified ?? false,
    passwordHash: await hashPassword(input.password),
    now: now(),
    organizationIds: [...new Set(orgIds)],
  });
  return { id };
}
