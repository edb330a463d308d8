import { randomUUID } from 'node:crypto';
import type { Store } from '../../storage/store.js';
import type { UserStorageMapper, UserStorageProvider } from '../../storage/types.js';
import { openLdapCredential, sealLdapCredential } from '../../crypto/broker-secrets.js';
import { isAttributeName } from '../../oauth/ldap/escape.js';
import { GROUP_MAPPER, HARDCODED_GROUP_MAPPER, HARDCODED_ROLE_MAPPER, MAPPER_TYPES, ROLE_MAPPER, mapperProblems, readGroupMapping } from '../../oauth/ldap/mapper-config.js';
import { groupAtPath, hardcodedRole, normDn } from '../../oauth/ldap/group-mapping.js';
import { NotFound, ValidationError, checkText } from '../validation.js';
import { now, recordAdminEvent, requireRealm, type Actor } from './common.js';
import { SECRET_MASK } from './identity-providers.js';
import { deleteUser } from './users.js';

/**
 * User federation's administration: the realm's LDAP providers (Keycloak's UserStorageProvider
 * components, providerId "ldap") and their LDAPStorageMapper subcomponents. Every door (admin API's
 * /components, CLI, import) goes through these. bindCredential is sealed apart and never shown again
 * (Keycloak's "**********"; sent back, it keeps the stored one).
 */

export const USER_STORAGE_TYPE = 'org.keycloak.storage.UserStorageProvider';
export const LDAP_MAPPER_TYPE = 'org.keycloak.storage.ldap.mappers.LDAPStorageMapper';
/** The mappers Realmgate acts on; others (msad-user-account-control-mapper, certificate mappers, ...) are refused, or skipped at import. */
export const SUPPORTED_MAPPERS = MAPPER_TYPES;
export const EDIT_MODES = ['READ_ONLY', 'WRITABLE', 'UNSYNCED'] as const;

/** What a door says of a provider (Keycloak's ComponentRepresentation, typed). */
export interface ComponentFields {
  id?: string;
  name?: string;
  providerId?: string;
  providerType?: string;
  parentId?: string;
  config?: Record<string, string[]>;
  mappers?: UserStorageMapper[];
}

const MAX_CONFIG_ENTRIES = 100;
const MAX_VALUE = 4096;
const FLAGS = ['enabled', 'importEnabled', 'startTls', 'trustEmail', 'syncRegistrations', 'pagination', 'connectionPooling', 'validatePasswordPolicy', 'usePasswordModifyExtendedOp', 'allowKerberosAuthentication', 'useKerberosForPasswordAuthentication'];

/** Keycloak's defaults for what a new LDAP provider leaves out (LDAPStorageProviderFactory's config properties). */
const DEFAULTS: Record<string, string> = {
  enabled: 'true',
  priority: '0',
  importEnabled: 'true',
  editMode: 'READ_ONLY',
  authType: 'simple',
  searchScope: '1',
  startTls: 'false',
  usernameLDAPAttribute: 'uid',
  rdnLDAPAttribute: 'uid',
  uuidLDAPAttribute: 'entryUUID',
  userObjectClasses: 'inetOrgPerson, organizationalPerson',
  vendor: 'other',
  trustEmail: 'false',
  pagination: 'false',
  connectionPooling: 'false',
  cachePolicy: 'DEFAULT',
  useTruststoreSpi: 'always',
  fullSyncPeriod: '-1',
  changedSyncPeriod: '-1',
  batchSizeForSync: '1000',
};

const one = (c: Record<string, string[]>, k: string): string | undefined => c[k]?.[0];

/** A config map as Keycloak's ComponentRepresentation carries it: each key a list of strings. */
export function readConfigMap(v: unknown, where = 'config'): Record<string, string[]> {
  if (v === undefined || v === null) return {};
  if (typeof v !== 'object' || Array.isArray(v)) throw new ValidationError(`${where} must be an object of string lists`);
  const entries = Object.entries(v as Record<string, unknown>);
  if (entries.length > MAX_CONFIG_ENTRIES) throw new ValidationError(`${where} may have at most ${MAX_CONFIG_ENTRIES} entries`);
  const out: Record<string, string[]> = {};
  for (const [k, x] of entries) {
    checkText(`a ${where} key`, k, 255);
    const list = Array.isArray(x) ? x : [x];
    if (list.length > 20 || !list.every((s) => typeof s === 'string')) throw new ValidationError(`${where}.${k} must be a list of strings`);
    for (const s of list as string[]) if (s.length > MAX_VALUE) throw new ValidationError(`${where}.${k} values must have at most ${MAX_VALUE} characters`);
    out[k] = list as string[];
  }
  return out;
}

function checkLdapConfig(c: Record<string, string[]>): void {
  const url = (one(c, 'connectionUrl') ?? '').trim();
  if (url === '') throw new ValidationError('LDAP connection URL is required (config.connectionUrl)');
  for (const u of url.split(/\s+/)) {
    let parsed: URL;
    try {
      parsed = new URL(u);
    } catch {
      throw new ValidationError(`config.connectionUrl ${JSON.stringify(u)} is not a URL`);
    }
    if (parsed.protocol !== 'ldap:' && parsed.protocol !== 'ldaps:') throw new ValidationError('config.connectionUrl must start with ldap:// or ldaps://');
    if (parsed.username || parsed.password || (parsed.pathname !== '' && parsed.pathname !== '/') || parsed.search || parsed.hash) throw new ValidationError('config.connectionUrl must be ldap[s]://host[:port] only');
  }
  if (!(one(c, 'usersDn') ?? '').trim()) throw new ValidationError('Users DN is required (config.usersDn)');
  for (const k of ['usernameLDAPAttribute', 'rdnLDAPAttribute', 'uuidLDAPAttribute']) {
    const v = one(c, k);
    if (!v || !isAttributeName(v.trim())) throw new ValidationError(`config.${k} must be an LDAP attribute name`);
  }
  const classes = (one(c, 'userObjectClasses') ?? '').split(',').map((s) => s.trim()).filter((s) => s !== '');
  if (classes.length === 0 || !classes.every(isAttributeName)) throw new ValidationError('config.userObjectClasses must list object classes, separated by commas');
  const editMode = one(c, 'editMode');
  if (!(EDIT_MODES as readonly string[]).includes(editMode ?? '')) throw new ValidationError(`config.editMode must be one of ${EDIT_MODES.join(', ')}`);
  const auth = one(c, 'authType');
  if (auth !== 'simple' && auth !== 'none') throw new ValidationError('config.authType must be "simple" or "none"');
  if (auth === 'simple' && !(one(c, 'bindDn') ?? '').trim()) throw new ValidationError('config.bindDn is required when config.authType is "simple"');
  const scope = one(c, 'searchScope');
  if (scope !== '1' && scope !== '2') throw new ValidationError('config.searchScope must be "1" (one level) or "2" (subtree)');
  for (const f of FLAGS) {
    const v = one(c, f);
    if (v !== undefined && v !== '' && v !== 'true' && v !== 'false') throw new ValidationError(`config.${f} must be "true" or "false"`);
  }
  const custom = one(c, 'customUserSearchFilter')?.trim();
  if (custom && !(custom.startsWith('(') && custom.endsWith(')'))) throw new ValidationError('config.customUserSearchFilter must be an LDAP filter in parentheses');
  for (const k of ['connectionTimeout', 'readTimeout', 'priority']) {
    const v = one(c, k);
    if (v !== undefined && v !== '' && !/^-?\d{1,9}$/.test(v)) throw new ValidationError(`config.${k} must be a whole number`);
  }
}

/** The config with Keycloak's defaults for what it leaves out. */
export function withDefaults(given: Record<string, string[]>): Record<string, string[]> {
  const config: Record<string, string[]> = { ...given };
  for (const [k, v] of Object.entries(DEFAULTS)) if (config[k] === undefined || config[k]!.length === 0) config[k] = [v];
  return config;
}

/** The checks of checkComponent that need no database (an import reads every entry before writing). Throws ValidationError. */
export function validateComponentShape(fields: ComponentFields): void {
  if ((fields.providerId ?? 'ldap') !== 'ldap') throw new ValidationError(`providerId ${JSON.stringify(fields.providerId)} is not supported (Realmgate federates users from LDAP: "ldap")`);
  if (!(fields.name ?? '').trim()) throw new ValidationError('name is required');
  if (fields.id !== undefined && !/^[A-Za-z0-9._-]{1,36}$/.test(fields.id)) throw new ValidationError('id must be at most 36 letters, digits, ".", "_" or "-"');
  const config = withDefaults(fields.config ?? {});
  checkLdapConfig(config);
  if (one(config, 'authType') === 'simple' && !one(fields.config ?? {}, 'bindCredential')) throw new ValidationError('config.bindCredential is required when config.authType is "simple"');
  for (const m of fields.mappers ?? []) checkMapper(m);
}

/** Keycloak's default mappers of a new LDAP provider (username, first name, last name, email, creation date, modify date). */
export function defaultMappers(config: Record<string, string[]>): UserStorageMapper[] {
  const readOnly = String(one(config, 'editMode') !== 'WRITABLE');
  const mapper = (name: string, model: string, ldap: string, extra: Record<string, string> = {}): UserStorageMapper => ({
    id: randomUUID(),
    name,
    providerId: 'user-attribute-ldap-mapper',
    config: Object.fromEntries(Object.entries({ 'user.model.attribute': model, 'ldap.attribute': ldap, 'read.only': readOnly, 'always.read.value.from.ldap': 'true', 'is.mandatory.in.ldap': 'false', ...extra }).map(([k, v]) => [k, [v]])),
  });
  return [
    mapper('username', 'username', one(config, 'usernameLDAPAttribute') ?? 'uid', { 'is.mandatory.in.ldap': 'true', 'always.read.value.from.ldap': 'false' }),
    mapper('first name', 'firstName', 'givenName'),
    mapper('last name', 'lastName', 'sn', { 'is.mandatory.in.ldap': 'true' }),
    mapper('email', 'email', 'mail'),
    mapper('creation date', 'createTimestamp', 'createTimestamp', { 'read.only': 'true' }),
    mapper('modify date', 'modifyTimestamp', 'modifyTimestamp', { 'read.only': 'true' }),
  ];
}

/** Checks a mapper's shape and config (no database); throws for one Realmgate does not act on or a bad config. */
export function checkMapper(m: UserStorageMapper): void {
  checkText('a mapper name', m.name, 255);
  const problems = mapperProblems(m);
  if (problems.length > 0) throw new ValidationError(`mapper ${JSON.stringify(m.name)}: ${problems.join('; ')}`);
}

/**
 * What a mapper names must exist (Keycloak's validateConfiguration): a hardcoded mapper's role or group,
 * a role mapper's client. Checked by the admin doors; an import may bring them in the same file.
 */
async function checkMapperTargets(store: Store, realmId: string, m: UserStorageMapper): Promise<void> {
  const where = `mapper ${JSON.stringify(m.name)}`;
  if (m.providerId === HARDCODED_ROLE_MAPPER && !(await hardcodedRole(store, realmId, one(m.config, 'role') ?? ''))) throw new ValidationError(`${where}: role ${JSON.stringify(one(m.config, 'role'))} does not exist (a realm role name, or clientId.roleName)`);
  if (m.providerId === HARDCODED_GROUP_MAPPER && !(await groupAtPath(store, realmId, one(m.config, 'group') ?? ''))) throw new ValidationError(`${where}: group ${JSON.stringify(one(m.config, 'group'))} does not exist`);
  if (m.providerId === ROLE_MAPPER) {
    const clientId = readGroupMapping(m).mapping.clientId;
    if (clientId !== undefined && !(await store.clients.get(realmId, clientId))) throw new ValidationError(`${where}: client ${JSON.stringify(clientId)} does not exist`);
  }
}

/**
 * Keycloak refuses a READ_ONLY mapper's membership changes (and Realmgate does not write LDAP_ONLY ones
 * back to the directory): a federated user's membership of a group (or mapping of a role) that a
 * READ_ONLY or LDAP_ONLY mapper of the user's provider manages is refused; the directory is the place.
 */
export async function refuseMappedMembershipChange(store: Store, user: { federationLink?: string | null; username: string; realmId: string }, kind: 'group' | 'role', targets: Array<{ id: string; name: string }>): Promise<void> {
  if (!user.federationLink || targets.length === 0) return;
  const p = await store.userStorage.get(user.realmId, user.federationLink);
  if (!p) return;
  for (const t of targets) {
    for (const link of await store.userStorage.linksOf(t.id)) {
      if (link.kind !== kind) continue;
      const m = p.mappers.find((x) => x.id === link.mapperId);
      if (!m || (m.providerId !== GROUP_MAPPER && m.providerId !== ROLE_MAPPER)) continue;
      const mode = readGroupMapping(m).mapping.mode;
      if (mode === 'IMPORT') continue;
      throw new ValidationError(`${kind} ${t.name} of user ${user.username} is mapped from LDAP by mapper ${m.name} (mode ${mode}): change the membership in the directory; it is read from there at each sign-in`);
    }
  }
}

/**
 * Checks a provider from any door and returns it ready to store, its bind credential sealed. `existing`:
 * the stored provider a replacement keeps the id, creation time, mappers and (when left out or masked)
 * credential of.
 */
export async function checkComponent(store: Store, realmId: string, fields: ComponentFields, existing?: UserStorageProvider): Promise<UserStorageProvider> {
  const providerId = fields.providerId ?? existing?.providerId ?? 'ldap';
  if (providerId !== 'ldap') throw new ValidationError(`providerId ${JSON.stringify(providerId)} is not supported (Realmgate federates users from LDAP: "ldap")`);
  if (fields.providerType !== undefined && fields.providerType !== USER_STORAGE_TYPE) throw new ValidationError(`providerType must be ${USER_STORAGE_TYPE}`);
  if (fields.parentId !== undefined && fields.parentId !== realmId) throw new ValidationError(`parentId must be the realm's id (${realmId})`);
  const name = (fields.name ?? existing?.name ?? '').trim();
  if (name === '') throw new ValidationError('name is required');
  checkText('name', name, 255);
  const id = existing?.id ?? fields.id ?? randomUUID();
  if (!/^[A-Za-z0-9._-]{1,36}$/.test(id)) throw new ValidationError('id must be at most 36 letters, digits, ".", "_" or "-"');
  const { bindCredential, ...given } = fields.config ?? {};
  const config = withDefaults(given);
  checkLdapConfig(config);
  let sealed = existing?.sealedBindCredential ?? null;
  const credential = bindCredential?.[0];
  const kept = credential === undefined || credential === SECRET_MASK;
  if (kept && existing?.sealedBindCredential && !sameDirectory(existing.config, config)) throw new ValidationError(CREDENTIAL_STAYS);
  if (!kept) {
    checkText('config.bindCredential', credential, 1024);
    sealed = credential === '' ? null : await sealLdapCredential(store, realmId, id, credential);
  }
  if (one(config, 'authType') === 'simple' && sealed === null) throw new ValidationError('config.bindCredential is required when config.authType is "simple"');
  const mappers = fields.mappers ?? existing?.mappers ?? defaultMappers(config);
  for (const m of mappers) checkMapper(m);
  return { id, realmId, name, providerId: 'ldap', config, sealedBindCredential: sealed, mappers, createdAt: existing?.createdAt ?? now() };
}

const path = (id: string): string => `components/${id}`;

export async function listUserStorage(store: Store, realmId: string): Promise<UserStorageProvider[]> {
  await requireRealm(store, realmId);
  return store.userStorage.list(realmId);
}

export async function requireUserStorage(store: Store, realmId: string, idOrName: string): Promise<UserStorageProvider> {
  await requireRealm(store, realmId);
  const p = (await store.userStorage.get(realmId, idOrName)) ?? (await store.userStorage.list(realmId)).find((x) => x.name === idOrName);
  if (!p) throw new NotFound(`Could not find component ${idOrName} in realm ${realmId}`);
  return p;
}

/**
 * A stored bind credential is sent only to the directory and as the bind DN it was given for. Keycloak
 * keeps a masked credential whatever else a component update changes, so whoever may change a provider
 * (manage-realm) could point it at a host of theirs and read the credential off the next bind, a
 * credential no administrator is ever shown. Keycloak's test connection has the same rule
 * (LDAPServerCapabilitiesManager.buildLDAPConfig: the stored credential only with the component's URL and
 * bind DN). Held even when the provider binds anonymously now: otherwise a later change back to simple
 * would send the kept credential to the new URL.
 */
export function sameDirectory(stored: Record<string, string[]>, given: Record<string, string[]>): boolean {
  const urls = (c: Record<string, string[]>): string => (one(c, 'connectionUrl') ?? '').trim().toLowerCase().split(/\s+/).join(' ');
  return urls(stored) === urls(given) && normDn(one(stored, 'bindDn') ?? '') === normDn(one(given, 'bindDn') ?? '');
}

export const CREDENTIAL_STAYS =
  'config.bindCredential must be given again (the CLI: --bind-credential-stdin or --bind-credential-file) to change config.connectionUrl or config.bindDn: the stored one is sent only to the directory and as the bind DN it was given for (an empty one removes it)';

const shown = (f: ComponentFields): ComponentFields => ({ ...f, config: { ...f.config, bindCredential: [] } });

export async function createUserStorage(store: Store, actor: Actor, realmId: string, fields: ComponentFields): Promise<UserStorageProvider> {
  await requireRealm(store, realmId);
  if (fields.id !== undefined && (await store.userStorage.get(realmId, fields.id))) throw new ValidationError(`a component with id ${fields.id} already exists`);
  const p = await checkComponent(store, realmId, fields);
  await store.userStorage.create(p);
  await recordAdminEvent(store, actor, { realmId, operation: 'CREATE', resourceType: 'COMPONENT', resourcePath: path(p.id), representation: shown(fields) });
  return p;
}

/** Changes a provider. `replace` (Keycloak's PUT): the config given is the whole config; otherwise (the CLI) merged over the stored one. */
export async function updateUserStorage(store: Store, actor: Actor, realmId: string, id: string, fields: ComponentFields, opts: { replace?: boolean } = {}): Promise<UserStorageProvider> {
  const existing = await requireUserStorage(store, realmId, id);
  if (fields.id !== undefined && fields.id !== existing.id) throw new ValidationError('a component\'s id cannot change');
  const merged: ComponentFields = opts.replace ? fields : { ...fields, config: { ...existing.config, ...fields.config } };
  const p = await checkComponent(store, realmId, merged, existing);
  await store.userStorage.update(p);
  await recordAdminEvent(store, actor, { realmId, operation: 'UPDATE', resourceType: 'COMPONENT', resourcePath: path(p.id), representation: shown(merged) });
  return p;
}

/**
 * Deletes a provider. Its imported users stay, unlinked and without a password (Keycloak deletes them;
 * here an administrator may still give them one, or delete them).
 */
export async function deleteUserStorage(store: Store, actor: Actor, realmId: string, id: string): Promise<void> {
  const p = await requireUserStorage(store, realmId, id);
  await store.userStorage.delete(realmId, p.id);
  await store.userStorage.unlinkMappers(p.mappers.map((m) => m.id));
  await recordAdminEvent(store, actor, { realmId, operation: 'DELETE', resourceType: 'COMPONENT', resourcePath: path(p.id) });
}

/** A provider of the realm by its id (the user-storage/{id} actions name it so, as Keycloak's), else NotFound. */
async function providerById(store: Store, realmId: string, id: string): Promise<UserStorageProvider> {
  await requireRealm(store, realmId);
  const p = await store.userStorage.get(realmId, id);
  if (!p) throw new NotFound('Could not find component');
  return p;
}

/** Keycloak's user-storage/{id}/name: the provider's id and name (the admin console shows it on a federated user's page). */
export async function userStorageName(store: Store, realmId: string, id: string): Promise<{ id: string; name: string }> {
  const p = await providerById(store, realmId, id);
  return { id: p.id, name: p.name };
}

/**
 * Keycloak's remove-imported-users: deletes every user imported from the provider, each as the admin
 * API's user delete does (deleteUser: their browser sessions end, their refresh chains are revoked and
 * with them their access tokens, their consents, memberships and credentials go; an admin event DELETE
 * USER each), then one admin event ACTION for the provider. An entry still in the directory is imported
 * again at its next sign-in (a new user, with a new id), as in Keycloak. Returns how many were removed.
 */
export async function removeImportedUsers(store: Store, actor: Actor, realmId: string, id: string): Promise<number> {
  const p = await providerById(store, realmId, id);
  let removed = 0;
  for (const userId of await store.userStorage.linkedUserIds(realmId, p.id)) {
    try {
      await deleteUser(store, { realmId, user: userId }, actor);
      removed++;
    } catch (err) {
      // Deleted meanwhile (by another admin): what was asked is done.
      if (!(err instanceof NotFound)) throw err;
    }
  }
  await recordAdminEvent(store, actor, { realmId, operation: 'ACTION', resourceType: 'USER_STORAGE', resourcePath: `user-storage/${p.id}/remove-imported-users`, representation: { action: 'remove-imported-users', removed } });
  return removed;
}

/**
 * Keycloak's unlink-users: the provider's users become local users. They keep their id, names, email,
 * attributes (LDAP_ID and LDAP_ENTRY_DN too, as Keycloak keeps them), groups, roles, credentials other
 * than the password, sessions and tokens; their groups and roles are no longer the directory's to
 * decide. Their password lived in the directory and never here: they cannot sign in with a password
 * until an administrator sets one (reset-password) or they reset it by email, as in Keycloak. A sign-in
 * with the directory's password no longer takes them over (a local user of the same name is never
 * taken over by an entry). An admin event UPDATE USER each and one ACTION for the provider. Returns how
 * many were unlinked.
 */
export async function unlinkImportedUsers(store: Store, actor: Actor, realmId: string, id: string): Promise<number> {
  const p = await providerById(store, realmId, id);
  const ids = await store.userStorage.unlinkUsers(realmId, p.id);
  for (const userId of ids) {
    await recordAdminEvent(store, actor, { realmId, operation: 'UPDATE', resourceType: 'USER', resourcePath: `users/${userId}`, representation: { federationLink: null } });
  }
  await recordAdminEvent(store, actor, { realmId, operation: 'ACTION', resourceType: 'USER_STORAGE', resourcePath: `user-storage/${p.id}/unlink-users`, representation: { action: 'unlink-users', unlinked: ids.length } });
  return ids.length;
}

/** The bind password, opened (a connection test; an export with secrets). */
export async function bindCredentialOf(store: Store, p: UserStorageProvider): Promise<string | undefined> {
  return p.sealedBindCredential ? openLdapCredential(store, p.realmId, p.id, p.sealedBindCredential) : undefined;
}

/** Keycloak's ComponentRepresentation of a provider: bindCredential masked. */
export function toComponentRepresentation(p: UserStorageProvider): Record<string, unknown> {
  return {
    id: p.id,
    name: p.name,
    providerId: p.providerId,
    providerType: USER_STORAGE_TYPE,
    parentId: p.realmId,
    config: { ...p.config, ...(p.sealedBindCredential ? { bindCredential: [SECRET_MASK] } : {}) },
  };
}

/** Keycloak's ComponentRepresentation of a provider's mapper (parentId: the provider). */
export function toMapperRepresentation(p: UserStorageProvider, m: UserStorageMapper): Record<string, unknown> {
  return { id: m.id, name: m.name, providerId: m.providerId, providerType: LDAP_MAPPER_TYPE, parentId: p.id, config: m.config };
}

// ---- The providers' mappers (LDAPStorageMapper subcomponents) ----

/** The provider holding the mapper `id`, and the mapper; undefined when no provider of the realm has it. */
export async function findMapper(store: Store, realmId: string, id: string): Promise<{ provider: UserStorageProvider; mapper: UserStorageMapper } | undefined> {
  for (const provider of await store.userStorage.list(realmId)) {
    const mapper = provider.mappers.find((m) => m.id === id);
    if (mapper) return { provider, mapper };
  }
  return undefined;
}

export async function createMapper(store: Store, actor: Actor, realmId: string, providerId: string, fields: { id?: string; name?: string; providerId?: string; config?: Record<string, string[]> }): Promise<UserStorageMapper> {
  const provider = await requireUserStorage(store, realmId, providerId);
  const m: UserStorageMapper = { id: fields.id ?? randomUUID(), name: (fields.name ?? '').trim(), providerId: fields.providerId ?? '', config: fields.config ?? {} };
  if (!/^[A-Za-z0-9._-]{1,36}$/.test(m.id) || (await findMapper(store, realmId, m.id))) throw new ValidationError('a mapper needs a new id of at most 36 letters, digits, ".", "_" or "-"');
  if (m.name === '') throw new ValidationError('name is required');
  if (provider.mappers.some((x) => x.name === m.name)) throw new ValidationError(`the provider already has a mapper named ${JSON.stringify(m.name)}`);
  checkMapper(m);
  await checkMapperTargets(store, realmId, m);
  await store.userStorage.update({ ...provider, mappers: [...provider.mappers, m] });
  await recordAdminEvent(store, actor, { realmId, operation: 'CREATE', resourceType: 'COMPONENT', resourcePath: path(m.id), representation: { ...m, parentId: provider.id } });
  return m;
}

export async function updateMapper(store: Store, actor: Actor, realmId: string, id: string, fields: { name?: string; providerId?: string; config?: Record<string, string[]> }): Promise<UserStorageMapper> {
  const found = await findMapper(store, realmId, id);
  if (!found) throw new NotFound(`Could not find component ${id} in realm ${realmId}`);
  const m: UserStorageMapper = { id, name: (fields.name ?? found.mapper.name).trim(), providerId: fields.providerId ?? found.mapper.providerId, config: fields.config ?? found.mapper.config };
  checkMapper(m);
  await checkMapperTargets(store, realmId, m);
  await store.userStorage.update({ ...found.provider, mappers: found.provider.mappers.map((x) => (x.id === id ? m : x)) });
  await recordAdminEvent(store, actor, { realmId, operation: 'UPDATE', resourceType: 'COMPONENT', resourcePath: path(id), representation: { ...m, parentId: found.provider.id } });
  return m;
}

export async function deleteMapper(store: Store, actor: Actor, realmId: string, id: string): Promise<void> {
  const found = await findMapper(store, realmId, id);
  if (!found) throw new NotFound(`Could not find component ${id} in realm ${realmId}`);
  await store.userStorage.update({ ...found.provider, mappers: found.provider.mappers.filter((x) => x.id !== id) });
  // Its groups and roles stay, as local ones (memberships too): no sign-in changes them any more.
  await store.userStorage.unlinkMappers([id]);
  await recordAdminEvent(store, actor, { realmId, operation: 'DELETE', resourceType: 'COMPONENT', resourcePath: path(id) });
}
