import type { Command } from 'commander';
import { CliError, collect, config, onOff, readStdin, withStore } from './common.js';
import { terminalJson, terminalSafe } from './terminal-text.js';
import {
  createIdentityProvider,
  deleteIdentityProvider,
  discoverProvider,
  listIdentityProviders,
  requireIdentityProvider,
  updateIdentityProvider,
  PROVIDER_TYPES,
  type ProviderFields,
} from '../admin/operations/identity-providers.js';
import { requireOrganization } from '../admin/operations/organizations.js';
import { cliActor } from '../admin/operations/common.js';
import { toIdentityProviderRepresentation } from '../admin/keycloak/representations/identity-provider.js';
import { createProviderMapper, deleteProviderMapper, listProviderMappers, MAPPER_SYNC_MODES, MAPPER_TYPES } from '../admin/operations/identity-provider-mappers.js';
import { toProviderMapperRepresentation } from '../admin/keycloak/representations/identity-provider-mapper.js';
import { brokerRedirectUri } from '../oauth/broker.js';
import { isOAuth2Only, providerName, SOCIAL_PROVIDER_FACTORIES } from '../oauth/social-providers.js';
import { SETTINGS } from '../config/defaults.js';
import type { Store } from '../storage/store.js';
import type { IdentityProvider } from '../storage/types.js';

/** Keycloak's sync modes Realmgate acts on: IMPORT (the user is made once) and FORCE (names and email updated at every sign-in). */
const SYNC_MODES = ['IMPORT', 'FORCE'];

/** What `create` and `update` both take. */
interface ProviderOptions {
  issuer?: string;
  discovery: boolean;
  authorizationUrl?: string;
  tokenUrl?: string;
  userinfoUrl?: string;
  jwksUrl?: string;
  clientId?: string;
  clientSecretStdin?: boolean;
  displayName?: string;
  clientAuthMethod?: string;
  scope?: string;
  organization?: string | false;
  syncMode?: string;
  hostedDomain?: string;
  config: string[];
}

interface CreateOptions extends ProviderOptions {
  type?: string;
  pkce: boolean;
  trustEmail?: boolean;
  hideOnLogin?: boolean;
  linkOnly?: boolean;
  disabled?: boolean;
}

interface UpdateOptions extends ProviderOptions {
  pkce?: boolean;
  trustEmail?: boolean;
  hideOnLogin?: boolean;
  linkOnly?: boolean;
  enabled?: boolean;
  disabled?: boolean;
}

/** The redirect URI the provider must have registered for Realmgate's client, from the AUTH_URL this command sees. */
function redirectUri(realmId: string, alias: string): string {
  const cfg = config();
  if (!process.env[SETTINGS.authUrl.env] && !warned) {
    warned = true;
    process.stderr.write(`realmgate: ${SETTINGS.authUrl.env} is not set: the redirect URI assumes the server is reached at ${cfg.authUrl} (set ${SETTINGS.authUrl.env} as the server has it)\n`);
  }
  return brokerRedirectUri({ config: cfg }, realmId, alias);
}
let warned = false;

/** The config entries `show` has a line of its own for (useJwksUrl goes with the JWKS URL). */
const SHOWN_KEYS = new Set(['issuer', 'authorizationUrl', 'tokenUrl', 'userInfoUrl', 'jwksUrl', 'logoutUrl', 'validateSignature', 'useJwksUrl', 'clientId', 'clientAuthMethod', 'defaultScope', 'pkceEnabled', 'pkceMethod', 'syncMode']);

/** One line per setting, as `identity-provider show`, `create` and `update` print them; never the secret. */
function describeProvider(p: IdentityProvider, organization: string | null): string {
  const c = p.config;
  const on = (v: boolean): string => (v ? 'yes' : 'no');
  const lines: Array<[string, string]> = [
    ['alias', p.alias],
    ['type', p.providerId],
    ['display name', p.displayName ?? ''],
    ['state', p.enabled ? 'enabled' : 'disabled'],
    ['redirect URI', redirectUri(p.realmId, p.alias)],
    ['issuer', c.issuer ?? ''],
    ['authorization URL', c.authorizationUrl ?? ''],
    ['token URL', c.tokenUrl ?? ''],
    ['userinfo URL', c.userInfoUrl ?? ''],
    ['JWKS URL', c.jwksUrl ?? ''],
    ['logout URL', c.logoutUrl ?? ''],
    ['ID token signature', isOAuth2Only(p.providerId) ? `none (${providerName({ alias: p.alias, displayName: null, providerId: p.providerId })} has no ID tokens: the account is its user API's)` : c.validateSignature === 'true' ? 'checked (JWKS URL)' : 'not checked (the token comes from the token endpoint over TLS)'],
    ['client ID', c.clientId ?? ''],
    ['client secret', p.sealedClientSecret ? 'set (not shown)' : 'none'],
    ['client auth', c.clientAuthMethod || 'client_secret_post'],
    ['scope', c.defaultScope || 'openid'],
    ['PKCE', c.pkceEnabled === 'true' ? (c.pkceMethod ?? 'S256') : 'off'],
    ['trust email', on(p.trustEmail)],
    ['login page', p.hideOnLogin ? 'hidden (kc_idp_hint only)' : 'shown'],
    ['link only', on(p.linkOnly)],
    ...(p.providerId === 'google' ? [['hosted domains', c.hostedDomain || 'any account'] as [string, string]] : []),
    ...(p.providerId === 'microsoft' ? [['tenant', c.tenantId || 'common (any Microsoft account)'] as [string, string]] : []),
    ['organization', organization ?? ''],
    ['sync mode', c.syncMode || 'IMPORT'],
    ['other config', Object.entries(c).filter(([k]) => !SHOWN_KEYS.has(k) && !(k === 'hostedDomain' && p.providerId === 'google') && !(k === 'tenantId' && p.providerId === 'microsoft')).map(([k, v]) => `${k}=${v}`).join(' ')],
  ];
  return lines.map(([k, v]) => (v === '' ? `${k}:\n` : `${k}:${' '.repeat(Math.max(1, 20 - k.length))}${terminalSafe(v)}\n`)).join('');
}

async function organizationAlias(store: Store, p: IdentityProvider): Promise<string | null> {
  if (p.organizationId === null) return null;
  return (await store.organizationAdmin.get(p.organizationId))?.alias ?? p.organizationId;
}

/** The provider's endpoints: discovered from --issuer (OpenID Connect Discovery), then the ones given one by one. */
async function endpointConfig(o: ProviderOptions): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  if (o.issuer !== undefined) Object.assign(out, o.discovery ? await discoverProvider(o.issuer) : { issuer: o.issuer });
  const given: Array<[string, string | undefined]> = [
    ['authorizationUrl', o.authorizationUrl],
    ['tokenUrl', o.tokenUrl],
    ['userInfoUrl', o.userinfoUrl],
    ['jwksUrl', o.jwksUrl],
  ];
  for (const [key, value] of given) if (value !== undefined) out[key] = value;
  // The ID token's signature is checked against the provider's keys when there are any to check it with.
  if (o.jwksUrl !== undefined) Object.assign(out, o.jwksUrl ? { validateSignature: 'true', useJwksUrl: 'true' } : { validateSignature: 'false' });
  return out;
}

/** The config entries the options set (besides the endpoints and the secret); checked before the secret is read. */
function optionConfig(o: ProviderOptions & { pkce?: boolean }): Record<string, string> {
  if (o.issuer === undefined && !o.discovery) throw new CliError('--no-discovery goes with --issuer (the issuer the ID tokens must name)');
  if (o.syncMode !== undefined && !SYNC_MODES.includes(o.syncMode)) throw new CliError(`--sync-mode takes ${SYNC_MODES.join(' or ')}, not ${JSON.stringify(o.syncMode)}`);
  const out: Record<string, string> = {
    ...(o.clientId !== undefined ? { clientId: o.clientId } : {}),
    ...(o.clientAuthMethod !== undefined ? { clientAuthMethod: o.clientAuthMethod } : {}),
    ...(o.scope !== undefined ? { defaultScope: o.scope } : {}),
    ...(o.pkce !== undefined ? { pkceEnabled: String(o.pkce), ...(o.pkce ? { pkceMethod: 'S256' } : {}) } : {}),
    ...(o.syncMode !== undefined ? { syncMode: o.syncMode } : {}),
    ...(o.hostedDomain !== undefined ? { hostedDomain: o.hostedDomain } : {}),
  };
  for (const kv of o.config) {
    const eq = kv.indexOf('=');
    if (eq <= 0) throw new CliError(`--config takes key=value, e.g. --config loginHint=true (got ${JSON.stringify(kv)})`);
    const key = kv.slice(0, eq);
    if (key === 'clientSecret') throw new CliError('the client secret is read with --client-secret-stdin, never from the command line');
    out[key] = kv.slice(eq + 1);
  }
  return out;
}

/** The secret from standard input (never an argument: the process list and the shell history would show it). */
async function secretFrom(o: ProviderOptions): Promise<Record<string, string>> {
  if (!o.clientSecretStdin) return {};
  const secret = await readStdin();
  if (secret === '') throw new CliError('--client-secret-stdin read an empty secret: pipe the client secret the provider gave into the command');
  return { clientSecret: secret };
}

async function organizationId(store: Store, realmId: string, o: ProviderOptions): Promise<{ organizationId?: string | null }> {
  if (o.organization === undefined) return {};
  if (o.organization === false) return { organizationId: null };
  return { organizationId: (await requireOrganization(store, realmId, o.organization)).id };
}

/** The options `create` and `update` share. */
function providerOptions(cmd: Command, update: boolean): Command {
  return cmd
    .option('--issuer <url>', `the provider's issuer: its endpoints are read from {issuer}/.well-known/openid-configuration (OpenID Connect Discovery), and its ID tokens must name it${update ? ' (read again: the endpoints found replace the stored ones)' : ''}`)
    .option('--no-discovery', 'with --issuer: do not fetch the discovery document, only check that ID tokens name this issuer (give the endpoints one by one)')
    .option('--authorization-url <url>', "the provider's authorization endpoint (https; http only on a loopback host)")
    .option('--token-url <url>', "the provider's token endpoint")
    .option('--userinfo-url <url>', `the provider's userinfo endpoint${update ? " ('' removes it)" : ' (optional)'}`)
    .option('--jwks-url <url>', `the provider's keys: ID token signatures are checked with them${update ? " ('' removes it, and the check)" : ' (optional; without it the ID token is trusted as it comes from the token endpoint over TLS)'}`)
    .option('--client-id <id>', "Realmgate's client id at the provider")
    .option('--client-secret-stdin', update ? 'read a new client secret from standard input (needed again when the token endpoint moves to another host: the stored one goes only to its own)' : "read Realmgate's client secret at the provider from standard input (required)")
    .option('--display-name <name>', `the name on the login page's button${update ? " ('' removes it)" : ' (default: the alias)'}`)
    .option('--client-auth-method <method>', 'how Realmgate authenticates to the token endpoint: client_secret_post (default) or client_secret_basic')
    .option('--scope <scopes>', `space-separated scopes asked for (openid is always asked for, but of GitHub, Microsoft, Facebook and Bitbucket${update ? '' : '; default "openid email profile", a social type\'s own'})`)
    .option('--organization <org>', "the organization (alias or id) the provider belongs to: its new users become members, and the organization's login may send its members there")
    .option('--hosted-domain <domains>', `a google provider: only accounts of these Google Workspace domains sign in (comma-separated; "*" any account${update ? "; '' any account" : ''}): sent as hd, and the ID token's hd claim must be one of them`)
    .option('--sync-mode <mode>', `IMPORT (the user's names and email are taken at the first sign-in only${update ? '' : ', the default'}) or FORCE (updated at every sign-in)`)
    .option('--config <key=value>', "a Keycloak config entry as is (repeatable; e.g. loginHint=true; overrides the options above)", collect, []);
}

export function registerIdentityProvider(program: Command): void {
  const idp = program
    .command('identity-provider')
    .description("manage identity providers: users sign in through another OpenID Connect provider (Keycloak's identity brokering); a user's links: user federated-identity");
  providerOptions(idp.command('create <realm> <alias>'), false)
    .description(
      "add an identity provider: OpenID Connect, or Keycloak's Google, GitHub, GitLab, Microsoft, Facebook, LinkedIn or Bitbucket (the alias is part of its redirect URI, which is printed: register it at the provider). Give --issuer (discovery) or --authorization-url and --token-url, or --type google, github, gitlab, microsoft, facebook, linkedin-openid-connect or bitbucket (their endpoints); --client-id and --client-secret-stdin. PKCE (S256) is on unless --no-pkce",
    )
    .option(
      '--type <type>',
      `the provider type (Keycloak's providerId): ${PROVIDER_TYPES.join(', ')}; the social ones need no endpoints (default oidc; a GitHub Enterprise Server: --config baseUrl=URL --config apiUrl=URL; a Microsoft tenant: --config tenantId=ID, else any Microsoft account; a self-managed GitLab: its --issuer)`,
    )
    .option('--no-pkce', 'do not send a PKCE challenge (only for a provider that refuses one)')
    .option('--trust-email', "the provider's email addresses count as verified (the email_verified claim of the new user; never Microsoft's, which nobody checks)")
    .option('--hide-on-login', 'no button on the login page: only a client that asks for it (kc_idp_hint=<alias>) sends users there')
    .option('--link-only', 'no new user from the provider: only users linked to it already sign in through it (user federated-identity link)')
    .option('--disabled', 'add it disabled (no button, kc_idp_hint refused)')
    .action(async (realmId: string, alias: string, o: CreateOptions) => {
      const type = o.type ?? 'oidc';
      if (!PROVIDER_TYPES.includes(type)) throw new CliError(`--type takes ${PROVIDER_TYPES.join(', ')}, not ${JSON.stringify(type)}`);
      const social = SOCIAL_PROVIDER_FACTORIES.some((f) => f.id === type);
      if (!social && o.issuer === undefined && (o.authorizationUrl === undefined || o.tokenUrl === undefined)) {
        throw new CliError(`give the provider's --issuer (its endpoints are discovered) or its --authorization-url and --token-url (or --type ${SOCIAL_PROVIDER_FACTORIES.map((f) => f.id).join(', ')})`);
      }
      if (type !== 'google' && o.hostedDomain !== undefined) throw new CliError('--hosted-domain goes with --type google');
      if (o.clientId === undefined) throw new CliError("--client-id is required: Realmgate's client id at the provider");
      if (!o.clientSecretStdin) throw new CliError("--client-secret-stdin is required: pipe Realmgate's client secret at the provider into the command");
      // A social provider's scope is its type's own unless given (src/oauth/social-providers.ts).
      const options = optionConfig({ ...o, ...(o.scope === undefined && !social ? { scope: 'openid email profile' } : {}) });
      const secret = await secretFrom(o);
      const endpoints = await endpointConfig(o);
      const out = await withStore(async (store) => {
        const fields: ProviderFields = {
          alias,
          providerId: type,
          ...(o.displayName ? { displayName: o.displayName } : {}),
          enabled: !o.disabled,
          trustEmail: Boolean(o.trustEmail),
          hideOnLogin: Boolean(o.hideOnLogin),
          linkOnly: Boolean(o.linkOnly),
          ...(await organizationId(store, realmId, o)),
          config: { ...endpoints, ...options, ...secret },
        };
        const p = await createIdentityProvider(store, cliActor(), realmId, fields);
        return describeProvider(p, await organizationAlias(store, p));
        // The secret is sealed under the deployment's key-encryption secret, as private keys are.
      }, { keys: true });
      process.stdout.write(`created identity provider ${alias} in realm ${realmId}; register its redirect URI at the provider\n${out}`);
    });
  providerOptions(idp.command('update <realm> <alias>'), true)
    .description("change a provider; what is not given stays as it is (the secret too); prints the result. The alias cannot change (it is in the redirect URI)")
    .option('--pkce <on|off>', 'send a PKCE challenge (S256)', onOff('--pkce'))
    .option('--trust-email <on|off>', "the provider's email addresses count as verified (never Microsoft's)", onOff('--trust-email'))
    .option('--hide-on-login <on|off>', 'no button on the login page (kc_idp_hint only)', onOff('--hide-on-login'))
    .option('--link-only <on|off>', 'only users linked to it already sign in through it', onOff('--link-only'))
    .option('--no-organization', 'the provider belongs to no organization')
    .option('--enabled', 'enable the provider')
    .option('--disabled', 'disable the provider (no button, kc_idp_hint refused; linked users sign in otherwise)')
    .action(async (realmId: string, alias: string, o: UpdateOptions) => {
      if (o.enabled && o.disabled) throw new CliError('use either --enabled or --disabled, not both');
      const options = optionConfig(o);
      const secret = await secretFrom(o);
      const endpoints = await endpointConfig(o);
      const out = await withStore(async (store) => {
        const fields: ProviderFields = {
          ...(o.displayName !== undefined ? { displayName: o.displayName === '' ? null : o.displayName } : {}),
          ...(o.enabled ? { enabled: true } : o.disabled ? { enabled: false } : {}),
          ...(o.trustEmail !== undefined ? { trustEmail: o.trustEmail } : {}),
          ...(o.hideOnLogin !== undefined ? { hideOnLogin: o.hideOnLogin } : {}),
          ...(o.linkOnly !== undefined ? { linkOnly: o.linkOnly } : {}),
          ...(await organizationId(store, realmId, o)),
          config: { ...endpoints, ...options, ...secret },
        };
        const p = await updateIdentityProvider(store, cliActor(), realmId, alias, fields);
        return describeProvider(p, await organizationAlias(store, p));
      }, { keys: o.clientSecretStdin === true });
      process.stdout.write(`updated identity provider ${alias} in realm ${realmId}\n${out}`);
    });
  idp
    .command('list <realm>')
    .description("list a realm's identity providers: alias, display name, state (enabled or disabled, then ,hidden and ,link-only), issuer (or authorization URL), redirect URI; tab-separated")
    .option('--json', "Keycloak's IdentityProviderRepresentation list (the client secret masked)")
    .action(async (realmId: string, o: { json?: boolean }) => {
      const list = await withStore((store) => listIdentityProviders(store, realmId), { access: 'read' });
      if (o.json) {
        process.stdout.write(`${terminalJson(list.map((p) => toIdentityProviderRepresentation(p)), 2)}\n`);
        return;
      }
      for (const p of list) {
        const state = [p.enabled ? 'enabled' : 'disabled', ...(p.hideOnLogin ? ['hidden'] : []), ...(p.linkOnly ? ['link-only'] : [])].join(',');
        const upstream = p.config.issuer || p.config.authorizationUrl || '';
        process.stdout.write(`${p.alias}\t${terminalSafe(p.displayName ?? '')}\t${state}\t${terminalSafe(upstream)}\t${redirectUri(realmId, p.alias)}\n`);
      }
    });
  idp
    .command('show <realm> <alias>')
    .description("show a provider's settings and its redirect URI (never its client secret)")
    .option('--json', "Keycloak's IdentityProviderRepresentation (the client secret masked)")
    .action(async (realmId: string, alias: string, o: { json?: boolean }) => {
      const out = await withStore(async (store) => {
        const p = await requireIdentityProvider(store, realmId, alias);
        return o.json ? `${terminalJson(toIdentityProviderRepresentation(p), 2)}\n` : describeProvider(p, await organizationAlias(store, p));
      }, { access: 'read' });
      process.stdout.write(out);
    });
  for (const [name, enabled] of [
    ['enable', true],
    ['disable', false],
  ] as const) {
    idp
      .command(`${name} <realm> <alias>`)
      .description(enabled ? 'enable a disabled provider' : 'disable a provider: no button on the login page, kc_idp_hint refused; its users keep their links')
      .action(async (realmId: string, alias: string) => {
        await withStore((store) => updateIdentityProvider(store, cliActor(), realmId, alias, { enabled }));
        process.stdout.write(`identity provider ${alias} in realm ${realmId} ${enabled ? 'enabled' : 'disabled'}\n`);
      });
  }
  idp
    .command('delete <realm> <alias>')
    .description("delete a provider, its mappers and every user's link to it (the users stay; those without a password can no longer sign in)")
    .option('--yes', 'really delete (required)')
    .action(async (realmId: string, alias: string, o: { yes?: boolean }) => {
      if (!o.yes) throw new CliError(`deleting identity provider ${alias} removes every user's link to it and cannot be undone: add --yes`);
      await withStore((store) => deleteIdentityProvider(store, cliActor(), realmId, alias));
      process.stdout.write(`deleted identity provider ${alias} from realm ${realmId}\n`);
    });
  registerMappers(idp);
}

/** `identity-provider mapper add|list|remove`: Keycloak's identity provider mappers (docs/identity-brokering.md#mappers). */
function registerMappers(idp: Command): void {
  const mapper = idp.command('mapper').description("a provider's mappers (Keycloak's identity provider mappers): roles, attributes and groups set on users at sign-ins through it");
  mapper
    .command('add <realm> <alias> <name>')
    .description(`add a mapper; --type is one of ${MAPPER_TYPES.map((t) => t.id).join(', ')}; its settings as --config (role=NAME or clientId.roleName, claim=PATH, claim.value=V, user.attribute=NAME, attribute=NAME, attribute.value=V, group=/PATH)`)
    .requiredOption('--type <type>', "the mapper type (Keycloak's identityProviderMapper)")
    .option('--sync-mode <mode>', `${MAPPER_SYNC_MODES.join(', ')}: IMPORT applies when the provider makes the user, FORCE at every sign-in, INHERIT the provider's sync mode (default LEGACY, as Keycloak)`)
    .option('--config <key=value>', 'a config entry (repeatable)', collect, [])
    .action(async (realmId: string, alias: string, name: string, o: { type: string; syncMode?: string; config: string[] }) => {
      const config: Record<string, string> = {};
      for (const kv of o.config) {
        const eq = kv.indexOf('=');
        if (eq <= 0) throw new CliError(`--config takes key=value, e.g. --config role=staff (got ${JSON.stringify(kv)})`);
        config[kv.slice(0, eq)] = kv.slice(eq + 1);
      }
      if (o.syncMode !== undefined) config.syncMode = o.syncMode;
      const m = await withStore((store) => createProviderMapper(store, cliActor(), realmId, alias, { name, identityProviderMapper: o.type, config }));
      process.stdout.write(`added mapper ${terminalSafe(m.name)} (${m.type}, id ${m.id}) to identity provider ${alias} in realm ${realmId}\n`);
    });
  mapper
    .command('list <realm> <alias>')
    .description("list a provider's mappers: name, type, sync mode, config (key=value); tab-separated")
    .option('--json', "Keycloak's IdentityProviderMapperRepresentation list")
    .action(async (realmId: string, alias: string, o: { json?: boolean }) => {
      const list = await withStore((store) => listProviderMappers(store, realmId, alias), { access: 'read' });
      if (o.json) {
        process.stdout.write(`${terminalJson(list.map(toProviderMapperRepresentation), 2)}\n`);
        return;
      }
      for (const m of list) {
        const { syncMode, ...rest } = m.config;
        process.stdout.write(`${terminalSafe(m.name)}\t${m.type}\t${syncMode ?? 'LEGACY'}\t${terminalSafe(Object.entries(rest).map(([k, v]) => `${k}=${v}`).join(' '))}\n`);
      }
    });
  mapper
    .command('remove <realm> <alias> <name-or-id>')
    .description('remove a mapper (what it set on users stays)')
    .action(async (realmId: string, alias: string, which: string) => {
      const removed = await withStore(async (store) => {
        const m = (await listProviderMappers(store, realmId, alias)).find((x) => x.id === which || x.name === which);
        if (!m) throw new CliError(`identity provider ${alias} has no mapper ${JSON.stringify(which)}`);
        await deleteProviderMapper(store, cliActor(), realmId, alias, m.id);
        return m.name;
      });
      process.stdout.write(`removed mapper ${terminalSafe(removed)} from identity provider ${alias} in realm ${realmId}\n`);
    });
}
