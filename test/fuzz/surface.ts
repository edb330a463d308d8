/**
 * Fuzzing of the rest of the surface, and of every endpoint at once: discovery (both paths), JWKS,
 * health, static resources, unknown paths and methods, and random combinations of any path, method,
 * content type, body, cookie and Authorization header. Every response is checked by harness.ts; at the
 * end, the tokens issued before the fuzzing must still work.
 */
import { describe, test, before, after } from 'node:test';
import fc from 'fast-check';
import type { HTTPMethods } from 'fastify';
import { basic } from '../helpers/server.js';
import { bodyFor, bodyKind, contentType, headerValue, junk, paramName, pct, percentGarbage, rawBytes, serialization, serialize, tokenRef, type Pair, type TokenRef } from './arbitraries.js';
import { assertGenuineTokensSurvive, fuzz, reportStats, resolveToken, runs, startFuzzServer, type FuzzServer, type GenuineToken } from './harness.js';

const METHODS: HTTPMethods[] = ['GET', 'POST', 'PUT', 'DELETE', 'PATCH', 'HEAD', 'OPTIONS', 'TRACE', 'PROPFIND', 'PROPPATCH', 'MKCOL', 'COPY', 'MOVE', 'LOCK', 'UNLOCK', 'SEARCH', 'REPORT', 'MKCALENDAR'];
const method = fc.oneof({ weight: 6, arbitrary: fc.constantFrom<HTTPMethods>('GET', 'POST') }, { weight: 3, arbitrary: fc.constantFrom(...METHODS) });

/** Every path the server serves, with a placeholder for the realm and the interaction id. */
const ROUTES = [
  '/auth/realms/{realm}/protocol/openid-connect/auth',
  '/auth/realms/{realm}/protocol/openid-connect/auth/device',
  '/auth/realms/{realm}/protocol/openid-connect/token',
  '/auth/realms/{realm}/protocol/openid-connect/token/introspect',
  '/auth/realms/{realm}/protocol/openid-connect/revoke',
  '/auth/realms/{realm}/protocol/openid-connect/userinfo',
  '/auth/realms/{realm}/protocol/openid-connect/logout',
  '/auth/realms/{realm}/protocol/openid-connect/logout/confirm',
  '/auth/realms/{realm}/protocol/openid-connect/certs',
  '/auth/realms/{realm}/.well-known/openid-configuration',
  '/.well-known/oauth-authorization-server/auth/realms/{realm}',
  '/auth/realms/{realm}/login-actions/{id}',
  '/auth/realms/{realm}/login-actions/{id}/login',
  '/auth/realms/{realm}/login-actions/{id}/consent',
  '/auth/realms/{realm}/login-actions/{id}/organization',
  '/auth/realms/{realm}/login-actions/{id}/otp',
  '/auth/realms/{realm}/login-actions/{id}/configure-otp',
  '/auth/realms/{realm}/device',
  '/auth/realms/{realm}/account',
  '/auth/realms/{realm}/account/login',
  '/auth/realms/{realm}/account/otp',
  '/auth/realms/{realm}/account/configure-otp',
  '/auth/realms/{realm}/account/password',
  '/auth/realms/{realm}/account/otp/setup',
  '/auth/realms/{realm}/account/otp/remove',
  '/auth/realms/{realm}/account/recovery-codes',
  '/auth/realms/{realm}/account/revoke',
  '/auth/realms/{realm}/account/sessions/end',
  '/authentication_code',
  '/auth/resources/realmgate.css',
  '/auth/resources/code-page.js',
  '/health/live',
  '/health/ready',
];

const realm = fc.oneof(
  { weight: 8, arbitrary: fc.constant('test') },
  { weight: 1, arbitrary: fc.constantFrom('other', 'TEST', 'nope', '', '.', '..', '%2e%2e', 'test%00', '%00', 'te%2Fst', 'test%20', '%74est', 'test;x', 'r'.repeat(257), 't\u00e9st', '%C3%A9', '%zz', '%', '__proto__', 'constructor') },
  { weight: 1, arbitrary: junk.map((s) => pct(s)) },
);

/** Path suffixes: nothing, a trailing slash, or junk appended, encoded or raw. */
const suffix = fc.oneof(
  { weight: 12, arbitrary: fc.constant('') },
  { weight: 2, arbitrary: fc.constantFrom('/', '//', '/.', '/..', '/%2e', '/x', '.json', ';a=b', '%00', '%2F', '/%ff', '/index.html', '?', '#') },
  { weight: 1, arbitrary: junk.map((s) => `/${pct(s)}`) },
  { weight: 1, arbitrary: percentGarbage.map((s) => `/${s}`) },
);

const cookie = fc.oneof(
  { weight: 4, arbitrary: fc.constant<string | null>(null) },
  { weight: 1, arbitrary: fc.constantFrom('RG_SESSION=x', 'RG_BROWSER=x', `RG_SESSION=${'s'.repeat(199)}`, 'RG_SESSION=; RG_BROWSER=', 'RG_SESSION=%zz', 'RG_SESSION="a"', '=;=;', 'RG_SESSION=a; RG_SESSION=b', 'a=b\u00ff') },
  { weight: 1, arbitrary: headerValue },
);

type Authorization = { kind: 'none' } | { kind: 'raw'; value: string } | { kind: 'basic'; client: string } | { kind: 'bearer'; token: TokenRef };
const authorization = fc.oneof(
  { weight: 4, arbitrary: fc.constant<Authorization>({ kind: 'none' }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('raw' as const), value: headerValue }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('basic' as const), client: fc.constantFrom('web-app', 'rp', 'oob', 'post-app') }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('bearer' as const), token: tokenRef }) },
);

const ALL_PARAMS = ['client_id', 'redirect_uri', 'response_type', 'scope', 'state', 'grant_type', 'code', 'refresh_token', 'device_code', 'token', 'token_type_hint', 'access_token', 'id_token_hint', 'post_logout_redirect_uri', 'csrf', 'username', 'password', 'decision', 'organization', 'user_code', 'client_secret', 'code_verifier', 'error', 'error_description', 'session_id', 'organization_id'];

/** The suite for one database; one file per database runs it, so each stays within the runner's per-file time limit on a loaded machine. */
export function fuzzSuite(dialect: 'sqlite' | 'postgres'): void {
  describe(`fuzz: discovery, JWKS, health, unknown paths, whole surface (${dialect})`, () => {
    let fs: FuzzServer;
    let genuine: GenuineToken[];
    before(async () => {
      ({ fs, genuine } = await startFuzzServer(dialect));
    });
    after(() => fs.ts.close());

    test('discovery, JWKS, health and static resources: methods, realms, query strings, headers', async (t) => {
      const spec = fc.record({
        route: fc.constantFrom(
          '/auth/realms/{realm}/.well-known/openid-configuration',
          '/.well-known/oauth-authorization-server/auth/realms/{realm}',
          '/auth/realms/{realm}/protocol/openid-connect/certs',
          '/health/live',
          '/health/ready',
          '/auth/resources/realmgate.css',
          '/auth/resources/code-page.js',
          '/.well-known/openid-configuration',
          '/.well-known/oauth-authorization-server',
        ),
        realm,
        suffix,
        method,
        query: fc.option(fc.array(fc.tuple(paramName(['realm', 'format', 'kid', 'alg']), junk), { maxLength: 3 })),
        serial: serialization,
        headers: fc.dictionary(fc.constantFrom('accept', 'accept-encoding', 'if-none-match', 'if-modified-since', 'range', 'origin', 'x-forwarded-host', 'x-forwarded-proto', 'host'), headerValue, { maxKeys: 3 }),
        cookie,
      });
      await fuzz(t, fs, 'discovery-jwks-health', spec, async (s, io) => {
        const path = s.route.replace('{realm}', s.realm) + s.suffix;
        const query = s.query === null ? '' : `?${serialize(s.query, s.serial)}`;
        const headers: Record<string, string> = { ...s.headers, ...(s.cookie === null ? {} : { cookie: s.cookie }) };
        const res = await io.send({ method: s.method, url: `${path}${query}`, headers });
        // The discovery document names this server's endpoints only, whatever the request said.
        if (res.statusCode === 200 && /openid-configuration|oauth-authorization-server/.test(s.route) && s.method === 'GET') {
          const doc = res.json() as Record<string, unknown>;
          for (const [k, v] of Object.entries(doc)) {
            if (typeof v === 'string' && /^https?:/.test(v) && !v.startsWith(`${fs.ts.config.authUrl}/auth/realms/`)) io.fail(`the discovery document points ${k} elsewhere: ${v}`, { method: s.method, url: `${path}${query}`, headers, remoteAddress: io.address }, res);
          }
        }
      }, runs(1200));
    });

    test('unknown paths and methods', async (t) => {
      const segment = fc.oneof(
        { weight: 3, arbitrary: fc.constantFrom('auth', 'realms', 'test', 'protocol', 'openid-connect', 'token', 'login-actions', 'account', 'device', '.well-known', 'health', 'resources', 'admin', 'api', 'console', '..', '.', '', '%2e%2e', 'etc', 'passwd', 'metrics', 'debug') },
        { weight: 1, arbitrary: junk.map((s) => pct(s)) },
        { weight: 1, arbitrary: percentGarbage },
        { weight: 1, arbitrary: fc.string({ unit: 'grapheme-ascii', maxLength: 8 }) },
      );
      const spec = fc.record({
        segments: fc.array(segment, { minLength: 0, maxLength: 7 }),
        leading: fc.constantFrom('/', '/', '/', '//', '', '/%5C', '/./', 'http://evil.example/', '*'),
        method,
        query: fc.option(fc.oneof(percentGarbage, junk.map((s) => pct(s)))),
        body: fc.option(fc.record({ kind: bodyKind, type: contentType, serial: serialization, bytes: rawBytes, pairs: fc.array(fc.tuple(paramName(ALL_PARAMS), junk), { maxLength: 4 }) })),
      });
      await fuzz(t, fs, 'unknown-paths', spec, async (s, io) => {
        // A backslash in the path is not a URL light-my-request can parse (it would be '//' and no host).
        const path = `${s.leading}${s.segments.join('/')}`.replace(/\\/g, '%5C');
        const url = `${path}${s.query === null ? '' : `?${s.query}`}`;
        const payload = s.body && s.method !== 'GET' && s.method !== 'HEAD' ? bodyFor(s.body.kind, s.body.pairs, s.body.serial, s.body.bytes) : undefined;
        await io.send({
          method: s.method,
          url: url === '' ? '/' : url,
          headers: payload !== undefined && s.body?.type ? { 'content-type': s.body.type } : {},
          ...(payload !== undefined ? { payload } : {}),
        });
      }, runs(2500));
    });

    test('whole surface: any route, method, parameters, body, cookie and credentials', async (t) => {
      const spec = fc.record({
        route: fc.constantFrom(...ROUTES),
        realm,
        id: fc.oneof(fc.constantFrom('x', 'A'.repeat(24), ''), junk.map((s) => pct(s))),
        suffix,
        method,
        pairs: fc.array(fc.tuple(paramName(ALL_PARAMS), fc.oneof({ weight: 3, arbitrary: junk }, { weight: 1, arbitrary: tokenRef })), { maxLength: 6 }),
        inQuery: fc.boolean(),
        body: fc.record({ kind: bodyKind, type: contentType, serial: serialization, bytes: rawBytes }),
        cookie,
        authorization,
      });
      await fuzz(t, fs, 'whole-surface', spec, async (s, io) => {
        const pairs: Pair[] = [];
        for (const [k, v] of s.pairs) pairs.push([k, typeof v === 'string' ? v : (await resolveToken(fs, v)).value]);
        const path = s.route.replace('{realm}', s.realm).replace('{id}', s.id) + s.suffix;
        const headers: Record<string, string> = {};
        if (s.cookie !== null) headers.cookie = s.cookie;
        if (s.authorization.kind === 'raw') headers.authorization = s.authorization.value;
        else if (s.authorization.kind === 'basic') {
          const c = fs.clients.get(s.authorization.client)!;
          headers.authorization = basic(c.id, c.secret ?? '');
        } else if (s.authorization.kind === 'bearer') headers.authorization = `Bearer ${(await resolveToken(fs, s.authorization.token)).value}`;
        const bodyless = s.method === 'GET' || s.method === 'HEAD' || s.inQuery;
        const payload = bodyless ? undefined : bodyFor(s.body.kind, pairs, s.body.serial, s.body.bytes);
        if (payload !== undefined && s.body.type !== null) headers['content-type'] = s.body.type;
        const url = bodyless && pairs.length > 0 ? `${path}?${serialize(pairs, s.body.serial)}` : path;
        await io.send({ method: s.method, url, headers, ...(payload !== undefined ? { payload } : {}) });
      }, runs(4000));
    });

    test('tokens issued before the fuzzing still work', async (t) => {
      reportStats(t, fs);
      await assertGenuineTokensSurvive(fs, genuine);
    });
  });
}
