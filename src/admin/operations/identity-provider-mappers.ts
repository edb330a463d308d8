import { randomUUID } from 'node:crypto';
import type { Store } from '../../storage/store.js';
import type { Role } from '../../storage/repos/roles.js';
import type { IdentityProvider, IdentityProviderMapper, User, UserAttributes } from '../../storage/types.js';
import { ATTRIBUTE_LIMITS, ConflictError, LIMITS, NotFound, ValidationError, checkEmail, checkText } from '../validation.js';
import { groupByPath, groupEffectiveRoles, type MappingGuard } from './groups.js';
import { requireIdentityProvider } from './identity-providers.js';
import { vouchesForEmail } from '../../oauth/social-providers.js';
import { now, recordAdminEvent, type Actor } from './common.js';

/**
 * Keycloak's identity provider mappers for OpenID Connect providers: what a sign-in through a provider
 * sets on the local user (roles, attributes, groups), from the provider's verified claims or hardcoded.
 * The doors (admin API, import, export) go through the checks and changes here; the broker
 * (identity-providers.ts brokeredUser) applies them in the transaction that makes or updates the user.
 *
 * Sync modes (Keycloak's): a user made by the sign-in gets every mapper (importNewUser); at a later
 * sign-in (or when the provider's account is linked to an existing user) a mapper whose effective mode is
 * FORCE applies again (updateBrokeredUser), LEGACY only takes away a claim-to-role mapper's role when the
 * claim no longer matches (updateBrokeredUserLegacy), IMPORT does nothing. INHERIT is the provider's
 * syncMode; a mapper without a syncMode is LEGACY, as Keycloak's model reads it.
 */

export const HARDCODED_ROLE = 'oidc-hardcoded-role-idp-mapper';
export const CLAIM_TO_ROLE = 'oidc-role-idp-mapper';
export const HARDCODED_ATTRIBUTE = 'hardcoded-attribute-idp-mapper';
export const CLAIM_TO_ATTRIBUTE = 'oidc-user-attribute-idp-mapper';
export const HARDCODED_GROUP = 'oidc-hardcoded-group-idp-mapper';

export const MAPPER_SYNC_MODES = ['INHERIT', 'IMPORT', 'FORCE', 'LEGACY'] as const;
type SyncMode = Exclude<(typeof MAPPER_SYNC_MODES)[number], 'INHERIT'>;

interface ConfigProperty {
  name: string;
  label: string;
  helpText: string;
  type: 'String' | 'role' | 'Group';
}

/** Keycloak's IdentityProviderMapperTypeRepresentation of each type Realmgate applies. */
export const MAPPER_TYPES: ReadonlyArray<{ id: string; name: string; category: string; helpText: string; properties: ConfigProperty[] }> = [
  {
    id: HARDCODED_ROLE,
    name: 'Hardcoded Role',
    category: 'Role Importer',
    helpText: 'When user is imported from provider, hardcode a role mapping for it.',
    properties: [{ name: 'role', label: 'Role', helpText: 'A realm role name, or clientId.roleName for a client role.', type: 'role' }],
  },
  {
    id: CLAIM_TO_ROLE,
    name: 'Claim to Role',
    category: 'Role Importer',
    helpText: 'If a claim has the value, grant the user the specified realm or client role.',
    properties: [
      { name: 'claim', label: 'Claim', helpText: "Name of the claim in the ID token or UserInfo; '.' for nested claims (address.locality), '\\.' for a literal dot.", type: 'String' },
      { name: 'claim.value', label: 'Claim Value', helpText: 'Value the claim must have; a list claim must contain it.', type: 'String' },
      { name: 'role', label: 'Role', helpText: 'A realm role name, or clientId.roleName for a client role.', type: 'role' },
    ],
  },
  {
    id: HARDCODED_ATTRIBUTE,
    name: 'Hardcoded Attribute',
    category: 'Attribute Importer',
    helpText: 'When user is imported from provider, hardcode a value to a specific user attribute.',
    properties: [
      { name: 'attribute', label: 'User Attribute', helpText: 'Name of the user attribute (email, firstName, lastName: the user property).', type: 'String' },
      { name: 'attribute.value', label: 'User Attribute Value', helpText: 'Value you want to hardcode.', type: 'String' },
    ],
  },
  {
    id: CLAIM_TO_ATTRIBUTE,
    name: 'Attribute Importer',
    category: 'Attribute Importer',
    helpText: 'Import a claim of the ID token or UserInfo into the specified user property or attribute.',
    properties: [
      { name: 'claim', label: 'Claim', helpText: "Name of the claim; '.' for nested claims, '\\.' for a literal dot.", type: 'String' },
      { name: 'user.attribute', label: 'User Attribute Name', helpText: 'User attribute to store the claim in (email, firstName, lastName: the user property).', type: 'String' },
    ],
  },
  {
    id: HARDCODED_GROUP,
    name: 'Hardcoded Group',
    category: 'Group Importer',
    helpText: 'Assign the user to the specified group.',
    properties: [{ name: 'group', label: 'Group', helpText: 'The path of the group (/parent/child).', type: 'Group' }],
  },
];

const CLAIM_BASED = new Set([CLAIM_TO_ROLE, CLAIM_TO_ATTRIBUTE]);
/** User properties an attribute mapper sets instead of an attribute (Keycloak's UserAttributeMapper). */
const USER_PROPERTIES = ['email', 'firstName', 'lastName'] as const;
type UserProperty = (typeof USER_PROPERTIES)[number];
const MAX_MAPPERS = 100;
const MAX_CONFIG_ENTRIES = 50;
const MAX_CONFIG_VALUE = 2048;

/** What a door says of a mapper (Keycloak's IdentityProviderMapperRepresentation, typed). */
export interface MapperFields {
  name?: string;
  identityProviderAlias?: string;
  identityProviderMapper?: string;
  config?: Record<string, string>;
}

/** Keycloak's role reference: clientId.roleName when a client of that id has that role (any dot may split), else a realm role. */
export async function roleOfReference(store: Store, realmId: string, ref: string): Promise<Role | undefined> {
  for (let dot = ref.indexOf('.'); dot > 0; dot = ref.indexOf('.', dot + 1)) {
    const role = await store.roles.find(realmId, ref.slice(0, dot), ref.slice(dot + 1));
    if (role) return role;
  }
  return ref === '' ? undefined : store.roles.find(realmId, '', ref);
}

const property = (name: string): UserProperty | undefined => USER_PROPERTIES.find((p) => p.toLowerCase() === name.toLowerCase());

function need(config: Record<string, string>, key: string): string {
  const v = config[key];
  if (v === undefined || v.trim() === '') throw new ValidationError(`config.${key} is required`);
  return v;
}

function checkAttributeName(key: string, name: string): void {
  checkText(`config.${key}`, name, ATTRIBUTE_LIMITS.nameLength);
  if (name.toLowerCase() === 'username') throw new ValidationError(`config.${key}: a mapper does not change the username`);
}

/**
 * Checks a mapper from any door and returns it ready to store. The role or group it names must exist (a
 * 400 otherwise); `guard` is the caller's right to grant the roles it would give (an admin role of
 * realm-management only by an admin holding it).
 */
export async function checkMapper(store: Store, p: IdentityProvider, fields: MapperFields, existing?: IdentityProviderMapper, guard: MappingGuard = {}): Promise<IdentityProviderMapper> {
  if (fields.identityProviderAlias !== undefined && fields.identityProviderAlias !== p.alias) throw new ValidationError(`identityProviderAlias ${JSON.stringify(fields.identityProviderAlias)} is not the provider of the path (${p.alias})`);
  const name = fields.name ?? existing?.name;
  if (name === undefined || name.trim() === '') throw new ValidationError('name is required');
  checkText('name', name, 255);
  const type = fields.identityProviderMapper ?? existing?.type;
  if (type === undefined || type === '') throw new ValidationError('identityProviderMapper (the mapper type) is required');
  if (!MAPPER_TYPES.some((t) => t.id === type)) throw new ValidationError(`identityProviderMapper ${JSON.stringify(type.slice(0, 100))} is not supported (Realmgate's mapper types: ${MAPPER_TYPES.map((t) => t.id).join(', ')})`);
  const config = { ...(fields.config ?? existing?.config ?? {}) };
  const entries = Object.entries(config);
  if (entries.length > MAX_CONFIG_ENTRIES) throw new ValidationError(`config may have at most ${MAX_CONFIG_ENTRIES} entries`);
  for (const [k, v] of entries) {
    checkText('a config key', k, 255);
    if (typeof v !== 'string') throw new ValidationError(`config.${k} must be a string`);
    checkText(`config.${k}`, v, MAX_CONFIG_VALUE, { multiline: true });
  }
  if (config.syncMode !== undefined && !(MAPPER_SYNC_MODES as readonly string[]).includes(config.syncMode)) throw new ValidationError(`config.syncMode must be one of ${MAPPER_SYNC_MODES.join(', ')}`);
  if (type === HARDCODED_ROLE || type === CLAIM_TO_ROLE) {
    const ref = need(config, 'role');
    const role = await roleOfReference(store, p.realmId, ref);
    if (!role) throw new ValidationError(`config.role: there is no role ${JSON.stringify(ref)} in realm ${p.realmId} (a realm role name, or clientId.roleName)`);
    guard.authorize?.([role]);
  }
  if (CLAIM_BASED.has(type)) checkText('config.claim', need(config, 'claim'), 255);
  if (type === CLAIM_TO_ROLE && config['claim.value'] === undefined) throw new ValidationError('config["claim.value"] is required (the value the claim must have)');
  if (type === CLAIM_TO_ATTRIBUTE) checkAttributeName('user.attribute', need(config, 'user.attribute'));
  if (type === HARDCODED_ATTRIBUTE) {
    const attribute = need(config, 'attribute');
    checkAttributeName('attribute', attribute);
    const value = config['attribute.value'] ?? '';
    if (property(attribute) === 'email' && value !== '') checkEmail(value);
    if (property(attribute) && value.length > LIMITS.personName) throw new ValidationError(`config["attribute.value"] must have at most ${LIMITS.personName} characters for ${attribute}`);
  }
  if (type === HARDCODED_GROUP) {
    const path = need(config, 'group');
    let group;
    try {
      group = await groupByPath(store, p.realmId, path);
    } catch (err) {
      if (!(err instanceof NotFound)) throw err;
      throw new ValidationError(`config.group: there is no group ${JSON.stringify(path)} in realm ${p.realmId}`);
    }
    guard.authorize?.(await groupEffectiveRoles(store, group));
  }
  return { id: existing?.id ?? randomUUID(), realmId: p.realmId, identityProvider: p.alias, name, type, config, createdAt: existing?.createdAt ?? now() };
}

const mapperPath = (alias: string, id: string): string => `identity-provider/instances/${alias}/mappers/${id}`;
const eventRepresentation = (m: IdentityProviderMapper): Record<string, unknown> => ({ id: m.id, name: m.name, identityProviderAlias: m.identityProvider, identityProviderMapper: m.type, config: m.config });

export async function listProviderMappers(store: Store, realmId: string, alias: string): Promise<IdentityProviderMapper[]> {
  await requireIdentityProvider(store, realmId, alias);
  return store.identityProviders.mappers(realmId, alias);
}

export async function requireProviderMapper(store: Store, realmId: string, alias: string, id: string): Promise<IdentityProviderMapper> {
  await requireIdentityProvider(store, realmId, alias);
  const m = await store.identityProviders.mapper(realmId, alias, id);
  if (!m) throw new NotFound(`identity provider ${alias} has no mapper ${id}`);
  return m;
}

export async function createProviderMapper(store: Store, actor: Actor, realmId: string, alias: string, fields: MapperFields, guard: MappingGuard = {}): Promise<IdentityProviderMapper> {
  const p = await requireIdentityProvider(store, realmId, alias);
  const m = await checkMapper(store, p, fields, undefined, guard);
  const others = await store.identityProviders.mappers(realmId, alias);
  if (others.some((x) => x.name === m.name)) throw new ConflictError(`identity provider ${alias} has a mapper named ${m.name} already`);
  if (others.length >= MAX_MAPPERS) throw new ValidationError(`an identity provider may have at most ${MAX_MAPPERS} mappers`);
  await store.identityProviders.createMapper(m);
  await recordAdminEvent(store, actor, { realmId, operation: 'CREATE', resourceType: 'IDENTITY_PROVIDER_MAPPER', resourcePath: mapperPath(alias, m.id), representation: eventRepresentation(m) });
  return m;
}

/** Keycloak's PUT of a mapper: the name and type are kept when left out, the config is the one given (or kept when left out). */
export async function updateProviderMapper(store: Store, actor: Actor, realmId: string, alias: string, id: string, fields: MapperFields, guard: MappingGuard = {}): Promise<IdentityProviderMapper> {
  const existing = await requireProviderMapper(store, realmId, alias, id);
  const p = await requireIdentityProvider(store, realmId, alias);
  const m = await checkMapper(store, p, fields, existing, guard);
  if (!(await store.identityProviders.updateMapper(m))) throw new NotFound(`identity provider ${alias} has no mapper ${id}`);
  await recordAdminEvent(store, actor, { realmId, operation: 'UPDATE', resourceType: 'IDENTITY_PROVIDER_MAPPER', resourcePath: mapperPath(alias, id), representation: eventRepresentation(m) });
  return m;
}

export async function deleteProviderMapper(store: Store, actor: Actor, realmId: string, alias: string, id: string): Promise<void> {
  await requireIdentityProvider(store, realmId, alias);
  if (!(await store.identityProviders.deleteMapper(realmId, alias, id))) throw new NotFound(`identity provider ${alias} has no mapper ${id}`);
  await recordAdminEvent(store, actor, { realmId, operation: 'DELETE', resourceType: 'IDENTITY_PROVIDER_MAPPER', resourcePath: mapperPath(alias, id) });
}

// ---- Claims: untrusted input from the provider ----

const MAX_PATH_PARTS = 16;
const MAX_LIST_SCAN = 1000;

/** Keycloak's claim path: '.' descends into an object, '\.' is a literal dot. */
function pathParts(path: string): string[] {
  const parts: string[] = [];
  let cur = '';
  for (let i = 0; i < path.length; i++) {
    if (path[i] === '\\' && path[i + 1] === '.') {
      cur += '.';
      i++;
    } else if (path[i] === '.') {
      parts.push(cur);
      cur = '';
    } else cur += path[i];
  }
  parts.push(cur);
  return parts;
}

const isPlainObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

/** The claim at a path of the claims (own properties of objects only); undefined when absent. */
export function claimAt(claims: Record<string, unknown>, path: string): unknown {
  const parts = pathParts(path);
  if (parts.length > MAX_PATH_PARTS) return undefined;
  let cur: unknown = claims;
  for (const part of parts) {
    if (!isPlainObject(cur) || !Object.hasOwn(cur, part)) return undefined;
    cur = cur[part];
  }
  return cur;
}

/** Keycloak's valueEquals: a string equal, a number or boolean of that text, a list containing it (lists looked into one level, the first 1000 items). */
export function claimMatches(value: unknown, want: string): boolean {
  const scalar = (v: unknown): boolean =>
    typeof v === 'string' ? v === want : typeof v === 'number' ? want.trim() !== '' && Number(want) === v : typeof v === 'boolean' ? want === String(v) : false;
  if (Array.isArray(value)) return value.slice(0, MAX_LIST_SCAN).some(scalar);
  return scalar(value);
}

const storable = (v: string): boolean => v.length <= ATTRIBUTE_LIMITS.valueLength && !/[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]/.test(v);

/** A claim as attribute values: strings, numbers and booleans as text (a list gives several); objects, nulls and values too long to keep are left out; at most 100. */
export function claimValues(value: unknown): string[] {
  const items = Array.isArray(value) ? value.slice(0, MAX_LIST_SCAN) : [value];
  const out: string[] = [];
  for (const v of items) {
    const s = typeof v === 'string' ? v : typeof v === 'number' && Number.isFinite(v) ? String(v) : typeof v === 'boolean' ? String(v) : undefined;
    if (s !== undefined && storable(s)) out.push(s);
    if (out.length >= ATTRIBUTE_LIMITS.values) break;
  }
  return out;
}

/** The effective sync mode of a mapper: its own, or the provider's for INHERIT (LEGACY when neither says). */
export function effectiveSyncMode(p: IdentityProvider, m: IdentityProviderMapper): SyncMode {
  const own = m.config.syncMode ?? 'LEGACY';
  const mode = own === 'INHERIT' ? (p.config.syncMode ?? 'LEGACY') : own;
  return mode === 'IMPORT' || mode === 'FORCE' ? mode : 'LEGACY';
}

/**
 * The claims a pending link (an existing user proving they own the account) keeps until it is made: the
 * top-level claims the provider's claim mappers read, when they fit in 32 KiB as JSON; else none, and
 * those mappers wait for the next sign-in.
 */
export async function claimsToKeep(store: Store, p: IdentityProvider, claims: Record<string, unknown> | undefined): Promise<Record<string, unknown> | undefined> {
  if (!claims) return undefined;
  const mappers = (await store.identityProviders.mappers(p.realmId, p.alias)).filter((m) => CLAIM_BASED.has(m.type) && m.config.claim);
  if (mappers.length === 0) return undefined;
  const kept: Record<string, unknown> = {};
  for (const m of mappers) {
    const top = pathParts(m.config.claim!)[0]!;
    if (Object.hasOwn(claims, top)) Object.defineProperty(kept, top, { value: claims[top], enumerable: true, writable: true, configurable: true });
  }
  const json = JSON.stringify(kept);
  return Buffer.byteLength(json) <= 32 * 1024 ? (JSON.parse(json) as Record<string, unknown>) : undefined;
}

// ---- Applying the mappers at a brokered sign-in ----

export interface MapperRun {
  /** The user was made by this sign-in (Keycloak's importNewUser); otherwise a later sign-in or a link to an existing user. */
  created: boolean;
  /** The provider's verified claims (the ID token's, then the UserInfo's); undefined: unknown, and the claim mappers do nothing. */
  claims: Record<string, unknown> | undefined;
  log?: (msg: string) => void;
}

type Action = 'import' | 'force' | 'legacy';

/**
 * Applies the provider's mappers to the user, with `tx` (the caller's transaction: the user's creation or
 * update, the link, and the mappers' changes land together or not at all). A role or group that no longer
 * exists, a claim value that cannot be kept, an email another user has (duplicate emails not allowed) are
 * left out, never a failed sign-in. A role a claim-to-role mapper takes away (FORCE, LEGACY) is kept when
 * another mapper grants it in the same sign-in (Keycloak's KEYCLOAK-8730).
 */
export async function applyProviderMappers(tx: Store, p: IdentityProvider, userId: string, run: MapperRun): Promise<void> {
  const mappers = await tx.identityProviders.mappers(p.realmId, p.alias);
  if (mappers.length === 0) return;
  const user = await tx.users.get(userId);
  if (!user) return;
  const log = run.log ?? ((): void => undefined);
  const grant = new Set<string>();
  const revoke = new Set<string>();
  const groups = new Set<string>();
  const attributes: UserAttributes = { ...user.attributes };
  let attributesChanged = false;
  const props: Partial<Record<UserProperty, string>> = {};
  const setValues = (name: string, values: string[], action: Action): void => {
    const prop = property(name);
    if (prop) {
      if (values[0] !== undefined) props[prop] = values[0];
      return;
    }
    if (values.length === 0) {
      // FORCE: a claim gone takes the attribute away (Keycloak's UserAttributeMapper.updateBrokeredUser).
      if (action === 'force' && Object.hasOwn(attributes, name)) {
        delete attributes[name];
        attributesChanged = true;
      }
      return;
    }
    Object.defineProperty(attributes, name, { value: values, enumerable: true, writable: true, configurable: true });
    attributesChanged = true;
  };
  for (const m of mappers) {
    const mode = effectiveSyncMode(p, m);
    const action: Action | undefined = run.created ? 'import' : mode === 'FORCE' ? 'force' : mode === 'LEGACY' ? 'legacy' : undefined;
    if (!action) continue;
    const c = m.config;
    if (CLAIM_BASED.has(m.type) && !run.claims) continue;
    if (m.type === HARDCODED_ROLE || m.type === CLAIM_TO_ROLE) {
      const role = await roleOfReference(tx, p.realmId, c.role ?? '');
      if (!role) {
        log(`identity provider ${p.alias} mapper ${m.name}: no role ${c.role}`);
        continue;
      }
      if (m.type === HARDCODED_ROLE) {
        if (action !== 'legacy') grant.add(role.id);
        continue;
      }
      const matches = claimMatches(claimAt(run.claims!, c.claim ?? ''), c['claim.value'] ?? '');
      if (matches && action !== 'legacy') grant.add(role.id);
      else if (!matches && action !== 'import') revoke.add(role.id);
    } else if (m.type === HARDCODED_ATTRIBUTE) {
      if (action === 'legacy' || !c.attribute) continue;
      const value = c['attribute.value'] ?? '';
      if (storable(value)) setValues(c.attribute, [value], action);
    } else if (m.type === CLAIM_TO_ATTRIBUTE) {
      if (action === 'legacy' || !c['user.attribute']) continue;
      setValues(c['user.attribute'], claimValues(claimAt(run.claims!, c.claim ?? '')), action);
    } else if (m.type === HARDCODED_GROUP) {
      if (action === 'legacy') continue;
      try {
        groups.add((await groupByPath(tx, p.realmId, c.group ?? '')).id);
      } catch (err) {
        if (!(err instanceof NotFound)) throw err;
        log(`identity provider ${p.alias} mapper ${m.name}: no group ${c.group}`);
      }
    }
  }
  await tx.roles.grant(user.id, [...grant]);
  await tx.roles.revoke(user.id, [...revoke].filter((id) => !grant.has(id)));
  for (const g of groups) await tx.groups.addMember(g, user.id);
  const patch = await propertyPatch(tx, p, user, props);
  if (attributesChanged) {
    if (Buffer.byteLength(JSON.stringify(attributes)) <= ATTRIBUTE_LIMITS.jsonBytes && Object.keys(attributes).length <= ATTRIBUTE_LIMITS.names) patch.attributes = attributes;
    else log(`identity provider ${p.alias}: the mapped attributes of user ${user.username} do not fit (${ATTRIBUTE_LIMITS.names} names, ${ATTRIBUTE_LIMITS.jsonBytes} bytes): left as they were`);
  }
  if (Object.keys(patch).length > 0) await tx.users.update(user.id, patch);
}

/** The email and names the mappers set, those that can be kept (an email another user has is not, unless the realm allows duplicates). */
async function propertyPatch(tx: Store, p: IdentityProvider, user: User, props: Partial<Record<UserProperty, string>>): Promise<{ email?: string; emailVerified?: boolean; firstName?: string; lastName?: string; attributes?: UserAttributes }> {
  const patch: { email?: string; emailVerified?: boolean; firstName?: string; lastName?: string; attributes?: UserAttributes } = {};
  const name = (v: string | undefined): string | undefined => (v !== undefined && v !== '' && v.length <= LIMITS.personName && !/[\x00-\x1f\x7f]/.test(v) ? v : undefined);
  const first = name(props.firstName);
  if (first !== undefined && first !== user.firstName) patch.firstName = first;
  const last = name(props.lastName);
  if (last !== undefined && last !== user.lastName) patch.lastName = last;
  const email = props.email;
  if (email !== undefined && email.length <= LIMITS.email && /^[^\s@]+@[^\s@]+$/.test(email) && !/[\x00-\x1f\x7f]/.test(email) && email.toLowerCase() !== (user.email ?? '').toLowerCase()) {
    const realm = await tx.realms.get(p.realmId);
    const taken = realm && !realm.duplicateEmailsAllowed && (await tx.users.findByEmail(p.realmId, email, 2)).some((u) => u.id !== user.id);
    if (!taken) Object.assign(patch, { email, emailVerified: p.trustEmail && vouchesForEmail(p.providerId) });
  }
  return patch;
}
