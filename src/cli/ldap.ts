import fs from 'node:fs';
import type { Command } from 'commander';
import { CliError, collect, readStdin, withStore } from './common.js';
import { terminalJson, terminalSafe } from './terminal-text.js';
import { cliActor } from '../admin/operations/common.js';
import {
  EDIT_MODES,
  bindCredentialOf,
  createMapper,
  createUserStorage,
  deleteMapper,
  deleteUserStorage,
  listUserStorage,
  requireUserStorage,
  toComponentRepresentation,
  toMapperRepresentation,
  updateUserStorage,
  type ComponentFields,
} from '../admin/operations/user-storage.js';
import type { UserStorageProvider } from '../storage/types.js';
import { GROUP_MAPPER, MAPPER_TYPES, ROLE_MAPPER, describeMapper } from '../oauth/ldap/mapper-config.js';

/** What `add` and `update` both take. */
interface LdapOptions {
  url?: string;
  usersDn?: string;
  bindDn?: string;
  bindCredentialStdin?: boolean;
  bindCredentialFile?: string;
  anonymous?: boolean;
  usernameAttribute?: string;
  rdnAttribute?: string;
  uuidAttribute?: string;
  objectClasses?: string;
  scope?: string;
  startTls?: boolean;
  editMode?: string;
  connectTimeout?: string;
  readTimeout?: string;
  enabled?: boolean;
  disabled?: boolean;
  config: string[];
}

const first = (p: UserStorageProvider, k: string): string => p.config[k]?.[0] ?? '';

/** One line per setting, as `ldap show`, `add` and `update` print them; never the bind credential. */
function describe(p: UserStorageProvider): string {
  const lines: Array<[string, string]> = [
    ['id', p.id],
    ['name', p.name],
    ['state', first(p, 'enabled') === 'false' ? 'disabled' : 'enabled'],
    ['connection URL', first(p, 'connectionUrl')],
    ['StartTLS', first(p, 'startTls') === 'true' ? 'yes' : 'no'],
    ['users DN', first(p, 'usersDn')],
    ['search scope', first(p, 'searchScope') === '2' ? 'subtree (2)' : 'one level (1)'],
    ['bind', first(p, 'authType') === 'none' ? 'anonymous' : first(p, 'bindDn')],
    ['bind credential', p.sealedBindCredential ? 'set (not shown)' : 'none'],
    ['username attribute', first(p, 'usernameLDAPAttribute')],
    ['RDN attribute', first(p, 'rdnLDAPAttribute')],
    ['UUID attribute', first(p, 'uuidLDAPAttribute')],
    ['object classes', first(p, 'userObjectClasses')],
    ['edit mode', first(p, 'editMode')],
    ['mappers', p.mappers.map((m) => `${m.name} (${m.providerId === 'user-attribute-ldap-mapper' ? `${m.config['user.model.attribute']?.[0] ?? ''} <- ${m.config['ldap.attribute']?.[0] ?? ''}` : m.providerId})`).join(', ')],
  ];
  return lines.map(([k, v]) => (v === '' ? `${k}:\n` : `${k}:${' '.repeat(Math.max(1, 20 - k.length))}${terminalSafe(v)}\n`)).join('');
}

/** --config key=value entries as a Keycloak config map. */
function configEntries(list: string[], example: string): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const kv of list) {
    const eq = kv.indexOf('=');
    if (eq <= 0) throw new CliError(`--config takes key=value, e.g. --config ${example} (got ${JSON.stringify(kv)})`);
    out[kv.slice(0, eq)] = [kv.slice(eq + 1)];
  }
  return out;
}

/** The config the options give (Keycloak's names); checked before the credential is read. */
function optionConfig(o: LdapOptions): Record<string, string[]> {
  if (o.enabled && o.disabled) throw new CliError('use either --enabled or --disabled, not both');
  if (o.scope !== undefined && o.scope !== 'one' && o.scope !== 'subtree') throw new CliError('--scope takes one or subtree');
  if (o.editMode !== undefined && !(EDIT_MODES as readonly string[]).includes(o.editMode)) throw new CliError(`--edit-mode takes ${EDIT_MODES.join(', ')}`);
  const out: Record<string, string[]> = {};
  const set = (k: string, v: string | undefined): void => {
    if (v !== undefined) out[k] = [v];
  };
  set('connectionUrl', o.url);
  set('usersDn', o.usersDn);
  set('bindDn', o.bindDn);
  if (o.anonymous) set('authType', 'none');
  else if (o.bindDn !== undefined) set('authType', 'simple');
  set('usernameLDAPAttribute', o.usernameAttribute);
  set('rdnLDAPAttribute', o.rdnAttribute ?? o.usernameAttribute);
  set('uuidLDAPAttribute', o.uuidAttribute);
  set('userObjectClasses', o.objectClasses);
  set('searchScope', o.scope === undefined ? undefined : o.scope === 'subtree' ? '2' : '1');
  set('startTls', o.startTls === undefined ? undefined : String(o.startTls));
  set('editMode', o.editMode);
  set('connectionTimeout', o.connectTimeout);
  set('readTimeout', o.readTimeout);
  set('enabled', o.enabled ? 'true' : o.disabled ? 'false' : undefined);
  const given = configEntries(o.config, 'customUserSearchFilter=(employeeType=staff)');
  if (given.bindCredential) throw new CliError('the bind credential is read with --bind-credential-stdin or --bind-credential-file, never from the command line');
  return { ...out, ...given };
}

/** The bind password from standard input or a file (never an argument: the process list and the shell history would show it). */
async function credentialFrom(o: LdapOptions): Promise<Record<string, string[]>> {
  if (o.bindCredentialStdin && o.bindCredentialFile !== undefined) throw new CliError('use either --bind-credential-stdin or --bind-credential-file, not both');
  let secret: string | undefined;
  if (o.bindCredentialStdin) secret = await readStdin();
  else if (o.bindCredentialFile !== undefined) {
    try {
      secret = fs.readFileSync(o.bindCredentialFile, 'utf8').replace(/\r?\n$/, '');
    } catch (err) {
      throw new CliError(`cannot read ${o.bindCredentialFile}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
    }
  }
  if (secret === undefined) return {};
  if (secret === '') throw new CliError('the bind credential read is empty (an empty password would be an anonymous bind): give the bind DN\'s password');
  return { bindCredential: [secret] };
}

function ldapOptions(cmd: Command, update: boolean): Command {
  return cmd
    .option('--url <url>', `the directory: ldap://host[:port] or ldaps://host[:port]${update ? '' : ' (required)'}; several, separated by spaces, are tried in that order by Keycloak (Realmgate uses the first)`)
    .option('--users-dn <dn>', `where the users are searched, e.g. ou=People,dc=example,dc=org${update ? '' : ' (required)'}`)
    .option('--bind-dn <dn>', 'the service account the search binds as (authType simple)')
    .option('--bind-credential-stdin', "read the bind DN's password from standard input")
    .option('--bind-credential-file <path>', "read the bind DN's password from a file (its content, without a final newline)")
    .option('--anonymous', 'search without binding first (authType none)')
    .option('--username-attribute <attr>', `the attribute users sign in with${update ? '' : ' (default uid; sAMAccountName for Active Directory)'}`)
    .option('--rdn-attribute <attr>', 'the attribute of the entries\' RDN (default: the username attribute)')
    .option('--uuid-attribute <attr>', `the entries' unique, stable id${update ? '' : ' (default entryUUID; objectGUID for Active Directory)'}`)
    .option('--object-classes <list>', `the users' object classes, comma-separated${update ? '' : ' (default "inetOrgPerson, organizationalPerson")'}`)
    .option('--scope <one|subtree>', `search one level under the users DN${update ? '' : ' (default)'} or the whole subtree`)
    .option('--start-tls', 'upgrade an ldap:// connection with StartTLS (the certificate is verified; NODE_EXTRA_CA_CERTS adds a private CA)')
    .option('--edit-mode <mode>', `Keycloak's editMode: ${EDIT_MODES.join(', ')} (WRITABLE: password changes are written to the directory; with --config usePasswordModifyExtendedOp=true by RFC 3062's password modify operation)`)
    .option('--connect-timeout <ms>', 'connection timeout in milliseconds (default 3000, at most 10000)')
    .option('--read-timeout <ms>', 'timeout of each LDAP operation in milliseconds (default 3000, at most 10000)')
    .option('--config <key=value>', 'a Keycloak config entry as is (repeatable; e.g. customUserSearchFilter=(employeeType=staff))', collect, []);
}

export function registerLdap(program: Command): void {
  const ldap = program
    .command('ldap')
    .description("manage user federation: users sign in with their LDAP / Active Directory password (Keycloak's ldap user storage provider; profiles are read from the directory, and a password is written to it only under --edit-mode WRITABLE)");
  ldapOptions(ldap.command('add <realm> <name>'), false)
    .description('add an LDAP provider: give --url, --users-dn and --bind-dn with --bind-credential-stdin or --bind-credential-file (or --anonymous). Keycloak\'s default mappers are added (username, first name, last name, email, creation and modify dates)')
    .option('--disabled', 'add it disabled (nobody signs in through it)')
    .action(async (realmId: string, name: string, o: LdapOptions) => {
      const config = optionConfig(o);
      if (o.url === undefined || o.usersDn === undefined) throw new CliError('--url and --users-dn are required');
      if (!o.anonymous && o.bindDn === undefined) throw new CliError('give --bind-dn (with --bind-credential-stdin or --bind-credential-file), or --anonymous');
      if (!o.anonymous && !o.bindCredentialStdin && o.bindCredentialFile === undefined) throw new CliError("the bind DN's password is required: --bind-credential-stdin or --bind-credential-file");
      const secret = await credentialFrom(o);
      const out = await withStore(async (store) => describe(await createUserStorage(store, cliActor(), realmId, { name, providerId: 'ldap', config: { ...config, ...secret } })), { keys: true });
      process.stdout.write(`created LDAP provider ${name} in realm ${realmId}\n${out}`);
    });
  ldapOptions(ldap.command('update <realm> <provider>'), true)
    .description('change a provider (by name or id); what is not given stays as it is (the bind credential too, unless --anonymous, which drops it; a new --url or --bind-dn needs the credential again); prints the result')
    .option('--no-start-tls', 'stop using StartTLS')
    .option('--enabled', 'enable the provider')
    .option('--disabled', 'disable the provider: its users cannot sign in (local users are not affected)')
    .action(async (realmId: string, ref: string, o: LdapOptions) => {
      const config = optionConfig(o);
      if (o.anonymous && (o.bindCredentialStdin || o.bindCredentialFile !== undefined)) throw new CliError('--anonymous binds with no credential: leave out --bind-credential-stdin and --bind-credential-file');
      // An anonymous provider keeps no credential (one kept could later go to another directory).
      const secret = o.anonymous ? { bindCredential: [''] } : await credentialFrom(o);
      const out = await withStore(async (store) => {
        const p = await requireUserStorage(store, realmId, ref);
        const fields: ComponentFields = { config: { ...config, ...secret } };
        return describe(await updateUserStorage(store, cliActor(), realmId, p.id, fields));
      }, { keys: secret.bindCredential !== undefined });
      process.stdout.write(`updated LDAP provider ${ref} in realm ${realmId}\n${out}`);
    });
  ldap
    .command('list <realm>')
    .description("list a realm's LDAP providers: id, name, state, connection URL, users DN; tab-separated")
    .option('--json', "Keycloak's ComponentRepresentation list (the bind credential masked)")
    .action(async (realmId: string, o: { json?: boolean }) => {
      const list = await withStore((store) => listUserStorage(store, realmId), { access: 'read' });
      if (o.json) {
        process.stdout.write(`${terminalJson(list.map(toComponentRepresentation), 2)}\n`);
        return;
      }
      for (const p of list) process.stdout.write(`${p.id}\t${terminalSafe(p.name)}\t${first(p, 'enabled') === 'false' ? 'disabled' : 'enabled'}\t${terminalSafe(first(p, 'connectionUrl'))}\t${terminalSafe(first(p, 'usersDn'))}\n`);
    });
  ldap
    .command('show <realm> <provider>')
    .description("show a provider's settings and mappers (never its bind credential)")
    .option('--json', "Keycloak's ComponentRepresentation, with its mappers as subComponents (the bind credential masked)")
    .action(async (realmId: string, ref: string, o: { json?: boolean }) => {
      const p = await withStore((store) => requireUserStorage(store, realmId, ref), { access: 'read' });
      process.stdout.write(o.json ? `${terminalJson({ ...toComponentRepresentation(p), subComponents: p.mappers.map((m) => toMapperRepresentation(p, m)) }, 2)}\n` : describe(p));
    });
  ldap
    .command('test <realm> <provider>')
    .description("connect to the provider's directory and bind as its bind DN (Keycloak's testAuthentication); exits 1 with the reason when it fails")
    .action(async (realmId: string, ref: string) => {
      const { ldapSettings } = await import('../oauth/ldap/federation.js');
      const { testDirectory, LdapUnavailable } = await import('../oauth/ldap/directory.js');
      const { p, credential } = await withStore(async (store) => {
        const p = await requireUserStorage(store, realmId, ref);
        return { p, credential: await bindCredentialOf(store, p) };
      }, { keys: true });
      try {
        await testDirectory(ldapSettings(p), credential, 'testAuthentication');
      } catch (err) {
        if (err instanceof LdapUnavailable) throw new CliError(`LDAP provider ${p.name}: ${err.message}`);
        throw err;
      }
      process.stdout.write(`LDAP provider ${p.name}: connected to ${first(p, 'connectionUrl')}${first(p, 'authType') === 'none' ? '' : ` and bound as ${first(p, 'bindDn')}`}\n`);
    });
  ldap
    .command('mappers <realm> <provider>')
    .description("list a provider's mappers: id, name, type and what it does; tab-separated")
    .action(async (realmId: string, ref: string) => {
      const p = await withStore((store) => requireUserStorage(store, realmId, ref), { access: 'read' });
      for (const m of p.mappers) process.stdout.write(`${m.id}\t${terminalSafe(m.name)}\t${m.providerId}\t${terminalSafe(describeMapper(m))}\n`);
    });
  ldap
    .command('mapper-add <realm> <provider> <name>')
    .description(`add a mapper to a provider, its config as Keycloak names it, e.g. --type group-ldap-mapper --config groups.dn=ou=Groups,dc=example,dc=org --config groups.path=/ldap (see docs/admin.md for each type's keys)`)
    .requiredOption('--type <providerId>', `the mapper type: ${MAPPER_TYPES.join(', ')}`)
    .option('--config <key=value>', 'a config entry (repeatable)', collect, [])
    .action(async (realmId: string, ref: string, name: string, o: { type: string; config: string[] }) => {
      const config = configEntries(o.config, 'groups.dn=ou=Groups,dc=example,dc=org');
      const m = await withStore(async (store) => createMapper(store, cliActor(), realmId, (await requireUserStorage(store, realmId, ref)).id, { name, providerId: o.type, config }));
      process.stdout.write(`added mapper ${terminalSafe(m.name)} (${m.providerId}, id ${m.id}) to LDAP provider ${terminalSafe(ref)}: ${terminalSafe(describeMapper(m))}\n`);
    });
  ldap
    .command('mapper-remove <realm> <provider> <mapper>')
    .description('remove a mapper (by name or id); the groups and roles it made stay, as local ones, with their members')
    .action(async (realmId: string, ref: string, mapperRef: string) => {
      await withStore(async (store) => {
        const p = await requireUserStorage(store, realmId, ref);
        const m = p.mappers.find((x) => x.id === mapperRef || x.name === mapperRef);
        if (!m) throw new CliError(`LDAP provider ${p.name} has no mapper ${mapperRef}`);
        await deleteMapper(store, cliActor(), realmId, m.id);
      });
      process.stdout.write(`removed mapper ${terminalSafe(mapperRef)} from LDAP provider ${terminalSafe(ref)}\n`);
    });
  ldap
    .command('sync-groups <realm> <provider>')
    .description("make the directory's groups here (Keycloak's mapper sync, fedToKeycloak): every group-ldap-mapper and role-ldap-mapper of the provider, or the one --mapper names; with drop.non.existing.groups.during.sync, a mapper's groups gone from the directory are deleted")
    .option('--mapper <name>', 'only this mapper (name or id)')
    .action(async (realmId: string, ref: string, o: { mapper?: string }) => {
      const { syncProviderMapper, MapperSyncRefused } = await import('../oauth/ldap/federation.js');
      const { LdapUnavailable } = await import('../oauth/ldap/directory.js');
      const { systemClock } = await import('../clock.js');
      const lines = await withStore(async (store) => {
        const p = await requireUserStorage(store, realmId, ref);
        const realm = (await store.realms.get(realmId))!;
        const chosen = o.mapper === undefined ? p.mappers.filter((m) => m.providerId === GROUP_MAPPER || m.providerId === ROLE_MAPPER) : p.mappers.filter((m) => m.id === o.mapper || m.name === o.mapper);
        if (chosen.length === 0) throw new CliError(o.mapper === undefined ? `LDAP provider ${p.name} has no group-ldap-mapper or role-ldap-mapper` : `LDAP provider ${p.name} has no mapper ${o.mapper}`);
        const out: string[] = [];
        for (const m of chosen) {
          try {
            const r = await syncProviderMapper({ store, clock: systemClock }, realm, p, m.id, 'fedToKeycloak');
            out.push(`mapper ${terminalSafe(m.name)}: ${terminalSafe(r.status)}\n`);
          } catch (err) {
            if (err instanceof MapperSyncRefused || err instanceof LdapUnavailable) throw new CliError(`mapper ${m.name}: ${err.message}`);
            throw err;
          }
        }
        return out;
      }, { keys: true });
      process.stdout.write(lines.join(''));
    });
  ldap
    .command('delete <realm> <provider>')
    .description('delete a provider; its imported users stay, unlinked and without a password (give them one, or delete them)')
    .option('--yes', 'really delete (required)')
    .action(async (realmId: string, ref: string, o: { yes?: boolean }) => {
      if (!o.yes) throw new CliError(`deleting LDAP provider ${ref} leaves its users without a way to sign in and cannot be undone: add --yes`);
      await withStore(async (store) => deleteUserStorage(store, cliActor(), realmId, (await requireUserStorage(store, realmId, ref)).id));
      process.stdout.write(`deleted LDAP provider ${ref} from realm ${realmId}\n`);
    });
}
