#!/usr/bin/env node
// A command-line client with limited web server access, for Realmgate (or any OAuth 2.0 server with
// the same flows). It never listens on a port: the user signs in with a browser, and the code display
// page ({APP_URL}/authentication_code) shows a code the user pastes here. Or, with --device, it uses
// the device authorization grant (RFC 8628). Tokens are kept in a file only the user can read, and
// `token` prints a valid access token for scripts, refreshing it (with rotation) when needed.
//
// Plain modern JavaScript (Node 20+, ESM, no build step); the only dependency is openid-client v6.
// See README.md next to this file.
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import crypto from 'node:crypto';
import readline from 'node:readline';
import { parseArgs } from 'node:util';
import * as oidc from 'openid-client';

const EXIT_OK = 0;
const EXIT_ERROR = 1;
const EXIT_LOGIN_REQUIRED = 2;
const EXIT_USAGE = 64;
const EXIT_INTERRUPTED = 130;

/** `token` refreshes the access token when it expires within this many seconds. */
const MIN_VALIDITY_SECONDS = 60;
const DEFAULT_SCOPE = 'openid core_data offline_access';
const DEFAULT_TOKEN_FILE = path.join(os.homedir(), '.realmgate-desktop-client', 'tokens.json');
const TOKEN_FILE_VERSION = 1;
/** How long `token` waits for another run that is refreshing the same token file. */
const LOCK_WAIT_MS = 60_000;

const HELP = `Usage: client.mjs [login] [--device] [options]
       client.mjs token [options]

A command-line OAuth 2.0 client for Realmgate that needs no web server of its own.

Commands:
  login          (default) Print an address to open in a browser. After you sign in, allow
                 access and choose an organization, the page shows a code: paste it here.
                 The tokens are stored in the token file.
  login --device Sign in with the device authorization grant instead: open the printed address
                 on any device (a phone works), check the code, sign in; this program waits.
  token          Print a valid access token on standard output, for scripts. It is refreshed
                 first when it expires within ${MIN_VALIDITY_SECONDS} seconds; the new refresh token is stored.

Options (each also read from the environment variable in brackets; a flag wins):
  --issuer URL          the realm's issuer [REALMGATE_ISSUER],
                        e.g. http://localhost:8080/auth/realms/demo
  --client-id ID        the client id [REALMGATE_CLIENT_ID]
  --client-secret S     the client secret of a confidential client [REALMGATE_CLIENT_SECRET].
                        Leave it out for a public client (registered with --public): it uses
                        PKCE alone. Prefer the environment variable: flags show up in "ps".
  --redirect-uri URI    the registered redirect URI [REALMGATE_REDIRECT_URI]
                        (default: {issuer origin}/authentication_code)
  --scope SCOPES        the scopes to ask for [REALMGATE_SCOPE] (default: "${DEFAULT_SCOPE}")
  --token-file PATH     where tokens are kept [REALMGATE_TOKEN_FILE]
                        (default: ~/.realmgate-desktop-client/tokens.json)
  --device              login: use the device authorization grant
  -h, --help            show this help

"token" reads the issuer and client id from the token file when they are not given.

Exit status:
  0    success
  1    error (the message says which: network, server, wrong input, ...)
  2    you need to log in: no stored tokens, or the session ended (refresh token expired,
       revoked, or reused); the stored tokens have been deleted. Run "client.mjs login".
  64   wrong command line
  130  interrupted
`;

/** An error with a one-line message for the user and an exit status. */
class CliError extends Error {
  /** @param {string} message @param {number} [exitCode] */
  constructor(message, exitCode = EXIT_ERROR) {
    super(message);
    this.exitCode = exitCode;
  }
}

// ---------------------------------------------------------------------------------------------
// Settings

/**
 * @typedef {object} Settings
 * @property {'login' | 'token'} command
 * @property {boolean} device
 * @property {string | undefined} issuer
 * @property {string | undefined} clientId
 * @property {string | undefined} clientSecret
 * @property {string | undefined} redirectUri
 * @property {string} scope
 * @property {string} tokenFile
 */

/** @param {string[]} argv @param {NodeJS.ProcessEnv} env @returns {Settings | 'help'} */
function readSettings(argv, env) {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      strict: true,
      options: {
        issuer: { type: 'string' },
        'client-id': { type: 'string' },
        'client-secret': { type: 'string' },
        'redirect-uri': { type: 'string' },
        scope: { type: 'string' },
        'token-file': { type: 'string' },
        device: { type: 'boolean' },
        help: { type: 'boolean', short: 'h' },
      },
    });
  } catch (err) {
    const e = /** @type {NodeJS.ErrnoException} */ (err);
    const unknown = e?.code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION' ? /'([^']+)'/.exec(e.message)?.[1] : undefined;
    throw new CliError(`${unknown ? `unknown option ${unknown}` : (e?.message ?? String(err))} (see --help)`, EXIT_USAGE);
  }
  const { values, positionals } = parsed;
  if (values.help) return 'help';
  if (positionals.length > 1) throw new CliError(`unexpected argument "${positionals[1]}" (see --help)`, EXIT_USAGE);
  const command = positionals[0] ?? 'login';
  if (command !== 'login' && command !== 'token') throw new CliError(`unknown command "${command}": use login or token (see --help)`, EXIT_USAGE);
  if (values.device && command !== 'login') throw new CliError('--device goes with the login command', EXIT_USAGE);
  /** @param {string | undefined} flag @param {string} name */
  const pick = (flag, name) => {
    const v = flag ?? env[name];
    return v === undefined || v === '' ? undefined : v;
  };
  const tokenFile = pick(values['token-file'], 'REALMGATE_TOKEN_FILE');
  return {
    command,
    device: Boolean(values.device),
    issuer: pick(values.issuer, 'REALMGATE_ISSUER'),
    clientId: pick(values['client-id'], 'REALMGATE_CLIENT_ID'),
    clientSecret: pick(values['client-secret'], 'REALMGATE_CLIENT_SECRET'),
    redirectUri: pick(values['redirect-uri'], 'REALMGATE_REDIRECT_URI'),
    scope: pick(values.scope, 'REALMGATE_SCOPE') ?? DEFAULT_SCOPE,
    tokenFile: path.resolve(tokenFile ? expandHome(tokenFile) : DEFAULT_TOKEN_FILE),
  };
}

/** @param {string} p */
function expandHome(p) {
  return p === '~' || p.startsWith('~/') ? path.join(os.homedir(), p.slice(1)) : p;
}

/** @param {string} hostname */
function isLoopback(hostname) {
  const h = hostname.replace(/^\[|\]$/g, '').toLowerCase();
  return h === 'localhost' || h.endsWith('.localhost') || h === '::1' || /^127(\.\d{1,3}){3}$/.test(h);
}

/**
 * The issuer as a URL, without a trailing slash (discovery compares it byte for byte). Plain http is
 * accepted for a server on this machine only: anything else would send the secret and the tokens in clear.
 * @param {string | undefined} issuer
 */
function issuerUrl(issuer) {
  if (!issuer) throw new CliError('the issuer is missing: pass --issuer or set REALMGATE_ISSUER (e.g. http://localhost:8080/auth/realms/demo)', EXIT_USAGE);
  let url;
  try {
    url = new URL(issuer.replace(/\/+$/, ''));
  } catch {
    throw new CliError(`the issuer "${issuer}" is not a URL`, EXIT_USAGE);
  }
  if (url.search || url.hash) throw new CliError('the issuer must not have a query or fragment', EXIT_USAGE);
  if (url.protocol === 'http:' && !isLoopback(url.hostname)) {
    throw new CliError(`refusing the http issuer ${url.href}: use https (plain http is accepted only for a server on this machine)`, EXIT_USAGE);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new CliError(`the issuer must be an https URL, not ${url.protocol}`, EXIT_USAGE);
  return url;
}

/**
 * The relying party's configuration from the server's discovery document. Confidential clients use
 * HTTP Basic (as the server requires); public clients send only their client_id and rely on PKCE.
 * @param {URL} issuer @param {string} clientId @param {string | undefined} clientSecret
 */
async function discover(issuer, clientId, clientSecret) {
  const auth = clientSecret === undefined ? oidc.None() : oidc.ClientSecretBasic(clientSecret);
  /** @type {oidc.DiscoveryRequestOptions} */
  const options = {};
  // openid-client refuses http outright; issuerUrl() has already limited http to loopback hosts.
  if (issuer.protocol === 'http:') options.execute = [oidc.allowInsecureRequests];
  return oidc.discovery(issuer, clientId, undefined, auth, options);
}

// ---------------------------------------------------------------------------------------------
// The token file: 0600 in a 0700 directory, replaced atomically, guarded by a lock file

/**
 * @typedef {object} StoredTokens
 * @property {number} version
 * @property {string} issuer
 * @property {string} client_id
 * @property {'client_secret_basic' | 'none'} client_auth
 * @property {string} access_token
 * @property {number | null} expires_at           seconds since the epoch, null when the server did not say
 * @property {string | undefined} refresh_token
 * @property {number | null} refresh_expires_at   seconds since the epoch (Keycloak's refresh_expires_in)
 * @property {string | undefined} scope
 * @property {string} token_type
 * @property {number} obtained_at
 */

const nowSeconds = () => Math.floor(Date.now() / 1000);

/** @param {string} file @returns {Promise<StoredTokens | undefined>} */
async function readTokens(file) {
  let text;
  try {
    text = await fs.readFile(file, 'utf8');
  } catch (err) {
    if (/** @type {NodeJS.ErrnoException} */ (err).code === 'ENOENT') return undefined;
    throw new CliError(`cannot read the token file ${file}: ${errnoMessage(err)}`);
  }
  const stat = await fs.stat(file);
  if (process.platform !== 'win32' && (stat.mode & 0o077) !== 0) {
    process.stderr.write(`warning: ${file} can be read by other users (mode ${(stat.mode & 0o777).toString(8)}); run: chmod 600 ${file}\n`);
  }
  /** @type {StoredTokens} */
  let data;
  try {
    data = JSON.parse(text);
  } catch {
    throw new CliError(`the token file ${file} is damaged: run "client.mjs login" again`, EXIT_LOGIN_REQUIRED);
  }
  if (data?.version !== TOKEN_FILE_VERSION || typeof data.access_token !== 'string' || typeof data.issuer !== 'string' || typeof data.client_id !== 'string') {
    throw new CliError(`the token file ${file} is not one this program wrote: run "client.mjs login" again`, EXIT_LOGIN_REQUIRED);
  }
  return data;
}

/**
 * Writes the file so that it is never seen half-written and never readable by others: a temporary
 * file created with mode 0600 next to it, flushed, then renamed over it.
 * @param {string} file @param {StoredTokens} data
 */
async function writeTokens(file, data) {
  const dir = path.dirname(file);
  await fs.mkdir(dir, { recursive: true, mode: 0o700 });
  const tmp = path.join(dir, `.${path.basename(file)}.${process.pid}.${crypto.randomBytes(6).toString('hex')}.tmp`);
  const handle = await fs.open(tmp, 'wx', 0o600);
  try {
    await handle.writeFile(`${JSON.stringify(data, null, 2)}\n`);
    await handle.sync();
  } catch (err) {
    await handle.close();
    await fs.rm(tmp, { force: true });
    throw err;
  }
  await handle.close();
  try {
    await fs.rename(tmp, file);
  } catch (err) {
    await fs.rm(tmp, { force: true });
    throw err;
  }
  // Make the rename itself durable (not possible on every platform; best effort).
  try {
    const d = await fs.open(dir, 'r');
    try {
      await d.sync();
    } finally {
      await d.close();
    }
  } catch {
    // ignore
  }
}

/** @param {number} pid */
function processAlive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return /** @type {NodeJS.ErrnoException} */ (err).code === 'EPERM';
  }
}

/**
 * Runs `fn` while holding `<file>.lock`. Refresh tokens rotate: two runs refreshing with the same
 * refresh token at once would look like token theft to the server, which then revokes the whole
 * chain. So only one run at a time refreshes, and the others read what it stored.
 * A lock left by a process that no longer exists is taken over.
 * @template T @param {string} file @param {() => Promise<T>} fn @returns {Promise<T>}
 */
async function withLock(file, fn) {
  const lock = `${file}.lock`;
  await fs.mkdir(path.dirname(file), { recursive: true, mode: 0o700 });
  const started = performance.now();
  for (;;) {
    try {
      const handle = await fs.open(lock, 'wx', 0o600);
      try {
        await handle.writeFile(String(process.pid));
      } finally {
        await handle.close();
      }
      break;
    } catch (err) {
      if (/** @type {NodeJS.ErrnoException} */ (err).code !== 'EEXIST') throw new CliError(`cannot create the lock file ${lock}: ${errnoMessage(err)}`);
    }
    const owner = Number.parseInt(await fs.readFile(lock, 'utf8').catch(() => ''), 10);
    if (Number.isInteger(owner) && owner > 0 && !processAlive(owner)) {
      await fs.rm(lock, { force: true });
      continue;
    }
    if (performance.now() - started > LOCK_WAIT_MS) {
      throw new CliError(`another run holds the lock ${lock}; if none is running, delete that file`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50 + Math.random() * 100));
  }
  try {
    return await fn();
  } finally {
    await fs.rm(lock, { force: true });
  }
}

/**
 * @param {Settings & { issuer: string; clientId: string }} s
 * @param {oidc.TokenEndpointResponse} res
 * @param {number} sentAt    when the request was sent: expiry counts from then, to be safe
 * @param {StoredTokens} [previous]
 * @returns {StoredTokens}
 */
function toStored(s, res, sentAt, previous) {
  const refreshExpiresIn = /** @type {unknown} */ (res.refresh_expires_in);
  return {
    version: TOKEN_FILE_VERSION,
    issuer: s.issuer,
    client_id: s.clientId,
    client_auth: s.clientSecret === undefined ? 'none' : 'client_secret_basic',
    access_token: res.access_token,
    expires_at: typeof res.expires_in === 'number' ? sentAt + res.expires_in : null,
    // A server that does not rotate leaves the refresh token out: keep the one we have.
    refresh_token: res.refresh_token ?? previous?.refresh_token,
    refresh_expires_at:
      typeof refreshExpiresIn === 'number' && refreshExpiresIn > 0 ? sentAt + refreshExpiresIn : res.refresh_token ? null : (previous?.refresh_expires_at ?? null),
    scope: res.scope ?? previous?.scope,
    token_type: res.token_type,
    obtained_at: sentAt,
  };
}

// ---------------------------------------------------------------------------------------------
// login

/**
 * Reads one line from standard input. Resolves undefined when the input ends first.
 * @param {string} prompt @returns {Promise<string | undefined>}
 */
function readLine(prompt) {
  return new Promise((resolve, reject) => {
    const rl = readline.createInterface({ input: process.stdin, output: process.stdout, terminal: Boolean(process.stdin.isTTY) });
    let done = false;
    rl.once('line', (line) => {
      done = true;
      rl.close();
      // Nothing more is read: an open standard input (a pipe) must not keep the process alive.
      /** @type {{ unref?: () => void }} */ (process.stdin).unref?.();
      // A terminal echoed the line and its newline; piped input did not.
      if (!process.stdin.isTTY) process.stdout.write('\n');
      resolve(line);
    });
    // On a terminal readline catches Ctrl-C itself; without this listener it would only pause.
    rl.once('SIGINT', () => {
      done = true;
      rl.close();
      process.stdout.write('\n');
      reject(new CliError('interrupted', EXIT_INTERRUPTED));
    });
    rl.once('close', () => {
      if (done) return;
      if (process.stdin.isTTY) process.stdout.write('\n');
      resolve(undefined);
    });
    rl.setPrompt(prompt);
    rl.prompt();
  });
}

/**
 * The authorization response as the code display page received it. The user may paste the bare code,
 * or the whole address of the code display page (then its state and iss are checked too).
 * @param {string} input @param {string} redirectUri @param {string} expectedState @param {string} issuer
 * @returns {URL}
 */
function callbackFromInput(input, redirectUri, expectedState, issuer) {
  const text = input.trim();
  const callback = new URL(redirectUri);
  callback.search = '';
  callback.hash = '';
  if (/^https?:\/\//i.test(text)) {
    let pasted;
    try {
      pasted = new URL(text);
    } catch {
      throw new CliError('that is not a valid address: paste the code, or the whole address of the code page');
    }
    const p = pasted.searchParams;
    if (p.has('error')) {
      const desc = p.get('error_description');
      throw new CliError(`the sign-in did not complete: ${p.get('error')}${desc ? ` (${desc})` : ''}`);
    }
    if (!p.get('code')) throw new CliError('that address has no code in it: paste the code shown on the page');
    if (p.has('state') && p.get('state') !== expectedState) {
      throw new CliError('that code belongs to another sign-in (its state does not match): open the address printed above');
    }
    for (const name of ['code', 'iss']) {
      const v = p.get(name);
      if (v !== null) callback.searchParams.set(name, v);
    }
  } else {
    if (!/^[A-Za-z0-9._~+/=-]{1,2048}$/.test(text)) throw new CliError('that does not look like an authorization code: copy it again from the page');
    callback.searchParams.set('code', text);
  }
  // A bare code carries neither state nor iss: it came from the sign-in this run started, at this issuer.
  callback.searchParams.set('state', expectedState);
  if (!callback.searchParams.has('iss')) callback.searchParams.set('iss', issuer);
  return callback;
}

/** @param {Settings} s */
async function login(s) {
  const issuer = issuerUrl(s.issuer);
  if (!s.clientId) throw new CliError('the client id is missing: pass --client-id or set REALMGATE_CLIENT_ID', EXIT_USAGE);
  const config = await discover(issuer, s.clientId, s.clientSecret);
  const settings = { ...s, issuer: config.serverMetadata().issuer, clientId: s.clientId };
  const sentAt = nowSeconds();
  const tokens = s.device ? await deviceLogin(config, s) : await codeLogin(config, s, issuer);
  if (!tokens.refresh_token) process.stderr.write('warning: the server issued no refresh token (ask for the offline_access scope): "token" will need a new login when the access token expires\n');
  await withLock(s.tokenFile, () => writeTokens(s.tokenFile, toStored(settings, tokens, sentAt)));
  process.stdout.write(`Logged in: tokens for ${s.clientId} are stored in ${s.tokenFile}${tokens.scope ? ` (scope: ${tokens.scope})` : ''}.\n`);
}

/** @param {oidc.Configuration} config @param {Settings} s @param {URL} issuer */
async function codeLogin(config, s, issuer) {
  const redirectUri = s.redirectUri ?? `${issuer.origin}/authentication_code`;
  const verifier = oidc.randomPKCECodeVerifier();
  const state = oidc.randomState();
  const url = oidc.buildAuthorizationUrl(config, {
    redirect_uri: redirectUri,
    scope: s.scope,
    code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
    state,
  });
  process.stdout.write(
    `Open this address in your browser, sign in and allow access:\n\n  ${url.href}\n\n` +
      'The last page shows an authorization code. Copy it and paste it here, at once: it expires\n' +
      'within a minute and works once. (The whole address of that page works too.)\n\n',
  );
  const line = await readLine('Code: ');
  if (line === undefined || line.trim() === '') throw new CliError('no code was entered');
  const callback = callbackFromInput(line, redirectUri, state, config.serverMetadata().issuer);
  try {
    return await oidc.authorizationCodeGrant(config, callback, { pkceCodeVerifier: verifier, expectedState: state, idTokenExpected: false });
  } catch (err) {
    if (err instanceof oidc.ResponseBodyError && err.error === 'invalid_grant') {
      throw new CliError(
        `the code was not accepted (${err.error_description ?? 'invalid_grant'}): it may have expired or been used already; run "client.mjs login" again`,
      );
    }
    throw err;
  }
}

/** @param {oidc.Configuration} config @param {Settings} s */
async function deviceLogin(config, s) {
  if (!config.serverMetadata().device_authorization_endpoint) throw new CliError('this server does not offer the device authorization grant: log in without --device');
  const d = await oidc.initiateDeviceAuthorization(config, { scope: s.scope });
  const minutes = Math.max(1, Math.round(d.expires_in / 60));
  process.stdout.write(
    `To sign in, open this address on any device:\n\n  ${d.verification_uri}\n\nand enter the code:  ${d.user_code}\n\n` +
      (d.verification_uri_complete ? `Or open this address, which already holds the code:\n\n  ${d.verification_uri_complete}\n\n` : '') +
      `Check that the page shows the same code. Waiting for you to finish (the code expires in ${minutes} minute${minutes === 1 ? '' : 's'})...\n`,
  );
  const controller = new AbortController();
  const onSigint = () => controller.abort(new CliError('interrupted', EXIT_INTERRUPTED));
  process.once('SIGINT', onSigint);
  const expiry = setTimeout(() => controller.abort(new CliError(`the code expired before the sign-in finished: run "client.mjs login --device" again`)), d.expires_in * 1000);
  try {
    return await oidc.pollDeviceAuthorizationGrant(config, d, undefined, { signal: controller.signal });
  } catch (err) {
    if (controller.signal.aborted && controller.signal.reason instanceof CliError) throw controller.signal.reason;
    if (err instanceof oidc.ResponseBodyError) {
      if (err.error === 'access_denied') throw new CliError('access was denied in the browser: nothing was stored');
      if (err.error === 'expired_token') throw new CliError('the code expired before the sign-in finished: run "client.mjs login --device" again');
    }
    throw err;
  } finally {
    clearTimeout(expiry);
    process.removeListener('SIGINT', onSigint);
  }
}

// ---------------------------------------------------------------------------------------------
// token

/** @param {StoredTokens} t */
function fresh(t) {
  return t.expires_at === null || t.expires_at - nowSeconds() > MIN_VALIDITY_SECONDS;
}

/** @param {Settings} s */
async function token(s) {
  const stored = await readTokens(s.tokenFile);
  if (!stored) throw new CliError(`not logged in (no tokens in ${s.tokenFile}): run "client.mjs login"`, EXIT_LOGIN_REQUIRED);
  if (s.issuer !== undefined && issuerUrl(s.issuer).href.replace(/\/$/, '') !== stored.issuer.replace(/\/$/, '')) {
    throw new CliError(`${s.tokenFile} holds tokens from ${stored.issuer}, not ${s.issuer}: log in again or pass another --token-file`);
  }
  if (s.clientId !== undefined && s.clientId !== stored.client_id) {
    throw new CliError(`${s.tokenFile} holds tokens of client ${stored.client_id}, not ${s.clientId}: log in again or pass another --token-file`);
  }
  if (stored.client_auth === 'client_secret_basic' && s.clientSecret === undefined) {
    throw new CliError(`${stored.client_id} is a confidential client: set REALMGATE_CLIENT_SECRET (or pass --client-secret)`, EXIT_USAGE);
  }
  if (stored.client_auth === 'none' && s.clientSecret !== undefined) {
    throw new CliError(`the tokens were issued to ${stored.client_id} as a public client: leave out the client secret, or log in again with it`, EXIT_USAGE);
  }
  const current = fresh(stored) ? stored : await withLock(s.tokenFile, () => refreshLocked(s));
  process.stdout.write(`${current.access_token}\n`);
}

/**
 * Under the lock: read the file again (another run may have refreshed meanwhile), refresh if still
 * needed, and store the rotated refresh token before anything else can use the old one.
 * @param {Settings} s @returns {Promise<StoredTokens>}
 */
async function refreshLocked(s) {
  const stored = await readTokens(s.tokenFile);
  if (!stored) throw new CliError(`not logged in (no tokens in ${s.tokenFile}): run "client.mjs login"`, EXIT_LOGIN_REQUIRED);
  // Another run refreshed while this one waited for the lock.
  if (fresh(stored)) return stored;
  if (!stored.refresh_token) {
    await fs.rm(s.tokenFile, { force: true });
    throw new CliError('the access token expired and there is no refresh token: run "client.mjs login" again', EXIT_LOGIN_REQUIRED);
  }
  const config = await discover(issuerUrl(stored.issuer), stored.client_id, s.clientSecret);
  const sentAt = nowSeconds();
  let res;
  try {
    res = await oidc.refreshTokenGrant(config, stored.refresh_token);
  } catch (err) {
    if (err instanceof oidc.ResponseBodyError && err.error === 'invalid_grant') {
      // The chain ended: expired, revoked by an administrator, or revoked because an old refresh
      // token was used again. The stored tokens are worthless now.
      await fs.rm(s.tokenFile, { force: true });
      throw new CliError(
        `the session has ended (${err.error_description ?? 'invalid_grant'}); the stored tokens were deleted: run "client.mjs login" again`,
        EXIT_LOGIN_REQUIRED,
      );
    }
    throw err;
  }
  const next = toStored({ ...s, issuer: stored.issuer, clientId: stored.client_id }, res, sentAt, stored);
  await writeTokens(s.tokenFile, next);
  return next;
}

// ---------------------------------------------------------------------------------------------
// Errors: one line, never a stack trace

/** @param {unknown} err */
function errnoMessage(err) {
  const e = /** @type {NodeJS.ErrnoException} */ (err);
  return e?.code ? `${e.code}${e.syscall ? ` (${e.syscall})` : ''}` : String(e?.message ?? err);
}

/** @param {unknown} err @returns {string} */
function describe(err) {
  if (err instanceof CliError) return err.message;
  if (err instanceof oidc.ResponseBodyError) {
    return `the server refused the request: ${err.error}${err.error_description ? ` (${err.error_description})` : ''}`;
  }
  if (err instanceof oidc.WWWAuthenticateChallengeError) {
    return err.status === 401
      ? 'the server did not accept the client credentials (invalid_client): check the client id and secret'
      : `the server refused the request with HTTP ${err.status}`;
  }
  if (err instanceof oidc.AuthorizationResponseError) {
    return `the sign-in did not complete: ${err.error}${err.error_description ? ` (${err.error_description})` : ''}`;
  }
  if (err instanceof oidc.ClientError) {
    const cause = /** @type {{ cause?: unknown }} */ (err).cause;
    if (cause instanceof Response) return `${err.message}: HTTP ${cause.status} from ${cause.url}`;
    return err.message;
  }
  if (err instanceof Error && (err.name === 'TimeoutError' || err.name === 'AbortError')) return 'the server did not answer in time';
  if (err instanceof TypeError && err.message === 'fetch failed') {
    const cause = /** @type {{ code?: string; message?: string } | undefined} */ (err.cause);
    return `cannot reach the server: ${cause?.code ?? cause?.message ?? 'network error'}`;
  }
  if (err instanceof Error) return err.message;
  return String(err);
}

async function main() {
  let settings;
  try {
    settings = readSettings(process.argv.slice(2), process.env);
  } catch (err) {
    process.stderr.write(`client.mjs: ${describe(err)}\n`);
    return err instanceof CliError ? err.exitCode : EXIT_USAGE;
  }
  if (settings === 'help') {
    process.stdout.write(HELP);
    return EXIT_OK;
  }
  try {
    if (settings.command === 'login') await login(settings);
    else await token(settings);
    return EXIT_OK;
  } catch (err) {
    process.stderr.write(`client.mjs: ${describe(err)}\n`);
    return err instanceof CliError ? err.exitCode : EXIT_ERROR;
  }
}

process.on('uncaughtException', (err) => {
  process.stderr.write(`client.mjs: ${describe(err)}\n`);
  process.exit(EXIT_ERROR);
});
process.on('unhandledRejection', (err) => {
  process.stderr.write(`client.mjs: ${describe(err)}\n`);
  process.exit(EXIT_ERROR);
});

process.exitCode = await main();
