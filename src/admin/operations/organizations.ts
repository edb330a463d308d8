import type { Store } from '../../storage/store.js';
import { ConflictError, type Organization, type User } from '../../storage/types.js';
import type { OrganizationDetails, OrganizationDomain, OrganizationQuery } from '../../storage/repos/organization-admin.js';
import { randomId } from '../../crypto/random.js';
import { checkName, checkPage, checkText, LIMITS, NotFound, ValidationError } from '../validation.js';
import { requireUser } from './users.js';
import { cliActor, now, recordAdminEvent, requireRealm, type Actor } from './common.js';

export async function createOrganization(
  store: Store,
  input: { realmId: string; alias: string; name?: string; description?: string; enabled?: boolean; redirectUrl?: string | null; domains?: OrganizationDomain[] },
  actor: Actor = cliActor(),
): Promise<Organization> {
  await requireRealm(store, input.realmId);
  checkName('organization alias', input.alias);
  checkOrganizationTexts(input);
  const redirectUrl = checkRedirectUrl(input.redirectUrl);
  const domains = input.domains !== undefined ? checkDomains(input.domains) : undefined;
  const org: Organization = { id: randomId(), realmId: input.realmId, alias: input.alias, name: input.name ?? input.alias };
  await store.organizations.create({ ...org, now: now() });
  if (input.description !== undefined || input.enabled !== undefined || redirectUrl !== undefined || domains !== undefined) {
    try {
      await store.organizationAdmin.update(org.id, org.realmId, { description: input.description, enabled: input.enabled, ...(redirectUrl !== undefined ? { redirectUrl } : {}) }, domains);
    } catch (err) {
      // A domain taken by another organization: the new one must not stay half made.
      await store.organizationAdmin.delete(org.id, org.realmId, now());
      throw err;
    }
  }
  await recordAdminEvent(store, actor, { realmId: input.realmId, operation: 'CREATE', resourceType: 'ORGANIZATION', resourcePath: `organizations/${org.id}`, representation: { ...org, description: input.description, enabled: input.enabled, redirectUrl, domains } });
  return org;
}

/**
 * Name and description: the same limits when an organization is created as when it is updated, through
 * every door (admin API, console, CLI, import): a length, and no control characters.
 */
export function checkOrganizationTexts(input: { name?: string; description?: string }): void {
  if (input.name !== undefined) {
    if (input.name.trim() === '') throw new ValidationError('the organization name must not be empty');
    checkText('the organization name', input.name, LIMITS.organizationName);
  }
  if (input.description !== undefined) checkText('the description', input.description, LIMITS.organizationDescription, { multiline: true });
}

/**
 * Keycloak 26's redirectUrl: an absolute http(s) URL, without user information, of at most 2048
 * characters ('' or null: none, the account page). An administrator's choice, not a request's: where a
 * member who joined through an invitation goes.
 */
export function checkRedirectUrl(value: string | null | undefined): string | null | undefined {
  if (value === undefined) return undefined;
  if (value === null || value.trim() === '') return null;
  let url: URL | undefined;
  try {
    url = new URL(value);
  } catch {
    url = undefined;
  }
  if (!url || (url.protocol !== 'https:' && url.protocol !== 'http:') || url.username !== '' || url.password !== '' || value.length > 2048 || /[\s\x00-\x1f\x7f]/.test(value)) {
    throw new ValidationError('redirectUrl must be an absolute http or https URL of at most 2048 characters');
  }
  return value;
}

/** An organization of the realm, by id or alias. */
export async function requireOrganization(store: Store, realmId: string, idOrAlias: string): Promise<OrganizationDetails> {
  await requireRealm(store, realmId);
  const byId = await store.organizationAdmin.get(idOrAlias);
  if (byId?.realmId === realmId) return byId;
  const byAlias = await store.organizations.findByAlias(realmId, idOrAlias);
  const org = byAlias && (await store.organizationAdmin.get(byAlias.id));
  if (!org) throw new NotFound(`organization ${idOrAlias} does not exist in realm ${realmId}`);
  return org;
}

// RFC 1035 2.3.1 labels (letters, digits, hyphens; 1-63 each), at least two of them, 253 at most in all.
const DOMAIN_RE = /^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/;

export function checkDomains(domains: OrganizationDomain[]): OrganizationDomain[] {
  const seen = new Map<string, OrganizationDomain>();
  for (const d of domains) {
    const name = d.name.trim().toLowerCase();
    if (!DOMAIN_RE.test(name)) throw new ValidationError(`${JSON.stringify(d.name)} is not an internet domain name`);
    seen.set(name, { name, verified: Boolean(d.verified) });
  }
  return [...seen.values()];
}

export interface OrganizationUpdate {
  realmId: string;
  /** The organization's id or alias. */
  organization: string;
  alias?: string;
  name?: string;
  description?: string;
  enabled?: boolean;
  /** null or '': none. */
  redirectUrl?: string | null;
  /** The complete list of domains after the update. */
  domains?: OrganizationDomain[];
}

/**
 * Changes an organization. Disabling it revokes the refresh chains bound to it: its members can no
 * longer choose it at login, and tokens issued for it stop working at once.
 */
export async function updateOrganization(store: Store, input: OrganizationUpdate, actor: Actor = cliActor()): Promise<OrganizationDetails> {
  const org = await requireOrganization(store, input.realmId, input.organization);
  if (input.alias !== undefined) checkName('organization alias', input.alias);
  checkOrganizationTexts(input);
  const redirectUrl = checkRedirectUrl(input.redirectUrl);
  const domains = input.domains !== undefined ? checkDomains(input.domains) : undefined;
  await store.organizationAdmin.update(
    org.id,
    org.realmId,
    {
      ...(input.alias !== undefined ? { alias: input.alias } : {}),
      ...(input.name !== undefined ? { name: input.name } : {}),
      ...(input.description !== undefined ? { description: input.description } : {}),
      ...(input.enabled !== undefined ? { enabled: input.enabled } : {}),
      ...(redirectUrl !== undefined ? { redirectUrl } : {}),
    },
    domains,
  );
  if (input.enabled === false && org.enabled) await store.organizationAdmin.revokeChains(org.id, now(), 'organization disabled');
  const after = (await store.organizationAdmin.get(org.id))!;
  await recordAdminEvent(store, actor, { realmId: input.realmId, operation: 'UPDATE', resourceType: 'ORGANIZATION', resourcePath: `organizations/${org.id}`, representation: after });
  return after;
}

export function disableOrganization(store: Store, input: { realmId: string; organization: string }, actor: Actor = cliActor()): Promise<OrganizationDetails> {
  return updateOrganization(store, { ...input, enabled: false }, actor);
}

export function enableOrganization(store: Store, input: { realmId: string; organization: string }, actor: Actor = cliActor()): Promise<OrganizationDetails> {
  return updateOrganization(store, { ...input, enabled: true }, actor);
}

/** Deletes the organization with its memberships, domains and consents; chains bound to it are revoked. */
export async function deleteOrganization(store: Store, input: { realmId: string; organization: string }, actor: Actor = cliActor()): Promise<OrganizationDetails> {
  const org = await requireOrganization(store, input.realmId, input.organization);
  await store.organizationAdmin.delete(org.id, org.realmId, now());
  await recordAdminEvent(store, actor, { realmId: input.realmId, operation: 'DELETE', resourceType: 'ORGANIZATION', resourcePath: `organizations/${org.id}` });
  return org;
}

export async function listOrganizations(store: Store, input: { realmId: string } & OrganizationQuery): Promise<OrganizationDetails[]> {
  await requireRealm(store, input.realmId);
  const { realmId, ...q } = input;
  checkPage(q);
  return store.organizationAdmin.list(realmId, q);
}

async function memberOf(store: Store, input: { realmId: string; organization: string; user: string }): Promise<{ org: OrganizationDetails; user: User }> {
  const org = await requireOrganization(store, input.realmId, input.organization);
  const user = await requireUser(store, input.realmId, input.user);
  return { org, user };
}

/** Adds a user of the realm to the organization; a second add is a conflict, as in Keycloak. */
export async function addMember(store: Store, input: { realmId: string; organization: string; user: string }, actor: Actor = cliActor()): Promise<User> {
  const { org, user } = await memberOf(store, input);
  if (await store.organizationAdmin.isMember(org.id, user.id)) throw new ConflictError(`user ${user.username} is already a member of ${org.alias}`);
  await store.users.addMembership(user.id, org.id);
  await recordAdminEvent(store, actor, { realmId: input.realmId, operation: 'CREATE', resourceType: 'ORGANIZATION', resourcePath: `organizations/${org.id}/members/${user.id}` });
  return user;
}

/** Removes the membership; the user's chains bound to the organization are revoked. */
export async function removeMember(store: Store, input: { realmId: string; organization: string; user: string }, actor: Actor = cliActor()): Promise<User> {
  const { org, user } = await memberOf(store, input);
  if (!(await store.organizationAdmin.removeMember(org.id, user.id, now()))) throw new NotFound(`user ${user.username} is not a member of ${org.alias}`);
  await recordAdminEvent(store, actor, { realmId: input.realmId, operation: 'DELETE', resourceType: 'ORGANIZATION', resourcePath: `organizations/${org.id}/members/${user.id}` });
  return user;
}

export async function listMembers(store: Store, input: { realmId: string; organization: string; first?: number; max?: number }): Promise<User[]> {
  checkPage(input);
  const org = await requireOrganization(store, input.realmId, input.organization);
  const ids = await store.organizationAdmin.members(org.id, { first: input.first, max: input.max });
  const users = await Promise.all(ids.map((id) => store.users.get(id)));
  return users.filter((u): u is User => u !== undefined);
}
