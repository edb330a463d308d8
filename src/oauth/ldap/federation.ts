import { defaultActions } from '../../admin/required-actions.js';
import { randomId } from '../../crypto/random.js';
import { openLdapCredential } from '../../crypto/broker-secrets.js';
import { verifyDummy } from '../../crypto/passwords.js';
import { nowSeconds } from '../../clock.js';
import type { Services } from '../../services.js';
import { ConflictError, type Realm, type User, type UserAttributes, type UserStorageProvider } from '../../storage/types.js';
import { isUniqueViolation } from '../../storage/dialects/errors.js';
import { attributeName, changePassword, listEntries, LdapUnavailable, lookupAndBind, lookupEntry, type LdapSettings } from './directory.js';
import type { Store } from '../../storage/store.js';
import { USERNAME_RE } from '../../admin/validation.js';
import { groupsForNewUser } from '../../admin/operations/groups.js';
import { GROUP_MAPPER, ROLE_MAPPER, fullNameAttribute, readGroupMapping, splitFullName } from './mapper-config.js';
import { applyHardcoded, applyPlan, entryAttributes, planFromIndex, readMapperPlans, readSyncIndex, syncMapper, type MapperSyncResult } from './group-mapping.js';
import { grantDefaultRole } from '../../admin/operations/default-role.js';

/**
 * User federation at the password step (Keycloak's LDAPStorageProvider, read-only): a name not found
 * locally, or a user linked to a provider (federationLink), is checked against the realm's enabled LDAP
 * providers by a bind as the user's entry. The password is never stored here: every sign-in binds again,
 * so a password changed, or an entry deleted or disabled, in the directory takes effect at once.
 */

/** Keycloak's NO_PASSWORD-like marker: a federated user has no local password (verifyPassword refuses it). */
export const FEDERATED_PASSWORD_HASH = '!no-password';
/** Keycloak's LDAPConstants.LDAP_ID and LDAP_ENTRY_DN user attributes. */
export const LDAP_ID = 'LDAP_ID';
export const LDAP_ENTRY_DN = 'LDAP_ENTRY_DN';

const first = (config: Record<string, string[]>, key: string): string | undefined => config[key]?.[0];
const flag = (config: Record<string, string[]>, key: string, fallback: boolean): boolean => {
  const v = first(config, key);
  return v === undefined || v === '' ? fallback : v === 'true';
};

export function providerEnabled(p: UserStorageProvider): boolean {
  return flag(p.config, 'enabled', true);
}

function milliseconds(value: string | undefined, fallback: number): number {
  const n = Number(value);
  return Number.isInteger(n) && n > 0 ? Math.min(n, 10_000) : fallback;
}

/** The connection and search settings of a provider (its config as Keycloak names it). */
export function ldapSettings(p: UserStorageProvider): LdapSettings {
  const c = p.config;
  // Keycloak allows several space-separated URLs (failover); the first is used.
  const url = (first(c, 'connectionUrl') ?? '').trim().split(/\s+/)[0] ?? '';
  return {
    url,
    usersDn: first(c, 'usersDn') ?? '',
    bindDn: first(c, 'bindDn') ?? '',
    anonymous: first(c, 'authType') === 'none',
    startTls: flag(c, 'startTls', false) && url.toLowerCase().startsWith('ldap://'),
    usernameAttribute: attributeName(first(c, 'usernameLDAPAttribute'), 'uid'),
    uuidAttribute: attributeName(first(c, 'uuidLDAPAttribute'), 'entryUUID'),
    objectClasses: (first(c, 'userObjectClasses') ?? 'inetOrgPerson').split(',').map((s) => s.trim()).filter((s) => s !== ''),
    scope: first(c, 'searchScope') === '2' ? 'sub' : 'one',
    customFilter: first(c, 'customUserSearchFilter')?.trim() || undefined,
    connectTimeoutMs: milliseconds(first(c, 'connectionTimeout'), 3_000),
    operationTimeoutMs: milliseconds(first(c, 'readTimeout'), 3_000),
  };
}

/** Where the user's fields come from: Keycloak's default mappers, or the provider's user-attribute mappers. */
export function attributeMapping(p: UserStorageProvider): { username: string; email: string; firstName: string; lastName: string; fullName: string | undefined; extra: Array<{ model: string; ldap: string }> } {
  const s = ldapSettings(p);
  // full-name-ldap-mapper: first and last name from one "First Last" attribute instead of givenName and sn.
  const out = { username: s.usernameAttribute, email: 'mail', firstName: 'givenName', lastName: 'sn', fullName: fullNameAttribute(p.mappers), extra: [] as Array<{ model: string; ldap: string }> };
  for (const m of p.mappers) {
    if (m.providerId !== 'user-attribute-ldap-mapper' || m.config['is.binary.attribute']?.[0] === 'true') continue;
    const model = m.config['user.model.attribute']?.[0];
    const ldap = attributeName(m.config['ldap.attribute']?.[0], '');
    if (!model || !ldap) continue;
    if (model === 'username') out.username = ldap;
    else if (model === 'email' || model === 'firstName' || model === 'lastName') out[model] = ldap;
    else if (!['LDAP_ID', 'LDAP_ENTRY_DN', 'createTimestamp', 'modifyTimestamp'].includes(model)) out.extra.push({ model, ldap });
  }
  return out;
}

/** Every attribute a sign-in or a sync reads of a user's entry: the profile's, the extra ones', the mappers'. */
function entryAttributeList(p: UserStorageProvider): string[] {
  const map = attributeMapping(p);
  return [map.username, map.email, map.firstName, map.lastName, ldapSettings(p).uuidAttribute, ...map.extra.map((e) => e.ldap), ...(map.fullName ? [map.fullName] : []), ...entryAttributes(p)];
}

async function enabledProviders(services: Services, realmId: string): Promise<UserStorageProvider[]> {
  return (await services.store.userStorage.list(realmId)).filter(providerEnabled);
}

/**
 * The password step for a name Realmgate does not hold a password for. `user`: the local user the name
 * found (federated, or undefined). Returns the signed-in user (imported or refreshed from the entry), or
 * undefined for a failed sign-in (counted by the caller's brute-force protection as any other).
 * Throws LdapUnavailable when the directory that should answer cannot.
 */
export async function federatedSignIn(services: Services, realm: Realm, input: { user: User | undefined; typed: string; password: string }): Promise<User | undefined> {
  const { user } = input;
  if (user && !user.federationLink) return undefined;
  const providers = user
    ? (await enabledProviders(services, realm.id)).filter((p) => p.id === user.federationLink)
    : await enabledProviders(services, realm.id);
  // An empty password is refused before any bind (RFC 4513 5.1.2); so is a name no directory is asked for.
  if (providers.length === 0 || input.password === '') {
    await verifyDummy(input.password);
    return undefined;
  }
  const typed = input.typed.trim();
  const login = user ? { value: user.username, byEmail: false } : { value: typed, byEmail: realm.loginWithEmailAllowed && typed.includes('@') };
  let outage: LdapUnavailable | undefined;
  for (const p of providers) {
    const s = ldapSettings(p);
    const credential = p.sealedBindCredential ? await openLdapCredential(services.store, realm.id, p.id, p.sealedBindCredential) : undefined;
    let r;
    try {
      r = await lookupAndBind(s, credential, login, input.password, entryAttributeList(p));
      // A name typed as an email may also be a username (Keycloak looks up both).
      if (r.kind === 'not-found' && login.byEmail) r = await lookupAndBind(s, credential, { value: typed, byEmail: false }, input.password, entryAttributeList(p));
    } catch (err) {
      if (!(err instanceof LdapUnavailable)) throw err;
      outage = err;
      continue;
    }
    if (r.kind === 'not-found') continue;
    if (r.kind !== 'found') return undefined;
    const entry = { dn: r.dn, attributes: r.attributes };
    // The group and role mappers' directory reads come first: an outage here (LdapUnavailable, the
    // caller's 503) signs nobody in with memberships the directory did not confirm.
    const plans = await readMapperPlans(services.store, s, credential, p, entry);
    const signedIn = await importOrUpdate(services, realm, p, user, entry);
    if (signedIn) await applyMappers(services, realm, p, signedIn, plans);
    return signedIn;
  }
  if (outage) throw outage;
  return undefined;
}

const one = (attrs: Record<string, string[]>, name: string): string | undefined => attrs[name.toLowerCase()]?.[0];

/**
 * Whether a user signed in without a password (a passkey) may go on as far as the user directory is
 * concerned: a local user always; a federated one only while its provider is enabled and the directory
 * still has its entry (the same entry: its LDAP_ID), so that a user removed from the directory is out
 * everywhere, as Keycloak validates a federated user whenever it loads one. Throws LdapUnavailable.
 */
export async function federatedUserValid(services: Services, realm: Realm, user: User): Promise<boolean> {
  if (!user.federationLink) return true;
  const p = await services.store.userStorage.get(realm.id, user.federationLink);
  if (!p || !providerEnabled(p)) return false;
  const s = ldapSettings(p);
  const credential = p.sealedBindCredential ? await openLdapCredential(services.store, realm.id, p.id, p.sealedBindCredential) : undefined;
  const r = await lookupEntry(s, credential, { value: user.username, byEmail: false }, [s.uuidAttribute]);
  if (r.kind !== 'found') return false;
  const uuid = one(r.attributes, s.uuidAttribute);
  const known = user.attributes[LDAP_ID]?.[0];
  return !(uuid && known && uuid !== known);
}

/** Keycloak's import (importEnabled): the local copy of the entry, linked to the provider; refreshed at each sign-in. */
async function importOrUpdate(services: Services, realm: Realm, p: UserStorageProvider, linked: User | undefined, entry: { dn: string; attributes: Record<string, string[]> }, o: { sync?: boolean } = {}): Promise<User | undefined> {
  const map = attributeMapping(p);
  const s = ldapSettings(p);
  const username = one(entry.attributes, map.username)?.trim().toLowerCase();
  // The rule of every other door for usernames: an entry whose name Realmgate cannot hold signs nobody in.
  if (!username || !USERNAME_RE.test(username)) return undefined;
  const uuid = one(entry.attributes, s.uuidAttribute);
  // A synchronization finds the entry's user by its LDAP_ID first (a renamed entry stays the same user).
  const byId = o.sync && uuid ? (await services.store.userAdmin.search(realm.id, { attributes: [[LDAP_ID, uuid]], exact: true, max: 2 })).find((u) => u.federationLink === p.id) : undefined;
  const existing = linked ?? byId ?? (await services.store.users.findByUsername(realm.id, username));
  // A local account of the same name is not taken over by a directory entry (Keycloak refuses it too).
  if (existing && existing.federationLink !== p.id) return undefined;
  // The entry a linked user was imported from, not another that now has the name.
  if (existing && uuid && existing.attributes[LDAP_ID]?.[0] && existing.attributes[LDAP_ID][0] !== uuid) return undefined;
  const attributes: UserAttributes = { ...(existing?.attributes ?? {}), [LDAP_ENTRY_DN]: [entry.dn] };
  if (uuid) attributes[LDAP_ID] = [uuid];
  for (const e of map.extra) {
    const v = entry.attributes[e.ldap.toLowerCase()];
    if (v) attributes[e.model] = v.slice(0, 20);
  }
  let email = one(entry.attributes, map.email)?.trim().toLowerCase() ?? null;
  // duplicateEmailsAllowed off: an address another user of the realm has is left out, so that a sign-in
  // by email still names one user (the rule of the admin API and the import).
  if (email !== null && (email.length > 320 || (!realm.duplicateEmailsAllowed && (await services.store.users.findByEmail(realm.id, email, 2)).some((u) => u.id !== existing?.id)))) email = null;
  const full = map.fullName ? one(entry.attributes, map.fullName) : undefined;
  const fields = {
    email,
    ...(map.fullName
      ? splitFullName(full ?? '')
      : {
          firstName: one(entry.attributes, map.firstName) ?? null,
          lastName: one(entry.attributes, map.lastName) ?? null,
        }),
  };
  if (existing) {
    if (!existing.enabled) return undefined;
    await services.store.users.update(existing.id, { ...fields, attributes, ...(existing.username !== username ? { username } : {}) });
    return { ...existing, ...fields, username, attributes };
  }
  const id = randomId();
  // The realm's default groups, as every new user (Keycloak's default roles and groups apply to imported users).
  const groups = await groupsForNewUser(services.store, realm.id, []);
  try {
    await services.store.transaction(async (tx) => {
      await tx.users.create({
        id,
        realmId: realm.id,
        username,
        ...fields,
        emailVerified: flag(p.config, 'trustEmail', false) && fields.email !== null,
        passwordHash: FEDERATED_PASSWORD_HASH,
        now: nowSeconds(services.clock),
        organizationIds: [],
        attributes,
        federationLink: p.id,
        requiredActions: defaultActions(realm),
      });
      for (const g of groups) await tx.groups.addMember(g.id, id);
      await grantDefaultRole(tx, realm, id);
    });
  } catch (err) {
    // The same entry's first sign-in twice at once: the loser wrote nothing; the winner's user is the one.
    if (!(err instanceof ConflictError)) throw err;
    const winner = await services.store.users.findByUsername(realm.id, username);
    return winner?.federationLink === p.id && winner.enabled ? winner : undefined;
  }
  await services.audit.record({ realmId: realm.id, type: 'REGISTER', outcome: 'success', userId: id, username, reason: `imported from LDAP provider ${p.name}` });
  return services.store.users.get(id);
}

/** The group, role and hardcoded mappers' writes for a signed-in or synchronized user (after every directory read). */
async function applyMappers(services: Services, realm: Realm, p: UserStorageProvider, user: User, plans: Awaited<ReturnType<typeof readMapperPlans>>): Promise<void> {
  for (const plan of plans) await applyPlan(services.store, services.clock, realm, user, plan);
  await applyHardcoded(services.store, realm, user, p);
}

/** Keycloak's SynchronizationResultRepresentation (a provider's user sync answers it as a mapper's sync does). */
export type SyncResult = MapperSyncResult;

/**
 * Keycloak's full sync (`triggerFullSync`: every entry) or changed-users sync (`triggerChangedUsersSync`:
 * entries modified since the last sync): the entries' users imported or updated as at a sign-in, without
 * a password. Entries that cannot be imported (a name Realmgate does not accept, a local user of that
 * name) count as failed. The time of this sync is kept in the config (Keycloak's lastSync).
 */
export async function syncProvider(services: Services, realm: Realm, p: UserStorageProvider, action: 'triggerFullSync' | 'triggerChangedUsersSync'): Promise<SyncResult> {
  const s = ldapSettings(p);
  const map = attributeMapping(p);
  // The directory's clock dates modifyTimestamp: the real time, not the server's (injectable) clock.
  const started = Math.floor(Date.now() / 1000);
  const lastSync = Number(p.config.lastSync?.[0] ?? 0);
  const since = action === 'triggerChangedUsersSync' && lastSync > 0 ? lastSync : undefined;
  const credential = p.sealedBindCredential ? await openLdapCredential(services.store, realm.id, p.id, p.sealedBindCredential) : undefined;
  const { entries, truncated } = await listEntries(s, credential, entryAttributeList(p), since);
  // The group and role mappers' directories read once for all the users (never a search per user).
  const indexes = await readSyncIndex(services.store, s, credential, p);
  const result: SyncResult = { ignored: false, added: 0, updated: 0, removed: 0, failed: 0, status: '' };
  for (const entry of entries) {
    const name = one(entry.attributes, map.username)?.trim().toLowerCase();
    const before = name ? await services.store.users.findByUsername(realm.id, name) : undefined;
    let user: User | undefined;
    try {
      user = await importOrUpdate(services, realm, p, undefined, entry, { sync: true });
    } catch (err) {
      // A name taken meanwhile (a rename onto another user's name): this entry fails, the others go on.
      if (!(err instanceof ConflictError) && !isUniqueViolation(err)) throw err;
    }
    if (user) await applyMappers(services, realm, p, user, indexes.map((x) => planFromIndex(x, entry)));
    if (!user) result.failed++;
    else if (before && before.id === user.id) result.updated++;
    else result.added++;
  }
  await services.store.userStorage.update({ ...p, config: { ...p.config, lastSync: [String(started)] } });
  result.status = `${result.added} imported users, ${result.updated} updated users${result.failed > 0 ? `, ${result.failed} users failed sync` : ''}${truncated ? ' (the directory has more entries than one synchronization reads)' : ''}`;
  return result;
}

/**
 * editMode WRITABLE: a federated user's new password is written to the directory (never stored here).
 * Returns false when the user's provider does not take writes (READ_ONLY, UNSYNCED, missing, disabled).
 * Throws LdapPasswordRefused or LdapUnavailable.
 */
export async function writeFederatedPassword(store: Store, user: User, newPassword: string): Promise<boolean> {
  if (!user.federationLink) return false;
  const p = await store.userStorage.get(user.realmId, user.federationLink);
  if (!p || !providerEnabled(p) || p.config.editMode?.[0] !== 'WRITABLE') return false;
  const dn = user.attributes[LDAP_ENTRY_DN]?.[0];
  if (!dn) return false;
  const credential = p.sealedBindCredential ? await openLdapCredential(store, p.realmId, p.id, p.sealedBindCredential) : undefined;
  await changePassword(ldapSettings(p), credential, dn, newPassword, { exop: p.config.usePasswordModifyExtendedOp?.[0] === 'true' });
  return true;
}

/** A mapper's sync refused (unknown mapper, a direction not served): the admin API's 400. */
export class MapperSyncRefused extends Error {}

/**
 * Keycloak's mapper sync (POST user-storage/{provider}/mappers/{mapper}/sync): direction fedToKeycloak
 * makes the directory's groups (roles) here. keycloakToFed (writing local groups to the directory) is
 * refused: Realmgate does not write groups to LDAP. Throws LdapUnavailable.
 */
export async function syncProviderMapper(services: Pick<Services, 'store' | 'clock'>, realm: Realm, p: UserStorageProvider, mapperId: string, direction: string | undefined): Promise<MapperSyncResult> {
  const m = p.mappers.find((x) => x.id === mapperId);
  if (!m) throw new MapperSyncRefused(`provider ${p.name} has no mapper ${mapperId}`);
  if (m.providerId !== GROUP_MAPPER && m.providerId !== ROLE_MAPPER) throw new MapperSyncRefused(`mapper ${m.name} (${m.providerId}) has nothing to synchronize: only group-ldap-mapper and role-ldap-mapper do`);
  if ((direction ?? 'fedToKeycloak') !== 'fedToKeycloak') throw new MapperSyncRefused('direction must be fedToKeycloak: Realmgate does not write groups or roles to the directory (keycloakToFed)');
  if (!providerEnabled(p)) return { ignored: true, added: 0, updated: 0, removed: 0, failed: 0, status: 'the provider is disabled' };
  const credential = p.sealedBindCredential ? await openLdapCredential(services.store, realm.id, p.id, p.sealedBindCredential) : undefined;
  return syncMapper(services.store, services.clock, realm, ldapSettings(p), credential, readGroupMapping(m).mapping);
}
