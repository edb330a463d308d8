import type { Command } from 'commander';
import { CliError, collect, withStore } from './common.js';
import { terminalSafe } from './terminal-text.js';
import { registerScopeMappingCommands } from './scope-mappings.js';
import { addMappers, listMappers, removeMapper } from '../admin/operations/protocol-mappers.js';
import { ATTRIBUTE_MAPPER, AUDIENCE_MAPPER, CLIENT_ROLE_MAPPER, GROUP_MAPPER, HARDCODED_MAPPER, PROPERTY_MAPPER, REALM_ROLE_MAPPER, USER_PROPERTIES } from '../oauth/protocol-mappers.js';
import type { MapperOwner } from '../storage/repos/protocol-mappers.js';
import type { MapperOwnerType } from '../storage/types.js';

/** Short names of the mapper types Realmgate runs (Keycloak's own names are accepted too). */
const TYPES: Record<string, string> = {
  attribute: ATTRIBUTE_MAPPER,
  property: PROPERTY_MAPPER,
  hardcoded: HARDCODED_MAPPER,
  audience: AUDIENCE_MAPPER,
  groups: GROUP_MAPPER,
  'realm-roles': REALM_ROLE_MAPPER,
  'client-roles': CLIENT_ROLE_MAPPER,
};

/** --in: where the claim goes, Keycloak's four flags. */
const TARGETS: Record<string, string> = { access: 'access.token.claim', id: 'id.token.claim', userinfo: 'userinfo.token.claim', introspection: 'introspection.token.claim' };

interface AddOptions {
  name: string;
  type: string;
  claim?: string;
  attribute?: string;
  value?: string;
  jsonType?: string;
  multivalued?: boolean;
  fullPath?: boolean;
  clientAudience?: string;
  customAudience?: string;
  rolePrefix?: string;
  rolesOf?: string;
  in?: string;
  config: string[];
}

function targetsConfig(list: string): Record<string, string> {
  const wanted = list.split(',').map((s) => s.trim()).filter((s) => s !== '');
  for (const w of wanted) if (!Object.hasOwn(TARGETS, w)) throw new CliError(`--in takes access, id, userinfo and introspection (comma-separated), not ${JSON.stringify(w)}`);
  return Object.fromEntries(Object.entries(TARGETS).map(([k, key]) => [key, String(wanted.includes(k))]));
}

/** Keycloak's config from the options: the named ones first, then --config key=value as given. */
export function mapperConfig(type: string, o: AddOptions): Record<string, string> {
  const config: Record<string, string> = {
    ...(o.attribute !== undefined ? { 'user.attribute': o.attribute } : {}),
    ...(o.claim !== undefined ? { 'claim.name': o.claim } : {}),
    ...(o.value !== undefined ? { 'claim.value': o.value } : {}),
    ...(o.jsonType !== undefined ? { 'jsonType.label': o.jsonType } : {}),
    ...(o.multivalued ? { multivalued: 'true' } : {}),
    ...(type === GROUP_MAPPER ? { 'full.path': String(o.fullPath !== false) } : {}),
    ...(o.clientAudience !== undefined ? { 'included.client.audience': o.clientAudience } : {}),
    ...(o.customAudience !== undefined ? { 'included.custom.audience': o.customAudience } : {}),
    ...(o.rolePrefix !== undefined ? { [type === REALM_ROLE_MAPPER ? 'usermodel.realmRoleMapping.rolePrefix' : 'usermodel.clientRoleMapping.rolePrefix']: o.rolePrefix } : {}),
    ...(o.rolesOf !== undefined ? { 'usermodel.clientRoleMapping.clientId': o.rolesOf } : {}),
    // Keycloak's console defaults: a claim goes everywhere; an audience into access tokens (and introspection).
    ...targetsConfig(o.in ?? (type === AUDIENCE_MAPPER ? 'access,introspection' : 'access,id,userinfo,introspection')),
  };
  for (const kv of o.config) {
    const eq = kv.indexOf('=');
    if (eq <= 0) throw new CliError(`--config takes key=value, e.g. --config claim.name=tenant (got ${JSON.stringify(kv)})`);
    config[kv.slice(0, eq)] = kv.slice(eq + 1);
  }
  return config;
}

/** `client mapper ...` and `scope mapper ...`: Keycloak's protocol mappers (custom claims) of a client or scope. */
export function registerMapperCommands(parent: Command, kind: MapperOwnerType): void {
  const ownerArg = kind === 'client' ? '<client-id>' : '<scope>';
  const whose = kind === 'client' ? "a client's" : "a client scope's";
  const owner = (realmId: string, name: string): MapperOwner => ({ realmId, ownerType: kind, owner: name });
  const mapper = parent.command('mapper').description(`${whose} protocol mappers: custom claims in its tokens (Keycloak's, OpenID Connect)`);
  mapper
    .command(`add <realm> ${ownerArg}`)
    .description('add a protocol mapper; refused (nothing stored) when a rule is broken, e.g. a claim Realmgate issues itself')
    .requiredOption('--name <name>', 'the mapper name, unique for its client or scope')
    .requiredOption(
      '--type <type>',
      'attribute (a user attribute), property (a user property: username, email...), hardcoded (a fixed value), audience (adds to aud), groups (group membership), realm-roles, client-roles, or a Keycloak type id',
    )
    .option('--claim <name>', 'claim.name: dots nest ("org.tenant"), a backslash escapes a dot; client-roles: ${client_id} is the client')
    .option('--attribute <name>', `user.attribute: the user attribute to map (type attribute), or the property (type property: ${USER_PROPERTIES.join(', ')})`)
    .option('--value <value>', 'claim.value (type hardcoded)')
    .option('--json-type <type>', 'jsonType.label: String (default), long, int, boolean or JSON')
    .option('--multivalued', 'every value of the attribute, every group or role, as a list (default: the first)')
    .option('--no-full-path', 'groups: the group names instead of their full paths (/parent/child)')
    .option('--client-audience <client-id>', 'included.client.audience: a client of the realm (type audience)')
    .option('--custom-audience <aud>', 'included.custom.audience: any audience (type audience)')
    .option('--role-prefix <prefix>', 'realm-roles, client-roles: put before each role name (client-roles: ${client_id} is the client)')
    .option('--roles-of <client-id>', "client-roles: only this client's roles (default: every client's, each under its claim)")
    .option('--in <tokens>', 'where the claim goes: access,id,userinfo,introspection (default all four; audience: access,introspection)')
    .option('--config <key=value>', "a Keycloak config entry as is (repeatable; overrides the options above)", collect, [])
    .action(async (realmId: string, name: string, o: AddOptions) => {
      const type = Object.hasOwn(TYPES, o.type) ? TYPES[o.type]! : o.type;
      const fields = { name: o.name, protocol: 'openid-connect', protocolMapper: type, config: mapperConfig(type, o) };
      const [added] = await withStore((store) => addMappers(store, owner(realmId, name), [fields]));
      process.stdout.write(`added mapper ${terminalSafe(added!.name)} (${added!.id}) to ${kind} ${terminalSafe(name)} in realm ${realmId}\n`);
    });
  mapper
    .command(`list <realm> ${ownerArg}`)
    .description('list the mappers: id, name, type and config')
    .option('--json', "Keycloak's ProtocolMapperRepresentation list")
    .action(async (realmId: string, name: string, o: { json?: boolean }) => {
      const list = await withStore((store) => listMappers(store, owner(realmId, name)), { access: 'read' });
      if (o.json) {
        process.stdout.write(`${JSON.stringify(list.map((m) => ({ id: m.id, name: m.name, protocol: 'openid-connect', protocolMapper: m.type, config: m.config })), null, 2)}\n`);
        return;
      }
      for (const m of list) {
        const config = Object.entries(m.config).map(([k, v]) => `${k}=${v}`).join(' ');
        process.stdout.write(`${m.id}\t${terminalSafe(m.name)}\t${m.type}\t${terminalSafe(config)}\n`);
      }
    });
  mapper
    .command(`remove <realm> ${ownerArg} <mapper>`)
    .description('remove a mapper, named by its name or id')
    .action(async (realmId: string, name: string, which: string) => {
      await withStore(async (store) => {
        const o = owner(realmId, name);
        const m = (await listMappers(store, o)).find((x) => x.id === which || x.name === which);
        if (!m) throw new CliError(`${kind} ${name} has no mapper ${JSON.stringify(which)}`);
        await removeMapper(store, o, m.id);
      });
      process.stdout.write(`removed mapper ${terminalSafe(which)} from ${kind} ${terminalSafe(name)} in realm ${realmId}\n`);
    });
}

/** `scope`: client scopes; for now their protocol mappers and role scope mappings (scopes themselves: the admin API and import). */
export function registerScope(program: Command): void {
  const scope = program.command('scope').description("client scopes' protocol mappers (custom claims) and role scope mappings; the scopes themselves: admin API, import");
  registerMapperCommands(scope, 'scope');
  registerScopeMappingCommands(scope, 'scope');
}
