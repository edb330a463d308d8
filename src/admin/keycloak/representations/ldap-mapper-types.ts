import {
  ATTRIBUTE_MAPPER,
  FULL_NAME_MAPPER,
  GROUP_MAPPER,
  HARDCODED_GROUP_MAPPER,
  HARDCODED_ROLE_MAPPER,
  MODES,
  ROLE_MAPPER,
} from '../../../oauth/ldap/mapper-config.js';

/** Keycloak's ConfigPropertyRepresentation (its ProviderConfigProperty type names). */
export interface ConfigPropertyRepresentation {
  name: string;
  label: string;
  helpText: string;
  type: 'String' | 'boolean' | 'List' | 'role' | 'Group' | 'ClientList';
  defaultValue?: string;
  options?: string[];
  required?: boolean;
}

/** Keycloak's ComponentTypeRepresentation: a component provider and the config it reads. */
export interface ComponentTypeRepresentation {
  id: string;
  helpText: string;
  properties: ConfigPropertyRepresentation[];
  metadata: Record<string, unknown>;
}

const text = (name: string, label: string, helpText: string, more: Partial<ConfigPropertyRepresentation> = {}): ConfigPropertyRepresentation => ({ name, label, helpText, type: 'String', ...more });
const flag = (name: string, label: string, helpText: string, defaultValue: boolean): ConfigPropertyRepresentation => ({ name, label, helpText, type: 'boolean', defaultValue: String(defaultValue) });
const list = (name: string, label: string, helpText: string, options: readonly string[]): ConfigPropertyRepresentation => ({ name, label, helpText, type: 'List', defaultValue: options[0]!, options: [...options] });

/** The membership keys a group mapper and a role mapper share. */
function membership(kind: 'group' | 'role'): ConfigPropertyRepresentation[] {
  const strategies = kind === 'group' ? ['LOAD_GROUPS_BY_MEMBER_ATTRIBUTE', 'GET_GROUPS_FROM_USER_MEMBEROF_ATTRIBUTE'] : ['LOAD_ROLES_BY_MEMBER_ATTRIBUTE', 'GET_ROLES_FROM_USER_MEMBEROF_ATTRIBUTE'];
  return [
    text('membership.ldap.attribute', 'Membership LDAP Attribute', `The attribute of a directory ${kind} entry that lists its members (member, uniqueMember, memberUid).`, { defaultValue: 'member' }),
    list('membership.attribute.type', 'Membership Attribute Type', 'DN: the membership attribute holds the members\' DNs; UID: their usernames (posixGroup\'s memberUid).', ['DN', 'UID']),
    text('membership.user.ldap.attribute', 'Membership User LDAP Attribute', 'With membership type UID: the user entry\'s attribute the membership values name.', { defaultValue: 'uid' }),
    text(`${kind}s.ldap.filter`, 'LDAP Filter', `An extra LDAP filter, in parentheses, that directory ${kind}s must match.`),
    list('mode', 'Mode', `READ_ONLY: the directory's ${kind}s are read at each sign-in and cannot be changed here; LDAP_ONLY: the same (Realmgate writes no ${kind}s to the directory); IMPORT: read at each sign-in, then local.`, MODES),
    list('user.roles.retrieve.strategy', `User ${kind === 'group' ? 'Groups' : 'Roles'} Retrieve Strategy`, `How a user's ${kind}s are found: by the ${kind}s' membership attribute, or by the user entry's memberOf attribute.`, strategies),
    text('memberof.ldap.attribute', 'Member-Of LDAP Attribute', "With the memberOf strategy: the user entry's attribute that lists its groups' DNs.", { defaultValue: 'memberOf' }),
    flag('drop.non.existing.groups.during.sync', `Drop non-existing ${kind}s during sync`, `A synchronization deletes the ${kind}s this mapper made that are no longer in the directory.`, false),
  ];
}

/**
 * The LDAPStorageMapper types an LDAP provider takes (keycloak-admin-client's
 * components.listSubComponents: GET /components/{id}/sub-component-types), each with the config
 * Realmgate reads, in Keycloak's names, with Keycloak's defaults. Keys Keycloak has and Realmgate does not
 * act on are not listed (docs/admin.md).
 */
export const LDAP_MAPPER_TYPES: readonly ComponentTypeRepresentation[] = [
  {
    id: ATTRIBUTE_MAPPER,
    helpText: "Maps an attribute of the directory's user entry to a user attribute (username, email, firstName, lastName, or any other).",
    properties: [
      text('user.model.attribute', 'User Model Attribute', 'The user attribute: username, email, firstName, lastName, or the name of another attribute.', { required: true }),
      text('ldap.attribute', 'LDAP Attribute', "The directory entry's attribute, e.g. mail or givenName: read at each sign-in.", { required: true }),
    ],
    metadata: {},
  },
  {
    id: GROUP_MAPPER,
    helpText: "Maps the directory's groups (groupOfNames, groupOfUniqueNames, posixGroup, Active Directory's group) to groups, and users' memberships of them.",
    properties: [
      text('groups.dn', 'LDAP Groups DN', 'Where the groups are, e.g. ou=Groups,dc=example,dc=org.', { required: true }),
      text('group.name.ldap.attribute', 'Group Name LDAP Attribute', "The group entry's name attribute.", { defaultValue: 'cn' }),
      text('group.object.classes', 'Group Object Classes', "The group entries' object classes, comma-separated.", { defaultValue: 'groupOfNames' }),
      flag('preserve.group.inheritance', 'Preserve Group Inheritance', "Directory groups that are members of other groups become subgroups of theirs.", true),
      ...membership('group'),
      text('groups.path', 'Groups Path', 'The group the directory groups are made under (/ for top-level groups).', { defaultValue: '/' }),
    ],
    metadata: {},
  },
  {
    id: ROLE_MAPPER,
    helpText: "Maps the directory's groups to realm or client roles, and users' memberships to role mappings.",
    properties: [
      text('roles.dn', 'LDAP Roles DN', 'Where the role groups are, e.g. ou=Roles,dc=example,dc=org.', { required: true }),
      text('role.name.ldap.attribute', 'Role Name LDAP Attribute', "The group entry's name attribute: the role's name.", { defaultValue: 'cn' }),
      text('role.object.classes', 'Role Object Classes', "The role group entries' object classes, comma-separated.", { defaultValue: 'groupOfNames' }),
      ...membership('role'),
      flag('use.realm.roles.mapping', 'Use Realm Roles Mapping', 'Realm roles; off: roles of the client named by client.id.', true),
      { name: 'client.id', label: 'Client ID', helpText: 'With realm roles off: the client whose roles the groups become.', type: 'ClientList' },
    ],
    metadata: {},
  },
  {
    id: HARDCODED_ROLE_MAPPER,
    helpText: 'Every user of the provider has this role.',
    properties: [{ name: 'role', label: 'Role', helpText: 'A realm role name, or clientId.roleName for a client role.', type: 'role', required: true }],
    metadata: {},
  },
  {
    id: HARDCODED_GROUP_MAPPER,
    helpText: 'Every user of the provider is a member of this group.',
    properties: [{ name: 'group', label: 'Group', helpText: 'A group path, such as /staff.', type: 'Group', required: true }],
    metadata: {},
  },
  {
    id: FULL_NAME_MAPPER,
    helpText: "Splits the directory's full name attribute (\"First Last\") into the first name (all but the last word) and the last name.",
    properties: [text('ldap.full.name.attribute', 'LDAP Full Name Attribute', "The directory entry's full name attribute.", { defaultValue: 'cn' })],
    metadata: {},
  },
];
