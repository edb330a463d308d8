#!/usr/bin/env node
import { Command, InvalidArgumentError, Option } from 'commander';
import { ConfigError, loadConfig, type Config } from './config/config.js';
import { openDatabase, migrate, DatabaseUrlError } from './storage/database.js';
import { Store } from './storage/store.js';
import { ConflictError } from './storage/types.js';
import { ValidationError } from './admin/validation.js';
import { checkRealmSettings, createClient, createOrganization, createRealm, createUser, revokeBefore, rotateKeys } from './admin/operations.js';
import { hashPassword } from './crypto/passwords.js';
import type { RealmSettings } from './storage/repos/realms.js';

/** A failure the user can act on: printed as one line, exit status 1. */
class CliError extends Error {}

const program = new Command();
program
  .name('realmgate')
  .description('Realmgate: an OAuth 2.0 / OpenID Connect authorization server.\nSettings come from the environment (PORT, HOST, AUTH_URL, APP_URL, DATABASE_URL, LOG_LEVEL); see docs/configuration.md.')
  .option('--database-url <url>', 'sqlite:<path> or postgres://... (default: $DATABASE_URL or sqlite:./data/realmgate.db)')
  .configureOutput({ outputError: (str, write) => write(str) });

function config(overrides: Partial<Config> = {}): Config {
  const url = program.opts<{ databaseUrl?: string }>().databaseUrl;
  return loadConfig(process.env, { ...(url ? { databaseUrl: url } : {}), ...overrides });
}

/** Opens the database (migrating it) for one administrative command. */
async function withStore<T>(fn: (store: Store) => Promise<T>): Promise<T> {
  const db = await openDatabase(config().databaseUrl, { synchronous: 'FULL' });
  try {
    await migrate(db);
    return await fn(new Store(db));
  } finally {
    await db.close();
  }
}

function intArg(name: string) {
  return (v: string): number => {
    const n = Number(v);
    if (!/^\d+$/.test(v) || !Number.isSafeInteger(n)) throw new InvalidArgumentError(`${name} must be a whole number`);
    return n;
  };
}

function collect(v: string, prev: string[] = []): string[] {
  return [...prev, v];
}

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of process.stdin) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString('utf8').replace(/\r?\n$/, '');
}

async function passwordFrom(opts: { password?: string; passwordStdin?: boolean }): Promise<string> {
  if (opts.password !== undefined && opts.passwordStdin) throw new CliError('use either --password or --password-stdin, not both');
  if (opts.password !== undefined) return opts.password;
  if (opts.passwordStdin) return readStdin();
  throw new CliError('a password is required: --password PW or --password-stdin');
}

program
  .command('start')
  .description('start the server (migrates the database first)')
  .option('--port <port>', 'TCP port (default: $PORT or 8080)', intArg('port'))
  .option('--host <host>', 'interface to bind (default: $HOST or 127.0.0.1)')
  .option('--demo', 'on an empty database, create a demo realm, organization, user and client, and print them')
  .action(async (opts: { port?: number; host?: string; demo?: boolean }) => {
    const { startServer } = await import('./server.js');
    const { setupDemo } = await import('./admin/demo.js');
    const cfg = config({ ...(opts.port !== undefined ? { port: opts.port } : {}), ...(opts.host ? { host: opts.host } : {}) });
    const server = await startServer(cfg, {
      onReady: opts.demo ? (s) => setupDemo(s, (line) => process.stdout.write(line + '\n')) : undefined,
    });
    process.stdout.write(`Realmgate listening on ${server.url} (issuer base ${cfg.authUrl}/auth/realms/<realm>)\n`);
    let closing = false;
    const stop = (): void => {
      if (closing) return;
      closing = true;
      server.close().then(
        () => process.exit(0),
        () => process.exit(1),
      );
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  });

program
  .command('migrate')
  .description('apply pending database migrations and exit')
  .action(async () => {
    await withStore(async () => undefined);
    process.stdout.write('database is up to date\n');
  });

const realm = program.command('realm').description('manage realms');

function realmSettingOptions(cmd: Command): Command {
  return cmd
    .option('--code-lifetime <s>', 'authorization code lifetime in seconds, 30 to 50 (default 45)', intArg('code lifetime'))
    .option('--access-token-lifetime <s>', 'access token lifetime in seconds (default 259200)', intArg('access token lifetime'))
    .option('--refresh-idle-lifetime <s>', 'lifetime of each refresh token in seconds (default 15552000)', intArg('refresh idle lifetime'))
    .option('--refresh-max-lifetime <s>', 'maximum lifetime of a chain of refreshes in seconds (default 63072000)', intArg('refresh max lifetime'))
    .option('--sso-session-lifetime <s>', 'browser session lifetime in seconds (default 36000)', intArg('SSO session lifetime'))
    .option('--audience <aud>', 'aud claim of access tokens (default "account")')
    .option('--max-login-failures <n>', 'failed logins of a username before it is locked (default 5)', intArg('max login failures'))
    .option('--lockout-seconds <s>', 'first lockout; each further one doubles (default 60)', intArg('lockout seconds'))
    .option('--max-lockout-seconds <s>', 'longest lockout (default 900)', intArg('max lockout seconds'))
    .addOption(new Option('--signing-alg <alg>', 'signing algorithm of new keys').choices(['RS256', 'ES256', 'EdDSA']));
}

function settingsFrom(o: Record<string, unknown>): Partial<RealmSettings> {
  const s: Partial<RealmSettings> = {};
  if (o.codeLifetime !== undefined) s.codeLifetime = o.codeLifetime as number;
  if (o.accessTokenLifetime !== undefined) s.accessTokenLifetime = o.accessTokenLifetime as number;
  if (o.refreshIdleLifetime !== undefined) s.refreshIdleLifetime = o.refreshIdleLifetime as number;
  if (o.refreshMaxLifetime !== undefined) s.refreshMaxLifetime = o.refreshMaxLifetime as number;
  if (o.ssoSessionLifetime !== undefined) s.ssoSessionLifetime = o.ssoSessionLifetime as number;
  if (o.audience !== undefined) s.accessTokenAudience = o.audience as string;
  if (o.signingAlg !== undefined) s.signingAlg = o.signingAlg as string;
  if (o.maxLoginFailures !== undefined) s.maxLoginFailures = o.maxLoginFailures as number;
  if (o.lockoutSeconds !== undefined) s.lockoutSeconds = o.lockoutSeconds as number;
  if (o.maxLockoutSeconds !== undefined) s.maxLockoutSeconds = o.maxLockoutSeconds as number;
  return s;
}

realmSettingOptions(realm.command('create <realm>').description('create a realm with the default scopes and a signing key'))
  .option('--display-name <name>', 'name shown on the login pages')
  .action(async (id: string, o: Record<string, unknown>) => {
    await withStore((store) => createRealm(store, { id, displayName: o.displayName as string | undefined, settings: settingsFrom(o) }));
    process.stdout.write(`created realm ${id}\n`);
  });

realmSettingOptions(realm.command('update <realm>').description("change a realm's settings"))
  .option('--display-name <name>', 'name shown on the login pages')
  .action(async (id: string, o: Record<string, unknown>) => {
    const settings = settingsFrom(o);
    checkRealmSettings(settings);
    await withStore(async (store) => {
      if (!(await store.realms.get(id))) throw new CliError(`realm ${id} does not exist`);
      await store.realms.update(id, { ...settings, ...(o.displayName !== undefined ? { displayName: o.displayName as string } : {}) });
    });
    process.stdout.write(`updated realm ${id}\n`);
  });

realm
  .command('list')
  .description('list realms')
  .action(async () => {
    const realms = await withStore((store) => store.realms.list());
    for (const r of realms) process.stdout.write(`${r.id}\t${r.displayName ?? ''}\n`);
  });

realm
  .command('revoke-before <realm>')
  .description("refuse every token issued before a time (the realm's not-before policy); without options, show it")
  .option('--now', 'revoke every token issued until now')
  .option('--at <time>', 'an ISO 8601 time or seconds since the epoch')
  .option('--clear', 'remove the policy')
  .action(async (realmId: string, o: { now?: boolean; at?: string; clear?: boolean }) => {
    const chosen = [o.now, o.at !== undefined, o.clear].filter(Boolean).length;
    if (chosen > 1) throw new CliError('use only one of --now, --at and --clear');
    let at: number | undefined;
    if (o.now) at = Math.floor(Date.now() / 1000);
    if (o.clear) at = 0;
    if (o.at !== undefined) {
      at = /^\d+$/.test(o.at) ? Number(o.at) : Math.floor(Date.parse(o.at) / 1000);
      if (!Number.isFinite(at)) throw new CliError(`--at: ${o.at} is not a time`);
    }
    await withStore(async (store) => {
      if (at === undefined) {
        const r = await store.realms.get(realmId);
        if (!r) throw new CliError(`realm ${realmId} does not exist`);
        process.stdout.write(r.notBefore ? `tokens issued before ${new Date(r.notBefore * 1000).toISOString()} (${r.notBefore}) are refused\n` : 'no not-before policy\n');
        return;
      }
      await revokeBefore(store, { realmId, at });
      process.stdout.write(at ? `tokens of realm ${realmId} issued before ${new Date(at * 1000).toISOString()} are refused (not-before-policy ${at})\n` : `not-before policy of realm ${realmId} cleared\n`);
    });
  });

const keys = program.command('keys').description("manage a realm's signing keys");
keys
  .command('rotate <realm>')
  .description('add a new active signing key; the previous one stays in the JWKS until its tokens have expired')
  .addOption(new Option('--alg <alg>', "algorithm of the new key (default: the realm's)").choices(['RS256', 'ES256', 'EdDSA']))
  .action(async (realmId: string, o: { alg?: string }) => {
    const k = await withStore((store) => rotateKeys(store, { realmId, ...(o.alg ? { alg: o.alg } : {}) }));
    process.stdout.write(`new active key ${k.kid} (${k.alg}) in realm ${realmId}\n`);
  });
keys
  .command('list <realm>')
  .description("list a realm's signing keys")
  .action(async (realmId: string) => {
    const list = await withStore(async (store) => {
      const r = await store.realms.get(realmId);
      if (!r) throw new CliError(`realm ${realmId} does not exist`);
      return { realm: r, keys: await store.keys.list(realmId) };
    });
    const now = Math.floor(Date.now() / 1000);
    for (const k of list.keys) {
      const until = k.retiredAt != null ? k.retiredAt + list.realm.accessTokenLifetime : undefined;
      const state = k.status === 'active' ? 'active' : until !== undefined && until > now ? `retired, published until ${new Date(until * 1000).toISOString()}` : 'retired, unpublished';
      process.stdout.write(`${k.kid}\t${k.alg}\t${new Date(k.createdAt * 1000).toISOString()}\t${state}\n`);
    }
  });

program
  .command('events <realm>')
  .description('list audit events, newest first: logins, consents, codes, refreshes, reuse, revocations')
  .option('--user <username>', "only this user's events")
  .option('--client <client-id>', "only this client's events")
  .option('--since <time>', 'only events at or after this ISO 8601 time or epoch second')
  .option('--limit <n>', 'at most this many events (default 100)', intArg('limit'))
  .option('--json', 'one JSON object per line')
  .action(async (realmId: string, o: { user?: string; client?: string; since?: string; limit?: number; json?: boolean }) => {
    let since: number | undefined;
    if (o.since !== undefined) {
      since = /^\d+$/.test(o.since) ? Number(o.since) : Math.floor(Date.parse(o.since) / 1000);
      if (!Number.isFinite(since)) throw new CliError(`--since: ${o.since} is not a time`);
    }
    const events = await withStore(async (store) => {
      if (!(await store.realms.get(realmId))) throw new CliError(`realm ${realmId} does not exist`);
      const user = o.user !== undefined ? await store.users.findByUsername(realmId, o.user.toLowerCase()) : undefined;
      return store.events.list(realmId, {
        ...(o.user !== undefined ? { username: o.user.toLowerCase(), ...(user ? { userId: user.id } : {}) } : {}),
        ...(o.client !== undefined ? { clientId: o.client } : {}),
        ...(since !== undefined ? { since } : {}),
        limit: Math.min(o.limit ?? 100, 10_000),
      });
    });
    for (const e of events) {
      if (o.json) process.stdout.write(JSON.stringify({ ...e, time: new Date(e.time * 1000).toISOString() }) + '\n');
      else process.stdout.write([new Date(e.time * 1000).toISOString(), e.type, e.outcome, e.clientId ?? '-', e.username ?? e.userId ?? '-', e.ip ?? '-', e.reason ?? ''].join('\t') + '\n');
    }
  });

const org = program.command('org').description('manage organizations');
org
  .command('create <realm> <alias>')
  .description('create an organization')
  .option('--name <name>', 'display name (default: the alias)')
  .action(async (realmId: string, alias: string, o: { name?: string }) => {
    await withStore((store) => createOrganization(store, { realmId, alias, ...(o.name ? { name: o.name } : {}) }));
    process.stdout.write(`created organization ${alias} in realm ${realmId}\n`);
  });
org
  .command('list <realm>')
  .description("list a realm's organizations")
  .action(async (realmId: string) => {
    const orgs = await withStore(async (store) => {
      if (!(await store.realms.get(realmId))) throw new CliError(`realm ${realmId} does not exist`);
      return store.organizations.list(realmId);
    });
    for (const o of orgs) process.stdout.write(`${o.alias}\t${o.name}\n`);
  });

const user = program.command('user').description('manage users');
user
  .command('create <realm> <username>')
  .description('create a user (the password is stored as an argon2id hash)')
  .option('--password <pw>', 'the password (visible in the process list: prefer --password-stdin)')
  .option('--password-stdin', 'read the password from standard input')
  .option('--email <email>', 'email address')
  .option('--org <alias>', 'make the user a member of this organization (repeatable)', collect, [])
  .action(async (realmId: string, username: string, o: { password?: string; passwordStdin?: boolean; email?: string; org: string[] }) => {
    const password = await passwordFrom(o);
    await withStore((store) => createUser(store, { realmId, username, password, ...(o.email ? { email: o.email } : {}), orgAliases: o.org }));
    process.stdout.write(`created user ${username.toLowerCase()} in realm ${realmId}\n`);
  });
user
  .command('set-password <realm> <username>')
  .description("replace a user's password")
  .option('--password <pw>', 'the new password')
  .option('--password-stdin', 'read the new password from standard input')
  .action(async (realmId: string, username: string, o: { password?: string; passwordStdin?: boolean }) => {
    const password = await passwordFrom(o);
    if (password.length < 8) throw new CliError('the password must have at least 8 characters');
    await withStore(async (store) => {
      const u = await store.users.findByUsername(realmId, username.toLowerCase());
      if (!u) throw new CliError(`user ${username} does not exist in realm ${realmId}`);
      await store.users.update(u.id, { passwordHash: await hashPassword(password) });
    });
    process.stdout.write(`password of ${username.toLowerCase()} changed\n`);
  });
user
  .command('list <realm>')
  .description("list a realm's users")
  .action(async (realmId: string) => {
    const users = await withStore((store) => store.users.list(realmId));
    for (const u of users) process.stdout.write(`${u.username}\t${u.email ?? ''}\t${u.enabled ? 'enabled' : 'disabled'}\n`);
  });

const client = program.command('client').description('manage client applications');
client
  .command('create <realm> <client-id>')
  .description('register a client; without --secret a secret is generated and printed once')
  .option('--redirect-uri <uri>', 'an exact redirect URI to whitelist (repeatable, at least one)', collect, [])
  .option('--secret <secret>', 'the client secret (default: a generated 256-bit secret)')
  .option('--scope <scopes>', 'space-separated scopes the client may request (default: all default scopes)')
  .option('--public', 'a public client (no secret; must use PKCE)')
  .option('--name <name>', 'name shown to users on the login and consent pages')
  .addOption(new Option('--auth-method <method>', 'token endpoint authentication (default client_secret_basic)').choices(['client_secret_basic', 'client_secret_post']))
  .option('--post-logout-redirect-uri <uri>', 'where logout may send the user back (repeatable)', collect, [])
  .action(async (realmId: string, clientId: string, o: { redirectUri: string[]; secret?: string; scope?: string; public?: boolean; name?: string; authMethod?: string; postLogoutRedirectUri: string[] }) => {
    const r = await withStore((store) =>
      createClient(store, {
        realmId,
        clientId,
        redirectUris: o.redirectUri,
        ...(o.secret !== undefined ? { secret: o.secret } : {}),
        ...(o.scope !== undefined ? { scopes: o.scope } : {}),
        ...(o.public ? { public: true } : {}),
        ...(o.name ? { name: o.name } : {}),
        ...(o.authMethod ? { authMethod: o.authMethod } : {}),
        postLogoutRedirectUris: o.postLogoutRedirectUri,
      }),
    );
    process.stdout.write(`created client ${clientId} in realm ${realmId}\n`);
    if (r.generated) process.stdout.write(`client secret (shown only now): ${r.secret}\n`);
  });
client
  .command('list <realm>')
  .description("list a realm's clients")
  .action(async (realmId: string) => {
    const clients = await withStore((store) => store.clients.list(realmId));
    for (const c of clients) process.stdout.write(`${c.clientId}\t${c.public ? 'public' : 'confidential'}\t${c.redirectUris.join(' ')}\n`);
  });

async function main(): Promise<void> {
  try {
    await program.parseAsync(process.argv);
  } catch (err) {
    if (err instanceof CliError || err instanceof ValidationError || err instanceof ConflictError || err instanceof ConfigError || err instanceof DatabaseUrlError) {
      process.stderr.write(`realmgate: ${err.message}\n`);
    } else {
      const msg = err instanceof Error ? err.message : String(err);
      process.stderr.write(`realmgate: ${msg.split('\n')[0]}\n`);
    }
    process.exit(1);
  }
}

void main();
