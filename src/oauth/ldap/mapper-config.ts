import type { UserStorageMapper } from '../../storage/types.js';
import { isAttributeName } from './escape.js';

/**
 * The LDAPStorageMapper subcomponents Realmgate acts on, their config as Keycloak names it (its
 * GroupMapperConfig, RoleMapperConfig, HardcodedLDAP*StorageMapper and FullNameLDAPStorageMapper
 * factories), read and checked once here for every door (admin API, CLI, import) and for the sign-in.
 */

export const GROUP_MAPPER = 'group-ldap-mapper';
export const ROLE_MAPPER = 'role-ldap-mapper';
export const HARDCODED_ROLE_MAPPER = 'hardcoded-ldap-role-mapper';
export const HARDCODED_GROUP_MAPPER = 'hardcoded-ldap-group-mapper';
export const FULL_NAME_MAPPER = 'full-name-ldap-mapper';
export const ATTRIBUTE_MAPPER = 'user-attribute-ldap-mapper';
export const MAPPER_TYPES = [ATTRIBUTE_MAPPER, GROUP_MAPPER, ROLE_MAPPER, HARDCODED_ROLE_MAPPER, HARDCODED_GROUP_MAPPER, FULL_NAME_MAPPER];

export const MODES = ['READ_ONLY', 'LDAP_ONLY', 'IMPORT'] as const;
export type Mode = (typeof MODES)[number];
/** LOAD_GROUPS_BY_MEMBER_ATTRIBUTE_RECURSIVELY is read as LOAD_GROUPS_BY_MEMBER_ATTRIBUTE (no recursion through nested groups). */
export const STRATEGIES = ['LOAD_GROUPS_BY_MEMBER_ATTRIBUTE', 'GET_GROUPS_FROM_USER_MEMBEROF_ATTRIBUTE', 'LOAD_GROUPS_BY_MEMBER_ATTRIBUTE_RECURSIVELY', 'LOAD_ROLES_BY_MEMBER_ATTRIBUTE', 'GET_ROLES_FROM_USER_MEMBEROF_ATTRIBUTE', 'LOAD_ROLES_BY_MEMBER_ATTRIBUTE_RECURSIVELY'] as const;

/** A group-ldap-mapper or role-ldap-mapper, read: where the directory's groups are and what they become. */
export interface DirectoryGroupMapping {
  id: string;
  name: string;
  kind: 'group' | 'role';
  baseDn: string;
  nameAttribute: string;
  objectClasses: string[];
  filter: string | undefined;
  membershipAttribute: string;
  membershipType: 'DN' | 'UID';
  membershipUserAttribute: string;
  mode: Mode;
  /** 'member': one search of the groups naming the user; 'memberOf': the user entry's memberOf values. */
  strategy: 'member' | 'memberOf';
  memberOfAttribute: string;
  /** group-ldap-mapper: the nesting kept (a directory group member of another becomes its subgroup). */
  preserveInheritance: boolean;
  /** group-ldap-mapper: the path of the local group the directory's groups live under ('/': the top). */
  groupsPath: string;
  dropNonExisting: boolean;
  /** role-ldap-mapper: the client (clientId) whose roles the groups become; undefined: realm roles. */
  clientId: string | undefined;
}

const first = (c: Record<string, string[]>, k: string): string | undefined => {
  const v = c[k]?.[0]?.trim();
  return v === undefined || v === '' ? undefined : v;
};
const flag = (c: Record<string, string[]>, k: string, fallback: boolean): boolean => {
  const v = first(c, k);
  return v === undefined ? fallback : v === 'true';
};

/**
 * RFC 4514 syntax of a DN: RDNs separated by unescaped commas, each attribute=value pairs joined by
 * unescaped '+', attribute types names or OIDs. Checked, not normalized.
 */
export function isDn(dn: string): boolean {
  if (dn.trim() === '' || dn.length > 1024) return false;
  const parts: string[] = [];
  let cur = '';
  for (let i = 0; i < dn.length; i++) {
    const ch = dn[i]!;
    if (ch === '\\') {
      if (i + 1 >= dn.length) return false;
      cur += ch + dn[++i];
    } else if (ch === ',' || ch === '+') {
      parts.push(cur);
      cur = '';
    } else cur += ch;
  }
  parts.push(cur);
  return parts.every((p) => {
    const eq = p.indexOf('=');
    if (eq <= 0) return false;
    const type = p.slice(0, eq).trim();
    const value = p.slice(eq + 1).trim();
    return isAttributeName(type) && value !== '';
  });
}

function attribute(c: Record<string, string[]>, k: string, fallback: string, problems: string[]): string {
  const v = first(c, k);
  if (v === undefined) return fallback;
  if (!isAttributeName(v)) problems.push(`config["${k}"] must be an LDAP attribute name`);
  return v;
}

function filter(c: Record<string, string[]>, k: string, problems: string[]): string | undefined {
  const v = first(c, k);
  if (v !== undefined && !(v.startsWith('(') && v.endsWith(')'))) problems.push(`config["${k}"] must be an LDAP filter in parentheses`);
  return v;
}

function oneOf<T extends string>(c: Record<string, string[]>, k: string, allowed: readonly T[], fallback: T, problems: string[]): T {
  const v = first(c, k);
  if (v === undefined) return fallback;
  if (!(allowed as readonly string[]).includes(v)) problems.push(`config["${k}"] must be one of ${allowed.join(', ')}`);
  return v as T;
}

/** A group or role mapper's config read with Keycloak's defaults, and what is wrong with it. */
export function readGroupMapping(m: UserStorageMapper): { mapping: DirectoryGroupMapping; problems: string[] } {
  const c = m.config;
  const kind = m.providerId === ROLE_MAPPER ? 'role' : 'group';
  const p = kind === 'group' ? 'group' : 'role';
  const problems: string[] = [];
  const baseDn = first(c, `${p}s.dn`) ?? '';
  if (!isDn(baseDn)) problems.push(`config["${p}s.dn"] must be a DN (e.g. ou=Groups,dc=example,dc=org)`);
  const classes = (first(c, `${p}.object.classes`) ?? 'groupOfNames').split(',').map((s) => s.trim()).filter((s) => s !== '');
  if (classes.length === 0 || !classes.every(isAttributeName)) problems.push(`config["${p}.object.classes"] must list object classes, separated by commas`);
  for (const k of [`preserve.group.inheritance`, 'ignore.missing.groups', 'drop.non.existing.groups.during.sync', 'use.realm.roles.mapping']) {
    const v = first(c, k);
    if (v !== undefined && v !== 'true' && v !== 'false') problems.push(`config["${k}"] must be "true" or "false"`);
  }
  const strategy = oneOf(c, 'user.roles.retrieve.strategy', STRATEGIES, kind === 'group' ? 'LOAD_GROUPS_BY_MEMBER_ATTRIBUTE' : 'LOAD_ROLES_BY_MEMBER_ATTRIBUTE', problems);
  const groupsPath = first(c, 'groups.path') ?? '/';
  if (kind === 'group' && !(groupsPath === '/' || /^(\/[^/]+)+\/?$/.test(groupsPath))) problems.push('config["groups.path"] must be a group path such as / or /ldap-groups');
  const realmRoles = flag(c, 'use.realm.roles.mapping', true);
  const clientId = kind === 'role' && !realmRoles ? first(c, 'client.id') : undefined;
  if (kind === 'role' && !realmRoles && clientId === undefined) problems.push('config["client.id"] is required when use.realm.roles.mapping is false');
  const mapping: DirectoryGroupMapping = {
    id: m.id,
    name: m.name,
    kind,
    baseDn,
    nameAttribute: attribute(c, `${p}.name.ldap.attribute`, 'cn', problems),
    objectClasses: classes,
    filter: filter(c, `${p}s.ldap.filter`, problems),
    membershipAttribute: attribute(c, 'membership.ldap.attribute', 'member', problems),
    membershipType: oneOf(c, 'membership.attribute.type', ['DN', 'UID'] as const, 'DN', problems),
    membershipUserAttribute: attribute(c, 'membership.user.ldap.attribute', 'uid', problems),
    mode: oneOf(c, 'mode', MODES, 'READ_ONLY', problems),
    strategy: strategy.startsWith('GET_') ? 'memberOf' : 'member',
    memberOfAttribute: attribute(c, 'memberof.ldap.attribute', 'memberOf', problems),
    preserveInheritance: kind === 'group' && flag(c, 'preserve.group.inheritance', true),
    groupsPath: groupsPath.length > 1 ? groupsPath.replace(/\/+$/, '') : '/',
    dropNonExisting: flag(c, 'drop.non.existing.groups.during.sync', false),
    clientId,
  };
  return { mapping, problems };
}

/** What is wrong with a mapper's config (an empty list: nothing); existence of roles and groups is checked by the admin layer. */
export function mapperProblems(m: UserStorageMapper): string[] {
  const c = m.config;
  switch (m.providerId) {
    case ATTRIBUTE_MAPPER: {
      const problems: string[] = [];
      const ldap = first(c, 'ldap.attribute');
      if (!ldap || !isAttributeName(ldap)) problems.push('config["ldap.attribute"] must be an LDAP attribute name');
      if (!first(c, 'user.model.attribute')) problems.push('config["user.model.attribute"] is required');
      return problems;
    }
    case GROUP_MAPPER:
    case ROLE_MAPPER:
      return readGroupMapping(m).problems;
    case HARDCODED_ROLE_MAPPER:
      return first(c, 'role') ? [] : ['config["role"] is required: a realm role name, or clientId.roleName'];
    case HARDCODED_GROUP_MAPPER:
      return (first(c, 'group') ?? '').startsWith('/') ? [] : ['config["group"] is required: a group path such as /staff'];
    case FULL_NAME_MAPPER: {
      const problems: string[] = [];
      attribute(c, 'ldap.full.name.attribute', 'cn', problems);
      return problems;
    }
    default:
      return [`providerId ${JSON.stringify(m.providerId)} is not supported (Realmgate acts on ${MAPPER_TYPES.join(', ')})`];
  }
}

/** full-name-ldap-mapper: the attribute holding "First Last" (default cn); undefined without such a mapper. */
export function fullNameAttribute(mappers: UserStorageMapper[]): string | undefined {
  const m = mappers.find((x) => x.providerId === FULL_NAME_MAPPER);
  if (!m) return undefined;
  const v = first(m.config, 'ldap.full.name.attribute') ?? 'cn';
  return isAttributeName(v) ? v : 'cn';
}

/** Keycloak's FullNameLDAPStorageMapper: the last word is the last name, what comes before it the first name. */
export function splitFullName(full: string): { firstName: string | null; lastName: string | null } {
  const v = full.trim().replace(/\s+/g, ' ');
  if (v === '') return { firstName: null, lastName: null };
  const i = v.lastIndexOf(' ');
  return i < 0 ? { firstName: null, lastName: v } : { firstName: v.slice(0, i), lastName: v.slice(i + 1) };
}

/** One line of what a mapper does (the import report, the CLI's list). */
export function describeMapper(m: UserStorageMapper): string {
  const c = m.config;
  switch (m.providerId) {
    case GROUP_MAPPER: {
      const g = readGroupMapping(m).mapping;
      return `directory groups under ${g.baseDn} become groups under ${g.groupsPath}${g.preserveInheritance ? ' (nesting kept)' : ''}; memberships set at each sign-in (mode ${g.mode}${g.mode === 'IMPORT' ? ': added only' : ': local changes refused'})`;
    }
    case ROLE_MAPPER: {
      const g = readGroupMapping(m).mapping;
      return `directory groups under ${g.baseDn} become ${g.clientId ? `roles of client ${g.clientId}` : 'realm roles'}; role mappings set at each sign-in (mode ${g.mode})`;
    }
    case HARDCODED_ROLE_MAPPER:
      return `every user of the provider gets role ${first(c, 'role') ?? ''}`;
    case HARDCODED_GROUP_MAPPER:
      return `every user of the provider joins group ${first(c, 'group') ?? ''}`;
    case FULL_NAME_MAPPER:
      return `first and last name from ${fullNameAttribute([m])}`;
    default:
      return `${first(c, 'user.model.attribute') ?? ''} from ${first(c, 'ldap.attribute') ?? ''}`;
  }
}
