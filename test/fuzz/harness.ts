/**
 * Shared machinery of the property-based fuzz suite (test/fuzz/*.test.ts).
 *
 * Every file starts a test server, obtains GENUINE tokens for the user alice (before any fuzzing), then
 * prepares DECOY credentials for the user deep that the fuzz may use, mutate, replay and revoke at will.
 * Every response to every fuzz request goes through `violations`, which lists the properties that must
 * hold whatever the request and that the response breaks:
 *
 *   1. never a 5xx;
 *   2. never a redirect (3xx Location) nor an HTML link to a URI that is not registered for some client of
 *      the realm (or the server's own /auth/... pages and the code display page); the authorization
 *      endpoint, moreover, only redirects to the redirect_uri of the request, when it is registered for
 *      the client_id of the request (an independent re-implementation of the rule is the oracle);
 *   3. every error from the token, device authorization, introspection, revocation and userinfo endpoints
 *      is a well-formed JSON error of RFC 6749 5.2 (or RFC 8628 3.5, RFC 7009 2.2.1, RFC 6750 3.1), with
 *      an error_description in %x20-21 / %x23-5B / %x5D-7E;
 *   4. HTML pages escape what they echo: no raw <script (nor other markup injected by the fuzz);
 *   5. the token endpoint's answers carry Cache-Control: no-store (README, RFC 6749 5.1).
 *
 * The test files add properties of their own (no forged, random or mutated credential is ever accepted).
 * A property that fails is shrunk by fast-check to a minimal counterexample, printed with the request
 * and response that broke it; a violation that is a known server bug (KNOWN_BUGS) is labelled with its id.
 *
 * At the end, `assertGenuineTokensSurvive` checks that each genuine token still works. The fuzz never
 * sees the genuine tokens (they are not in `FuzzServer`, only returned to the test file for the final
 * check): were they mutated or replayed, reuse detection would rightly revoke them.
 *
 * Reproduction: FUZZ_SEED=<n> replays a run (the seed is printed by every test), FUZZ_SCALE=<x>
 * multiplies the number of runs. FUZZ_TOLERATE_KNOWN=1 lets a run continue past the known server bugs
 * listed in KNOWN_BUGS (they are then counted and printed instead of failing), to look for further bugs;
 * without it, a known bug fails the property like any other violation. FUZZ_PATH=<path printed by
 * fast-check> (with the same FUZZ_SEED, and --test-name-pattern selecting the property) replays one
 * counterexample directly. FUZZ_DEBUG=1 adds the error_description to the outcome summary printed
 * after each property.
 */
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import type { TestContext } from 'node:test';
import fc from 'fast-check';
// The very parser Fastify (find-my-way) and @fastify/formbody use, so that the redirect oracle reads the
// request exactly as the server does, garbage percent-encoding included.
import { parse as parseQuery } from 'fast-querystring';
import { SignJWT, generateKeyPair, decodeProtectedHeader } from 'jose';
import type { HTTPMethods, LightMyRequestResponse } from 'fastify';
import { startTestServer, basic, realmPath, REALM, type TestServer } from '../helpers/server.js';
import { CookieJar, inject, parseForm, pageKind, runAuthorization, tokenRequest } from '../helpers/flow.js';
import { createClient, createOrganization, createRealm, createUser, updateClient, updateRealm } from '../../src/admin/operations.js';
import { bootstrapAdmin } from '../../src/admin/operations/bootstrap.js';
import { DECOY_VERIFIER, FUZZ_PASSWORD, OOB } from './constants.js';
import { mutateToken, type TokenMutation, type TokenRef } from './arbitraries.js';

// ---------------------------------------------------------------------------------------------------
// Seeds and sizes

const DEFAULT_SEED = 424242;

function parseSeed(v: string | undefined): number | undefined {
  if (v === undefined || v.trim() === '') return undefined;
  const n = Number(v);
  if (!Number.isInteger(n)) throw new Error(`FUZZ_SEED must be an integer, got ${JSON.stringify(v)}`);
  return n;
}

/** The base seed of this run: FUZZ_SEED, or a fixed default so that every run is the same. */
export const SEED: number = parseSeed(process.env.FUZZ_SEED) ?? DEFAULT_SEED;
const SCALE = process.env.FUZZ_SCALE ? Number(process.env.FUZZ_SCALE) : 1;
const TOLERATE_KNOWN = process.env.FUZZ_TOLERATE_KNOWN === '1';
const DEBUG = process.env.FUZZ_DEBUG === '1';
/** fast-check's counterexample path, to replay one failure at once (select the property with --test-name-pattern). */
const PATH = process.env.FUZZ_PATH || undefined;

/** The number of runs of a property, scaled by FUZZ_SCALE. */
export function runs(n: number): number {
  return Math.max(1, Math.round(n * SCALE));
}

/** Each property has its own seed, derived from the base seed and its name, so that each replays alone. */
export function propertySeed(name: string): number {
  const h = crypto.createHash('sha256').update(`${SEED}:${name}`).digest();
  return h.readInt32BE(0);
}

// ---------------------------------------------------------------------------------------------------
// Addresses: fuzz traffic comes from 10.66.0.0/16, the setup and the final checks from 127.0.0.1, so
// that the per-address brute-force protections the fuzz triggers never block the final checks.

export const FINAL_ADDRESS = '127.0.0.1';
export const fuzzAddress = fc.integer({ min: 0, max: 65535 }).map((n) => `10.66.${n >> 8}.${n & 255}`);

// ---------------------------------------------------------------------------------------------------
// The server, its clients, users, genuine tokens and decoys

const DECOY_CHALLENGE = crypto.createHash('sha256').update(DECOY_VERIFIER).digest('base64url');

export interface ClientInfo {
  id: string;
  /** For confidential clients. */
  secret?: string;
  public: boolean;
  authMethod: 'client_secret_basic' | 'client_secret_post' | 'none';
  redirectUris: string[];
  postLogoutRedirectUris: string[];
}

export interface DecoySet {
  access: string;
  refresh: string;
  id?: string;
}

export interface FuzzServer {
  ts: TestServer;
  appUrl: string;
  clients: Map<string, ClientInfo>;
  /** Pushed authorization requests the fuzz made (RFC 9126): request_uri -> the client and redirect_uri pushed. */
  pushed: Map<string, { clientId: string; redirectUri: string }>;
  /**
   * A browser (a copy of its cookies) with a live session of a fuzz user: solo (one organization),
   * multi (two), loner (none). A run that may end the session (a login, a logout, signing out on the
   * account page) calls `sessionSpent`, and the next call signs in again.
   */
  session(user: PoolUser): Promise<CookieJar>;
  sessionSpent(user: PoolUser): void;
  /** Token sets of the decoy user `deep`, per client, at the start of the fuzz; the fuzz may burn them. */
  decoys: Map<string, DecoySet>;
  /** Valid-looking but wrong access tokens (forged signatures, foreign keys, other realm, expired...). */
  forged: Record<string, string>;
  /** Pending device flows started at setup (user codes for the /device page, device codes for polling). */
  devices: Array<{ deviceCode: string; userCode: string; clientId: string }>;
  /** Mints a fresh authorization code for a client through the decoy user's session. */
  mintCode(clientId: string): Promise<string | undefined>;
  /** Replaces every decoy token set by a fresh one (the fuzz revokes and burns them as it goes). */
  renewDecoys(): Promise<void>;
  /** The last code minted per client (likely used up by now). */
  lastCodes: Map<string, string>;
  stats: Stats;
}

export type PoolUser = 'solo' | 'multi' | 'loner';
export const POOL_USERS: readonly PoolUser[] = ['solo', 'multi', 'loner'];

export interface GenuineToken {
  label: string;
  clientId: string;
  access: string;
  refresh: string;
  scope: string;
}

interface Stats {
  requests: number;
  statuses: Map<number, number>;
  knownBugs: Map<string, number>;
  /** Outcomes per endpoint, for the coverage summary printed after each property. */
  outcomes: Map<string, number>;
}

const CLIENT_FIXTURES: Array<Omit<ClientInfo, 'secret'> & { name: string }> = [
  // The test server's own two clients are described here too (createClient is not called for them).
  { id: 'web-app', name: 'Web App', public: false, authMethod: 'client_secret_basic', redirectUris: ['https://app.example.com/callback', 'http://127.0.0.1:9999/cb'], postLogoutRedirectUris: [] },
  { id: 'native-app', name: 'native-app', public: true, authMethod: 'none', redirectUris: ['http://127.0.0.1/callback'], postLogoutRedirectUris: [] },
  // A redirect URI with a query of its own, a private-use scheme, and a post-logout redirect URI.
  { id: 'rp', name: 'Relying <Party>', public: false, authMethod: 'client_secret_basic', redirectUris: ['https://rp.example/cb?tenant=1', 'com.example.app:/oauth2redirect'], postLogoutRedirectUris: ['https://rp.example/after-logout'] },
  // Keycloak's out-of-band alias: the code is shown on {APP_URL}/authentication_code.
  { id: 'oob', name: 'OOB Tool', public: false, authMethod: 'client_secret_basic', redirectUris: [OOB], postLogoutRedirectUris: [] },
  { id: 'post-app', name: 'Post App', public: false, authMethod: 'client_secret_post', redirectUris: ['https://post.example/cb'], postLogoutRedirectUris: [] },
];

export function basicFor(c: ClientInfo): string {
  return basic(c.id, c.secret ?? '');
}

/** How a client authenticates as registered: Basic, client_secret_post, or client_id alone (public). */
export function clientAuth(c: ClientInfo): { headers: Record<string, string>; form: Record<string, string> } {
  if (c.public) return { headers: {}, form: { client_id: c.id } };
  if (c.authMethod === 'client_secret_post') return { headers: {}, form: { client_id: c.id, client_secret: c.secret! } };
  return { headers: { authorization: basicFor(c) }, form: {} };
}

function authorizeExtra(c: ClientInfo): Record<string, string> {
  return {
    client_id: c.id,
    redirect_uri: c.redirectUris[0]!,
    ...(c.public ? { code_challenge: DECOY_CHALLENGE, code_challenge_method: 'S256' } : {}),
  };
}

function codeOf(location: string): string | undefined {
  const q = location.indexOf('?');
  return q < 0 ? undefined : (new URLSearchParams(location.slice(q + 1)).get('code') ?? undefined);
}

async function exchange(ts: TestServer, c: ClientInfo, code: string): Promise<{ access_token: string; refresh_token: string; id_token?: string; scope: string }> {
  const { headers, form } = clientAuth(c);
  const redirect = c.redirectUris[0]!;
  const res = await tokenRequest(ts, { grant_type: 'authorization_code', code, redirect_uri: redirect, ...form, ...(c.public ? { code_verifier: DECOY_VERIFIER } : {}) }, headers);
  assert.equal(res.statusCode, 200, `setup: code exchange for ${c.id} failed: ${res.body}`);
  return res.json();
}

/**
 * Starts a server for fuzzing. Returns the fuzz's view of it, and apart from it the genuine tokens that
 * only the final check may use.
 */
export async function startFuzzServer(dialect: 'sqlite' | 'postgres'): Promise<{ fs: FuzzServer; genuine: GenuineToken[] }> {
  const ts = await startTestServer({ dialect });
  const clients = new Map<string, ClientInfo>();
  for (const f of CLIENT_FIXTURES) {
    const { name, ...info } = f;
    if (f.id === 'web-app') clients.set(f.id, { ...info, secret: ts.client.secret });
    else if (f.id === 'native-app') clients.set(f.id, info);
    else {
      // Generated secrets: hashed with SHA-256, so that thousands of wrong guesses stay cheap.
      const { secret } = await createClient(ts.store, {
        realmId: REALM,
        clientId: f.id,
        name,
        redirectUris: f.redirectUris,
        postLogoutRedirectUris: f.postLogoutRedirectUris,
        ...(f.authMethod === 'client_secret_post' ? { authMethod: 'client_secret_post' } : {}),
      });
      clients.set(f.id, { ...info, ...(secret ? { secret } : {}) });
    }
  }
  await createOrganization(ts.store, { realmId: REALM, alias: 'beta', name: 'Beta <b>GmbH</b>' });
  for (const [username, orgAliases] of [['deep', ['acme']], ['solo', ['acme']], ['multi', ['acme', 'beta']], ['loner', []]] as const) {
    await createUser(ts.store, { realmId: REALM, username, password: FUZZ_PASSWORD, email: `${username}@example.com`, orgAliases: [...orgAliases] });
  }
  // Another realm, whose tokens must mean nothing here.
  await createRealm(ts.store, { id: 'other', displayName: 'Other' });
  // Self-registration on, so that the fuzzing reaches the registration form (docs/registration.md).
  await updateRealm(ts.store, { realmId: REALM, settings: { registrationAllowed: true } });
  // Token exchange (RFC 8693) on for two confidential clients, one of them with refresh tokens, so that
  // the fuzzing reaches the grant's checks and not only its refusal for a client without it.
  await updateClient(ts.store, { realmId: REALM, clientId: 'rp', standardTokenExchange: true, tokenExchangeRefresh: 'SAME_SESSION' });
  await updateClient(ts.store, { realmId: REALM, clientId: 'post-app', standardTokenExchange: true });
  ts.services.cache.clear();

  // GENUINE tokens, obtained before any fuzzing. From here on, only the final check touches them.
  const genuine: GenuineToken[] = [];
  const genuineFlows: Array<{ label: string; clientId: string; scope: string }> = [
    { label: 'web-app with openid', clientId: 'web-app', scope: 'openid core_data offline_access' },
    { label: 'web-app without openid', clientId: 'web-app', scope: 'core_data exports' },
    { label: 'native-app (public, PKCE)', clientId: 'native-app', scope: 'openid core_data' },
    { label: 'rp (redirect URI with a query)', clientId: 'rp', scope: 'openid offline_access' },
  ];
  for (const g of genuineFlows) {
    const c = clients.get(g.clientId)!;
    const r = await runAuthorization(ts, { query: { ...authorizeExtra(c), scope: g.scope } });
    assert.ok(r.code, `setup: no code for ${g.label}`);
    const t = await exchange(ts, c, r.code);
    genuine.push({ label: g.label, clientId: g.clientId, access: t.access_token, refresh: t.refresh_token, scope: t.scope });
  }

  // The decoy user deep signs in once and consents to each client: its session mints fresh codes at
  // will (no fuzz request ever uses this browser, so it stays signed in).
  const deepJar = new CookieJar();
  const decoys = new Map<string, DecoySet>();
  for (const c of clients.values()) {
    const r = await runAuthorization(ts, { jar: deepJar, username: 'deep', password: FUZZ_PASSWORD, query: authorizeExtra(c) });
    assert.ok(r.code, `setup: no decoy code for ${c.id}`);
    const t = await exchange(ts, c, r.code);
    decoys.set(c.id, { access: t.access_token, refresh: t.refresh_token, ...(t.id_token ? { id: t.id_token } : {}) });
  }
  // solo and multi consent once to web-app (so that some fuzzed requests go straight back with a code).
  const pool = new Map<PoolUser, CookieJar>();
  for (const user of POOL_USERS) {
    const jar = new CookieJar();
    await runAuthorization(ts, { jar, username: user, password: FUZZ_PASSWORD, organization: user === 'multi' ? 'beta' : 'acme' });
    pool.set(user, jar);
  }

  // Pending device flows: their user codes are real, for the /device page.
  const devices: FuzzServer['devices'] = [];
  for (let i = 0; i < 4; i++) {
    const res = await ts.app.inject({
      method: 'POST',
      url: realmPath('/protocol/openid-connect/auth/device'),
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: 'client_id=native-app&scope=openid%20core_data',
    });
    assert.equal(res.statusCode, 200, res.body);
    const body = res.json();
    devices.push({ deviceCode: body.device_code, userCode: body.user_code, clientId: 'native-app' });
  }
  // One of them approved by deep, so that polling it once succeeds.
  await approveDevice(ts, deepJar, devices[0]!.userCode);

  const forged = await forgeTokens(ts, decoys.get('web-app')!);

  const fs: FuzzServer = {
    ts,
    appUrl: ts.config.appUrl,
    clients,
    pushed: new Map(),
    async session(user) {
      let jar = pool.get(user);
      if (!jar) {
        jar = new CookieJar();
        const page = await inject(ts.app, jar, 'GET', realmPath('/account'));
        const form = parseForm(page.body);
        const res = await inject(ts.app, jar, 'POST', form.action, { csrf: form.csrf, username: user, password: FUZZ_PASSWORD });
        assert.equal(res.statusCode, 303, `fuzz session for ${user}: ${res.statusCode} ${res.body.slice(0, 300)}`);
        pool.set(user, jar);
      }
      const copy = new CookieJar();
      for (const [k, v] of jar.cookies) copy.cookies.set(k, v);
      return copy;
    },
    sessionSpent(user) {
      pool.delete(user);
    },
    decoys,
    forged,
    devices,
    async mintCode(clientId) {
      const c = clients.get(clientId);
      if (!c) return undefined;
      const q = new URLSearchParams({ ...authorizeExtra(c), response_type: 'code', scope: 'openid core_data offline_access', state: 'decoy' });
      const res = await ts.app.inject({ method: 'GET', url: `${realmPath('/protocol/openid-connect/auth')}?${q}`, headers: { cookie: deepJar.header() } });
      const loc = res.headers.location;
      const code = typeof loc === 'string' ? codeOf(loc) : undefined;
      if (code) fs.lastCodes.set(clientId, code);
      return code;
    },
    async renewDecoys() {
      for (const c of clients.values()) {
        const code = await fs.mintCode(c.id);
        if (!code) continue;
        const { headers, form } = clientAuth(c);
        const res = await tokenRequest(ts, { grant_type: 'authorization_code', code, redirect_uri: c.redirectUris[0]!, ...form, ...(c.public ? { code_verifier: DECOY_VERIFIER } : {}) }, headers);
        if (res.statusCode !== 200) continue;
        const t = res.json();
        decoys.set(c.id, { access: t.access_token, refresh: t.refresh_token, ...(t.id_token ? { id: t.id_token } : {}) });
      }
    },
    lastCodes: new Map(),
    stats: { requests: 0, statuses: new Map(), knownBugs: new Map(), outcomes: new Map() },
  };
  return { fs, genuine };
}

async function approveDevice(ts: TestServer, jar: CookieJar, userCode: string): Promise<void> {
  let page = await inject(ts.app, jar, 'GET', realmPath('/device'));
  let form = parseForm(page.body);
  let res = await inject(ts.app, jar, 'POST', form.action, { csrf: form.csrf, user_code: userCode });
  for (let i = 0; i < 4 && res.statusCode === 303; i++) {
    page = await inject(ts.app, jar, 'GET', res.headers.location as string);
    const kind = pageKind(page.body);
    form = parseForm(page.body);
    res = await inject(ts.app, jar, 'POST', form.action, { csrf: form.csrf, ...(kind === 'consent' ? { decision: 'allow' } : { organization: 'acme' }) });
  }
  assert.match(res.body, /Your device is connected/, 'setup: device approval failed');
}

const b64 = (v: unknown): string => Buffer.from(typeof v === 'string' ? v : JSON.stringify(v)).toString('base64url');

/** Access tokens that look right but must be refused. */
async function forgeTokens(ts: TestServer, decoy: DecoySet): Promise<Record<string, string>> {
  const [h, p] = decoy.access.split('.') as [string, string, string];
  const header = decodeProtectedHeader(decoy.access);
  const claims = JSON.parse(Buffer.from(p, 'base64url').toString()) as Record<string, unknown>;
  const now = Math.floor(ts.clock.nowMs() / 1000);
  const { privateKey } = await generateKeyPair('RS256');
  const jwks = (await ts.app.inject({ method: 'GET', url: realmPath('/protocol/openid-connect/certs') })).json() as { keys: Array<Record<string, unknown>> };
  const publicPem = crypto.createPublicKey({ key: jwks.keys[0] as crypto.JsonWebKey, format: 'jwk' }).export({ type: 'spki', format: 'pem' }).toString();
  const hs = (payload: unknown): string => {
    const input = `${b64({ alg: 'HS256', typ: 'JWT', kid: header.kid })}.${b64(payload)}`;
    return `${input}.${crypto.createHmac('sha256', publicPem).update(input).digest('base64url')}`;
  };
  const otherIss = `${ts.config.authUrl}/auth/realms/other`;
  return {
    // The realm's kid, but another key.
    foreignKey: await new SignJWT(claims).setProtectedHeader({ alg: 'RS256', kid: header.kid! }).sign(privateKey),
    algNone: `${b64({ alg: 'none', typ: 'JWT' })}.${p}.`,
    algNoneSigned: `${b64({ alg: 'none' })}.${p}.${decoy.access.split('.')[2]}`,
    // Algorithm confusion: HMAC keyed with the published RSA key.
    hsConfusion: hs(claims),
    // The decoy's signature on changed claims.
    widerScope: `${h}.${b64({ ...claims, scope: `${String(claims.scope)} admin` })}.${decoy.access.split('.')[2]}`,
    otherAzp: `${h}.${b64({ ...claims, azp: 'rp' })}.${decoy.access.split('.')[2]}`,
    // Signed by the server, but the other realm's key and issuer.
    otherRealm: await ts.services.keys.sign('other', { ...claims, iss: otherIss }),
    // Signed by this realm's key as it would have been long ago: expired.
    expired: await ts.services.keys.sign(REALM, { ...claims, iat: now - 400_000, exp: now - 100_000, jti: `${String(claims.jti)}x` }),
    // An ID token is not an access token.
    idToken: decoy.id ?? '',
    emptySignature: `${h}.${p}.`,
    twoParts: `${h}.${p}`,
    fourParts: `${decoy.access}.${p}`,
  };
}

// ---------------------------------------------------------------------------------------------------
// Tokens referred to by the fuzz

export interface ResolvedToken {
  value: string;
  /** False when no server may accept it: a forgery, a random string, or a decoy changed in substance. */
  mayBeAccepted: boolean;
}

/** Turns a symbolic token of the fuzz into a value. Only decoys and forgeries: never a genuine token. */
export async function resolveToken(fs: FuzzServer, ref: TokenRef): Promise<ResolvedToken> {
  const mutated = (value: string, m: TokenMutation | null): ResolvedToken => {
    if (!m) return { value, mayBeAccepted: true };
    const r = mutateToken(value, m);
    return { value: r.value, mayBeAccepted: !r.changesMeaning };
  };
  switch (ref.ref) {
    case 'decoy': {
      const d = fs.decoys.get(ref.client);
      const v = ref.kind === 'id' ? d?.id : d?.[ref.kind];
      return v ? mutated(v, ref.mutation) : { value: '', mayBeAccepted: false };
    }
    case 'forged':
      return { value: fs.forged[ref.name] ?? '', mayBeAccepted: false };
    case 'code': {
      const v = ref.fresh ? await fs.mintCode(ref.client) : fs.lastCodes.get(ref.client);
      return v ? mutated(v, ref.mutation) : { value: '', mayBeAccepted: false };
    }
    case 'device': {
      const d = fs.devices[ref.index % fs.devices.length];
      return d ? mutated(d.deviceCode, ref.mutation) : { value: '', mayBeAccepted: false };
    }
    case 'random':
      return { value: ref.value, mayBeAccepted: false };
  }
}

// ---------------------------------------------------------------------------------------------------
// Known server bugs: a violation matching one of these is labelled with its id in the failure message
// (and, only with FUZZ_TOLERATE_KNOWN=1, tolerated). See the final report for minimal counterexamples.

export interface KnownBug {
  id: string;
  title: string;
  matches(req: SentRequest, res: LightMyRequestResponse, problem: string): boolean;
}

const fastifyErrorCode = (res: LightMyRequestResponse): string | undefined => {
  try {
    const code = (JSON.parse(res.body) as { code?: unknown }).code;
    return typeof code === 'string' && code.startsWith('FST_ERR_') ? code : undefined;
  } catch {
    return undefined;
  }
};

/** Whether a request carries U+0000 anywhere: raw, percent-encoded, JSON-escaped, or inside Basic credentials. */
function carriesNul(req: SentRequest): boolean {
  const texts = [req.url, req.payload ?? '', ...Object.values(req.headers)];
  const basicCreds = /^Basic\s+(\S*)/i.exec(req.headers.authorization ?? '')?.[1];
  if (basicCreds) texts.push(Buffer.from(basicCreds, 'base64').toString('utf8'));
  return texts.some((t) => t.includes('\u0000') || /%00|\\u0000/i.test(t));
}

export const KNOWN_BUGS: KnownBug[] = [
  {
    // Minimal counterexamples (PostgreSQL only; SQLite answers 400/404):
    //   GET /auth/realms/%00/protocol/openid-connect/certs                       -> 500 server_error
    //   GET /auth/realms/test/protocol/openid-connect/auth?client_id=%00         -> 500 error page
    //   GET /auth/realms/test/login-actions/%00                                  -> 500 error page
    //   POST .../token with "Authorization: Basic ADoA" (U+0000 ':' U+0000)      -> 500 server_error
    //   POST .../account/login with username=a%00                                 -> 500 error page
    // PostgreSQL refuses U+0000 in text ("invalid byte sequence for encoding UTF8: 0x00").
    id: 'FZ-1',
    title: 'PostgreSQL: a U+0000 in the realm, client_id, interaction id or any other string that reaches a query is a 500',
    matches: (req, res) => res.statusCode >= 500 && carriesNul(req),
  },
  {
    // Minimal counterexamples (both databases):
    //   POST /auth/realms/%zz/protocol/openid-connect/token                       -> 400 {"error":"Bad Request","code":"FST_ERR_BAD_URL",...}
    //   POST /auth/realms/<257 chars>/protocol/openid-connect/token              -> 414 {"error":"Bad Request","code":"FST_ERR_MAX_PARAM_LENGTH",...}
    //   PATCH .../auth/device with "Content-Type: " and a body (no PATCH route)  -> 415 {"statusCode":415,"code":"FST_ERR_CTP_INVALID_MEDIA_TYPE",...}
    id: 'FZ-2',
    title: "errors raised by Fastify outside the routes' error handlers (FST_ERR_BAD_URL, FST_ERR_MAX_PARAM_LENGTH, FST_ERR_CTP_*) answer in Fastify's default format, not RFC 6749's",
    matches: (_req, res) => fastifyErrorCode(res) !== undefined,
  },
];

// ---------------------------------------------------------------------------------------------------
// Sending and checking

export interface SentRequest {
  method: HTTPMethods;
  url: string;
  headers: Record<string, string>;
  payload?: string;
  remoteAddress: string;
}

export class PropertyViolation extends Error {}

const trunc = (s: string, n = 600): string => (s.length > n ? `${s.slice(0, n)}... (${s.length} chars)` : s);

export function describeExchange(req: SentRequest, res?: LightMyRequestResponse): string {
  const lines = [`  request:  ${req.method} ${JSON.stringify(trunc(req.url, 400))} from ${req.remoteAddress}`];
  for (const [k, v] of Object.entries(req.headers)) lines.push(`            ${k}: ${JSON.stringify(trunc(v, 300))}`);
  if (req.payload !== undefined) lines.push(`            body: ${JSON.stringify(trunc(req.payload, 400))}`);
  if (res) {
    lines.push(`  response: ${res.statusCode} content-type=${String(res.headers['content-type'] ?? '')}${res.headers.location ? ` location=${JSON.stringify(res.headers.location)}` : ''}`);
    lines.push(`            body: ${JSON.stringify(trunc(res.body, 500))}`);
  }
  return lines.join('\n');
}

/** RFC 6749 5.2, RFC 8628 3.5, RFC 7009 2.2.1, RFC 6750 3.1 and RFC 8707 2 error codes. */
const OAUTH_ERRORS = new Set([
  'invalid_request',
  'invalid_client',
  'invalid_grant',
  'unauthorized_client',
  'unsupported_grant_type',
  'invalid_scope',
  'authorization_pending',
  'slow_down',
  'access_denied',
  'expired_token',
  'unsupported_token_type',
  'invalid_target',
  // RFC 9449 5
  'invalid_dpop_proof',
]);
/** RFC 6750 3.1 and RFC 9449 7.1. */
const BEARER_ERRORS = new Set(['invalid_request', 'invalid_token', 'insufficient_scope', 'invalid_dpop_proof']);
/**
 * RFC 9126 2.3: the PAR endpoint answers with the token endpoint's codes and the authorization endpoint's
 * (RFC 6749 4.1.2.1), and RFC 9101 7's invalid_request_object for a pushed request object.
 */
const PAR_ERRORS = new Set([...OAUTH_ERRORS, 'unsupported_response_type', 'temporarily_unavailable', 'invalid_request_object']);
const DESCRIPTION_CHARSET = /^[\x20-\x21\x23-\x5B\x5D-\x7E]*$/;

export type EndpointKind =
  | 'authorize'
  | 'interaction'
  | 'token'
  | 'device-authorization'
  | 'pushed-authorization'
  | 'introspection'
  | 'revocation'
  | 'userinfo'
  | 'logout'
  | 'account'
  | 'device-page'
  | 'discovery'
  | 'certs'
  | 'code-page'
  | 'health'
  | 'other';

const OIDC_PATHS: Array<[RegExp, EndpointKind]> = [
  [/^auth\/device$/, 'device-authorization'],
  [/^ext\/par\/request$/, 'pushed-authorization'],
  [/^auth$/, 'authorize'],
  [/^token\/introspect$/, 'introspection'],
  [/^token$/, 'token'],
  [/^revoke$/, 'revocation'],
  [/^userinfo$/, 'userinfo'],
  [/^logout(\/confirm)?$/, 'logout'],
  [/^certs$/, 'certs'],
];

/** Which endpoint a request is addressed to, from its path (any realm, a trailing slash allowed). */
export function classify(url: string): EndpointKind {
  let path: string;
  try {
    // The path the server sees: light-my-request resolves the URL as a browser would (dot segments).
    path = new URL(url, 'http://localhost').pathname;
  } catch {
    path = url.replace(/^[a-z]+:\/\/[^/]*/i, '').split(/[?#]/)[0]!;
  }
  if (path.length > 1) path = path.replace(/\/$/, '');
  const realm = /^\/auth\/realms\/[^/]*\/(.*)$/.exec(path);
  if (realm) {
    const rest = realm[1]!;
    const oidc = /^protocol\/openid-connect\/(.*)$/.exec(rest);
    if (oidc) return OIDC_PATHS.find(([re]) => re.test(oidc[1]!))?.[1] ?? 'other';
    if (/^login-actions\//.test(rest)) return 'interaction';
    if (/^account(\/.*)?$/.test(rest)) return 'account';
    if (rest === 'device') return 'device-page';
    if (rest === '.well-known/openid-configuration') return 'discovery';
    return 'other';
  }
  if (/^\/\.well-known\/oauth-authorization-server\//.test(path)) return 'discovery';
  if (path === '/authentication_code') return 'code-page';
  if (/^\/health\//.test(path)) return 'health';
  return 'other';
}

const JSON_OAUTH_ENDPOINTS = new Set<EndpointKind>(['token', 'device-authorization', 'pushed-authorization', 'introspection', 'revocation']);

/** The global not-found handler's answer (JSON, or a page for a browser's GET): no route for this method and path. */
function isNoRoute(res: LightMyRequestResponse): boolean {
  return res.statusCode === 404 && (res.body === '{"error":"invalid_request","error_description":"no such endpoint"}' || res.body.includes('There is no page at this address.'));
}

// The server's own pages a redirect may name: a sign-in's next step (its registration page too, where
// prompt=create leads: OIDC's Initiating User Registration), the account page, and the admin console
// (where /auth/admin leads).
const SERVER_PATH = /^\/auth\/(realms\/(test|other)\/(login-actions\/[A-Za-z0-9_-]+(\/registration)?|account)|admin\/console\/)$/;

/** The admin console's own pages, where its forms lead back (with a notice in the query), on this server. */
const CONSOLE_PAGE = /^\/auth\/admin\/console\/(realms\/[^/?#\\][^?#\\]*|login)?(\?[^#]*)?$/;

function escapeRe(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

const LOOPBACK = /^http:\/\/(127\.0\.0\.1|\[::1\])(?::(\d{1,5}))?([/?].*)?$/;

/**
 * The redirect URI rule, re-implemented as the oracle: exact string match, except that a registered
 * loopback IP URI matches on any port (RFC 8252 7.3, as docs/limited-clients.md documents for every
 * client), the rest of the URI still matching exactly.
 */
export function redirectUriRegistered(registered: readonly string[], requested: string): boolean {
  if (registered.includes(requested)) return true;
  const m = LOOPBACK.exec(requested);
  if (!m || (m[2] !== undefined && Number(m[2]) > 65535)) return false;
  return registered.some((r) => {
    const reg = LOOPBACK.exec(r);
    return reg !== null && reg[1] === m[1] && (reg[3] ?? '') === (m[3] ?? '');
  });
}

/** Where a response to `base` may land: `base` itself, or `base` with parameters appended as redirectWith does. */
function landsOn(base: string, location: string): boolean {
  if (location === base) return true;
  if (!location.startsWith(base)) return false;
  const sep = base.includes('?') ? (base.endsWith('?') || base.endsWith('&') ? '' : '&') : '?';
  const rest = location.slice(base.length);
  // response_mode=fragment: the parameters follow the unchanged redirect URI after '#'.
  const fragment = rest.startsWith('#') && !rest.slice(1).includes('#');
  if (!fragment && (!rest.startsWith(sep) || rest.includes('#'))) return false;
  const keys = [...new URLSearchParams(rest.slice(fragment ? 1 : sep.length)).keys()];
  return keys.every((k) => ['code', 'state', 'iss', 'error', 'error_description'].includes(k));
}

function loopbackBases(registered: string, location: string): string[] {
  const reg = LOOPBACK.exec(registered);
  if (!reg) return [registered];
  const m = new RegExp(`^http://${escapeRe(reg[1]!)}(:\\d{1,5})?`).exec(location);
  if (!m || (m[1] !== undefined && Number(m[1].slice(1)) > 65535)) return [registered];
  return [`http://${reg[1]}${m[1] ?? ''}${reg[3] ?? ''}`];
}

/** Any URI registered for some client of the realm (redirect or post-logout), the server's own pages, the code page. */
export function allowedLocation(fs: FuzzServer, location: string): boolean {
  if (SERVER_PATH.test(location) || CONSOLE_PAGE.test(location)) return true;
  // An impersonation from the console opens the user's account page, on this server (a server of the
  // fuzz: the oracle's own tests check the rest without one).
  const authUrl = fs.ts?.config.authUrl;
  if (authUrl !== undefined && new RegExp(`^${escapeRe(authUrl)}/auth/realms/[A-Za-z0-9_-]+/account$`).test(location)) return true;
  const codePage = `${fs.appUrl}/authentication_code`;
  for (const c of fs.clients.values()) {
    for (const r of [...c.redirectUris, ...c.postLogoutRedirectUris]) {
      const base = r === OOB ? codePage : r;
      if (loopbackBases(base, location).some((b) => landsOn(b, location))) return true;
    }
  }
  return landsOn(codePage, location);
}

/** The request's parameters as the server reads them, when the oracle can know them. */
function serverParams(req: SentRequest): Record<string, unknown> | undefined {
  if (req.method === 'GET' || req.method === 'HEAD') {
    const url = req.url.split('#')[0]!;
    const q = url.indexOf('?');
    return q < 0 ? {} : (parseQuery(url.slice(q + 1)) as Record<string, unknown>);
  }
  const type = (req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
  if (type === 'application/x-www-form-urlencoded') return parseQuery(req.payload ?? '') as Record<string, unknown>;
  if (type === 'application/json') {
    try {
      const v: unknown = JSON.parse(req.payload ?? '');
      return v && typeof v === 'object' ? (v as Record<string, unknown>) : {};
    } catch {
      return undefined;
    }
  }
  return undefined;
}

/** Markup the fuzz injects; none of it may come back unescaped in an HTML page. */
export const INJECTED_MARKUP = ['<script>xss', '<img src=x onerror=xss', '<svg/onload=xss', '" onmouseover="xss', "' onfocus='xss", '<b>xss</b>', '</title><script'];
const OWN_SCRIPTS = [
  '<script src="/auth/resources/code-page.js" defer></script>',
  '<script src="/auth/resources/form-post.js" defer></script>',
  '<script src="/auth/resources/webauthn.js" defer></script>',
  '<script src="/auth/resources/login-status-iframe.js"></script>',
  '<script src="/auth/resources/3p-cookies-step1.js"></script>',
  '<script src="/auth/resources/3p-cookies-step2.js"></script>',
];

function unescapeHtml(s: string): string {
  return s.replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&#96;/g, '`').replace(/&amp;/g, '&');
}

/** The properties every response must have. Returns the violations found (empty: all good). */
export function violations(fs: FuzzServer, req: SentRequest, res: LightMyRequestResponse): string[] {
  const problems: string[] = [];
  const kind = classify(req.url);
  if (res.statusCode >= 500) problems.push(`a ${res.statusCode} server error`);

  // Redirects.
  if (res.statusCode >= 300 && res.statusCode < 400) {
    const location = res.headers.location;
    if (typeof location !== 'string') problems.push('a redirect without a Location');
    else if (!allowedLocation(fs, location)) problems.push(`a redirect to a URI registered for no client: ${location}`);
    else if (kind === 'authorize' && !SERVER_PATH.test(location)) {
      const p = serverParams(req);
      if (p) {
        // RFC 9126 4: by request_uri, the pushed request is the request (the parameters beside it are ignored).
        const pushed = typeof p.request_uri === 'string' ? fs.pushed.get(p.request_uri) : undefined;
        const clientId = pushed && p.client_id === pushed.clientId ? pushed.clientId : p.client_id;
        const redirectUri = pushed && p.client_id === pushed.clientId ? pushed.redirectUri : p.redirect_uri;
        const client = typeof clientId === 'string' ? fs.clients.get(clientId) : undefined;
        if (typeof redirectUri !== 'string' || redirectUri === '' || !client) {
          problems.push(`a redirect to the client although client_id/redirect_uri are not one valid pair: ${location}`);
        } else if (!redirectUriRegistered(client.redirectUris, redirectUri)) {
          problems.push(`a redirect to a redirect_uri not registered for ${client.id}: ${location}`);
        } else if (!landsOn(redirectUri === OOB ? `${fs.appUrl}/authentication_code` : redirectUri, location)) {
          problems.push(`a redirect somewhere else than the requested redirect_uri ${redirectUri}: ${location}`);
        }
      }
    }
  }

  // RFC 6749 / 8628 / 7009 errors of the JSON endpoints; RFC 6750 errors of userinfo.
  // RFC 6750 3.1: a request with no token at all gets the bare challenge, with no error information.
  const bareChallenge = kind === 'userinfo' && res.statusCode === 401 && res.body === '' && /^Bearer realm="[^"]*"$/.test(String(res.headers['www-authenticate'] ?? ''));
  if ((JSON_OAUTH_ENDPOINTS.has(kind) || kind === 'userinfo') && res.statusCode >= 400 && req.method !== 'HEAD' && !isNoRoute(res) && !bareChallenge) {
    const registry = kind === 'userinfo' ? BEARER_ERRORS : kind === 'pushed-authorization' ? PAR_ERRORS : OAUTH_ERRORS;
    let body: unknown;
    try {
      body = JSON.parse(res.body);
    } catch {
      body = undefined;
    }
    if (!String(res.headers['content-type'] ?? '').startsWith('application/json')) problems.push(`an error that is not application/json (${String(res.headers['content-type'])})`);
    if (!body || typeof body !== 'object' || Array.isArray(body)) problems.push('an error body that is not a JSON object');
    else {
      const b = body as Record<string, unknown>;
      const extra = Object.keys(b).filter((k) => !['error', 'error_description', 'error_uri'].includes(k));
      if (extra.length > 0) problems.push(`an error body with members outside RFC 6749 5.2: ${extra.join(', ')}`);
      if (typeof b.error !== 'string' || !registry.has(b.error)) problems.push(`an error code outside the registry: ${JSON.stringify(b.error)}`);
      if (b.error_description !== undefined && (typeof b.error_description !== 'string' || !DESCRIPTION_CHARSET.test(b.error_description))) {
        problems.push(`an error_description outside %x20-21 / %x23-5B / %x5D-7E: ${JSON.stringify(b.error_description)}`);
      }
      if (res.statusCode === 401 && !res.headers['www-authenticate']) problems.push('a 401 without WWW-Authenticate');
    }
    // README: every response of the token endpoint carries Cache-Control: no-store (RFC 6749 5.1).
    if (kind === 'token' && res.headers['cache-control'] !== 'no-store') problems.push('an error without Cache-Control: no-store');
  }

  // RFC 9126 2.2, 2.3: the PAR endpoint answers in JSON, never with a redirect; a request_uri with no-store.
  if (kind === 'pushed-authorization' && res.statusCode >= 300 && res.statusCode < 400) problems.push('a redirect from the pushed authorization request endpoint');
  if (kind === 'pushed-authorization' && res.statusCode === 201 && res.headers['cache-control'] !== 'no-store') problems.push('a request_uri without Cache-Control: no-store');

  // README: every response of the token endpoint carries Cache-Control: no-store (RFC 6749 5.1).
  if (kind === 'token' && res.statusCode === 200 && res.headers['cache-control'] !== 'no-store') problems.push('tokens without Cache-Control: no-store');

  // HTML pages.
  if (String(res.headers['content-type'] ?? '').startsWith('text/html')) {
    const body = OWN_SCRIPTS.reduce((b, own) => b.split(own).join(''), res.body);
    if (/<script/i.test(body)) problems.push('an HTML page with a <script element the server did not write');
    for (const m of INJECTED_MARKUP) if (body.includes(m)) problems.push(`an HTML page echoing unescaped markup ${JSON.stringify(m)}`);
    for (const link of body.matchAll(/\s(?:href|action|src|formaction)="([^"]*)"/gi)) {
      const target = unescapeHtml(link[1]!);
      const own = target.startsWith('/') && !target.startsWith('//') && !target.startsWith('/\\');
      if (!own && !allowedLocation(fs, target)) problems.push(`an HTML link to a URI registered for no client: ${target}`);
    }
  }
  return problems;
}

export interface Io {
  /** Sends a fuzz request (from a fuzz address unless given) and checks every property on the response. */
  send(req: Omit<SentRequest, 'remoteAddress' | 'headers'> & { headers?: Record<string, string>; remoteAddress?: string }): Promise<LightMyRequestResponse>;
  /** Fails the property with a message naming the exchange. */
  fail(message: string, req: SentRequest, res: LightMyRequestResponse): never;
  address: string;
}

/** A short description of what a response was: which page, which redirect, which error. */
function outcomeDetail(res: LightMyRequestResponse): string {
  const location = res.headers.location;
  if (typeof location === 'string') {
    if (SERVER_PATH.test(location)) return ' to own page';
    const q = location.indexOf('?');
    const p = q < 0 ? new URLSearchParams() : new URLSearchParams(location.slice(q + 1));
    return p.has('code') ? ' to client with code' : p.has('error') ? ` to client with ${p.get('error')}` : ' to client';
  }
  const type = String(res.headers['content-type'] ?? '');
  if (type.startsWith('text/html')) {
    const kind = pageKind(res.body);
    if (kind !== 'error') return ` ${kind} page`;
    const title = /<h1>([^<]*)<\/h1>/.exec(res.body)?.[1];
    return title ? ` page "${title.slice(0, 40)}"` : ' page';
  }
  if (type.startsWith('application/json')) {
    try {
      const b = JSON.parse(res.body) as Record<string, unknown>;
      if (typeof b.error === 'string') return ` ${b.error}${DEBUG ? ` (${String(b.error_description).slice(0, 60)})` : ''}`;
      if (b.active !== undefined) return ` active=${String(b.active)}`;
      if (typeof b.access_token === 'string') return ' tokens';
    } catch {
      return ' bad json';
    }
  }
  return '';
}

function knownBug(req: SentRequest, res: LightMyRequestResponse, problem: string): KnownBug | undefined {
  return KNOWN_BUGS.find((b) => b.matches(req, res, problem));
}

function makeIo(fs: FuzzServer, address: string): Io {
  const io: Io = {
    address,
    async send(r) {
      const req: SentRequest = { method: r.method, url: r.url, headers: r.headers ?? {}, ...(r.payload !== undefined ? { payload: r.payload } : {}), remoteAddress: r.remoteAddress ?? address };
      const res = await fs.ts.app.inject({ method: req.method, url: req.url, headers: req.headers, remoteAddress: req.remoteAddress, ...(req.payload !== undefined ? { payload: req.payload } : {}) });
      fs.stats.requests++;
      fs.stats.statuses.set(res.statusCode, (fs.stats.statuses.get(res.statusCode) ?? 0) + 1);
      const outcome = `${classify(req.url)} ${res.statusCode}${outcomeDetail(res)}`;
      fs.stats.outcomes.set(outcome, (fs.stats.outcomes.get(outcome) ?? 0) + 1);
      const problems = violations(fs, req, res);
      const unknown: string[] = [];
      for (const p of problems) {
        const bug = knownBug(req, res, p);
        if (bug && TOLERATE_KNOWN) {
          const key = `${bug.id} on ${req.method} ${classify(req.url)}`;
          fs.stats.knownBugs.set(key, (fs.stats.knownBugs.get(key) ?? 0) + 1);
        }
        else unknown.push(bug ? `[KNOWN BUG ${bug.id}: ${bug.title}] ${p}` : p);
      }
      if (unknown.length > 0) throw new PropertyViolation(`${unknown.join('\n')}\n${describeExchange(req, res)}`);
      return res;
    },
    fail(message, req, res) {
      const bug = knownBug(req, res, message);
      throw new PropertyViolation(`${bug ? `[KNOWN BUG ${bug.id}: ${bug.title}] ` : ''}${message}\n${describeExchange(req, res)}`);
    },
  };
  return io;
}

/**
 * Runs one property: `examples`, then `numRuns` values of `arb`, each handed to `run` with an Io that
 * checks every response. Prints the seeds, the number of requests and the time taken.
 */
export async function fuzz<T>(t: TestContext, fs: FuzzServer, name: string, arb: fc.Arbitrary<T>, run: (value: T, io: Io) => Promise<void>, runsOnSqlite: number, examples: T[] = []): Promise<void> {
  // On PostgreSQL, other values than on SQLite (a seed of its own) and half as many: the same inputs
  // twice found nothing the first pass had not, each request there costs two to three times the CPU of
  // SQLite's on this two-core machine, and the PostgreSQL fuzz files were the suite's longest after the
  // crash tests (2026-11-29: 20 to 31 s each). Together the two databases now see 1.5 times the distinct
  // inputs that SQLite alone does. FUZZ_SCALE scales both.
  const postgres = fs.ts.db.name === 'postgres';
  const seed = propertySeed(postgres ? `${name} (postgres)` : name);
  const numRuns = postgres ? Math.max(1, Math.round(runsOnSqlite / 2)) : runsOnSqlite;
  const before = fs.stats.requests;
  fs.stats.outcomes.clear();
  const start = performance.now();
  t.diagnostic(`FUZZ_SEED=${SEED} (property seed ${seed}), ${numRuns} runs`);
  try {
    await fc.assert(
      fc.asyncProperty(arb, fuzzAddress, async (value, address) => {
        await run(value, makeIo(fs, address));
      }),
      // `examples`: counterexamples found once (another seed), tried first in every run.
      { seed, numRuns, includeErrorInReport: true, examples: examples.map((v): [T, string] => [v, '10.66.0.0']), ...(PATH ? { path: PATH } : {}) },
    );
  } finally {
    const ms = performance.now() - start;
    t.diagnostic(`${name}: ${fs.stats.requests - before} requests in ${(ms / 1000).toFixed(1)} s`);
    const top = [...fs.stats.outcomes].sort((a, b) => b[1] - a[1]);
    t.diagnostic(`outcomes: ${top.map(([o, n]) => `${o} x${n}`).join('; ')}`);
  }
}

export function reportStats(t: TestContext, fs: FuzzServer): void {
  const statuses = [...fs.stats.statuses].sort((a, b) => a[0] - b[0]).map(([s, n]) => `${s}:${n}`).join(' ');
  t.diagnostic(`total ${fs.stats.requests} fuzz requests; statuses ${statuses}`);
  if (fs.stats.knownBugs.size > 0) t.diagnostic(`known bugs tolerated (FUZZ_TOLERATE_KNOWN=1): ${[...fs.stats.knownBugs].sort().map(([id, n]) => `${id} x${n}`).join(', ')}`);
}

// ---------------------------------------------------------------------------------------------------
// The final check

/**
 * Every token issued before the fuzzing still works: each access token passes introspection (for a
 * confidential client) and userinfo (with the openid scope), then each refresh token refreshes. The
 * clock moves past the 60 s window of the per-client secret failure limiter, and the requests come
 * from an address the fuzz never used.
 */
export async function assertGenuineTokensSurvive(fs: FuzzServer, genuine: GenuineToken[]): Promise<void> {
  const { ts } = fs;
  ts.clock.advance(61);
  for (const g of genuine) {
    const c = fs.clients.get(g.clientId)!;
    if (!c.public) {
      const res = await ts.app.inject({
        method: 'POST',
        url: realmPath('/protocol/openid-connect/token/introspect'),
        remoteAddress: FINAL_ADDRESS,
        headers: { 'content-type': 'application/x-www-form-urlencoded', ...clientAuth(c).headers },
        payload: new URLSearchParams({ token: g.access, ...clientAuth(c).form }).toString(),
      });
      assert.equal(res.statusCode, 200, `${g.label}: introspection answered ${res.statusCode} ${res.body}`);
      assert.equal(res.json().active, true, `${g.label}: the access token is no longer active`);
    }
    if (g.scope.split(' ').includes('openid')) {
      const res = await ts.app.inject({ method: 'GET', url: realmPath('/protocol/openid-connect/userinfo'), remoteAddress: FINAL_ADDRESS, headers: { authorization: `Bearer ${g.access}` } });
      assert.equal(res.statusCode, 200, `${g.label}: userinfo answered ${res.statusCode} ${res.body}`);
      assert.equal(res.json().sub, ts.user.id);
    }
  }
  for (const g of genuine) {
    const c = fs.clients.get(g.clientId)!;
    const { headers, form } = clientAuth(c);
    const res = await ts.app.inject({
      method: 'POST',
      url: realmPath('/protocol/openid-connect/token'),
      remoteAddress: FINAL_ADDRESS,
      headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
      payload: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: g.refresh, ...form }).toString(),
    });
    assert.equal(res.statusCode, 200, `${g.label}: the refresh token no longer refreshes: ${res.statusCode} ${res.body}`);
    assert.notEqual(res.json().refresh_token, g.refresh);
  }
}

/**
 * Every path the app routes, read from Fastify's route tree (`printRoutes`: one line per node, its path
 * segment after the branch, children four columns further in), with `{realm}` for the realm
 * parameter and `{id}` for any other parameter or wildcard, as the whole-surface fuzz writes its routes.
 */
export function routedPaths(app: TestServer['app']): string[] {
  const stack: string[] = [];
  const out = new Set<string>();
  for (const line of app.printRoutes({ commonPrefix: false }).split('\n')) {
    const at = line.indexOf('── ');
    if (at < 0) continue;
    const depth = (at - 1) / 4;
    const m = /^(\S*) \(/.exec(line.slice(at + 3)) ?? /^(\S*)$/.exec(line.slice(at + 3));
    if (!m) continue;
    stack[depth] = `${depth > 0 ? stack[depth - 1] : ''}${m[1]}`;
    stack.length = depth + 1;
    if (line.includes(' (')) out.add(stack[depth]!.replace(/:realm\b/g, '{realm}').replace(/:[A-Za-z0-9_-]+|\*/g, '{id}'));
  }
  return [...out];
}

/** A master admin's access token (the bootstrap admin, made by the first caller: bootstrapAdmin does nothing when master has one). */
export async function masterAdminToken(fs: FuzzServer): Promise<string> {
  await bootstrapAdmin(fs.ts.store, { username: 'fuzz-admin', password: 'fuzz admin password 42' });
  const tokenRes = await fs.ts.app.inject({
    method: 'POST',
    url: '/auth/realms/master/protocol/openid-connect/token',
    remoteAddress: FINAL_ADDRESS,
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    payload: new URLSearchParams({ grant_type: 'password', client_id: 'admin-cli', username: 'fuzz-admin', password: 'fuzz admin password 42' }).toString(),
  });
  return (tokenRes.json() as { access_token: string }).access_token;
}

/** An admin API error carries its JSON message (errorMessage; a URL too long for any route is answered before it: error_description). */
export function checkAdminError(io: Io, sent: Parameters<Io['fail']>[1], res: Awaited<ReturnType<Io['send']>>): void {
  if (res.statusCode < 400) return;
  let error: unknown;
  try {
    const json = res.json() as { errorMessage?: unknown; error_description?: unknown };
    error = json.errorMessage ?? json.error_description;
  } catch {
    error = undefined;
  }
  if (typeof error !== 'string' || error === '') io.fail('an admin API error without a JSON message', sent, res);
}

export { REALM, realmPath };
