/**
 * Fuzzing of the rest of the surface, and of every endpoint at once: discovery (both paths), JWKS,
 * health, static resources, unknown paths and methods, and random combinations of any path, method,
 * content type, body, cookie and Authorization header. Every response is checked by harness.ts; at the
 * end, the tokens issued before the fuzzing must still work.
 */
import { describe, test, before, after } from 'node:test';
import fc from 'fast-check';
import type { HTTPMethods } from 'fastify';
import { basic, REALM } from '../helpers/server.js';
import { bodyFor, bodyKind, contentType, headerValue, junk, paramName, pct, percentGarbage, rawBytes, serialization, serialize, tokenRef, type Pair, type TokenRef } from './arbitraries.js';
import { assertGenuineTokensSurvive, checkAdminError, FINAL_ADDRESS, fuzz, masterAdminToken, reportStats, routedPaths, resolveToken, runs, startFuzzServer, type FuzzServer, type GenuineToken, type Io } from './harness.js';

const METHODS: HTTPMethods[] = ['GET', 'POST', 'PUT', 'DELETE', 'PATCH', 'HEAD', 'OPTIONS', 'TRACE', 'PROPFIND', 'PROPPATCH', 'MKCOL', 'COPY', 'MOVE', 'LOCK', 'UNLOCK', 'SEARCH', 'REPORT', 'MKCALENDAR'];
const method = fc.oneof({ weight: 6, arbitrary: fc.constantFrom<HTTPMethods>('GET', 'POST') }, { weight: 3, arbitrary: fc.constantFrom(...METHODS) });

/** Every path the server serves, with a placeholder for the realm and the interaction id. */
const ROUTES = [
  '/auth/realms/{realm}/protocol/openid-connect/auth',
  '/auth/realms/{realm}/protocol/openid-connect/auth/device',
  '/auth/realms/{realm}/protocol/openid-connect/ext/par/request',
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
  '/auth/realms/{realm}/login-actions/{id}/webauthn',
  '/auth/realms/{realm}/login-actions/{id}/webauthn-register',
  '/auth/realms/{realm}/login-actions/{id}/second-factor',
  '/auth/realms/{realm}/login-actions/{id}/passwordless',
  '/auth/realms/{realm}/login-actions/{id}/broker',
  '/auth/realms/{realm}/login-actions/{id}/link-account',
  '/auth/realms/{realm}/login-actions/{id}/registration',
  '/auth/realms/{realm}/login-actions/{id}/verify-email',
  '/auth/realms/{realm}/protocol/openid-connect/registrations',
  '/auth/realms/{realm}/clients-registrations/openid-connect',
  '/auth/realms/{realm}/clients-registrations/openid-connect/{id}',
  '/auth/realms/{realm}/broker/{id}/endpoint',
  '/auth/realms/{realm}/device',
  '/auth/realms/{realm}/account',
  '/auth/realms/{realm}/account/login',
  '/auth/realms/{realm}/account/otp',
  '/auth/realms/{realm}/account/configure-otp',
  '/auth/realms/{realm}/account/password',
  '/auth/realms/{realm}/account/otp/setup',
  '/auth/realms/{realm}/account/otp/remove',
  '/auth/realms/{realm}/account/webauthn',
  '/auth/realms/{realm}/account/webauthn-register',
  '/auth/realms/{realm}/account/webauthn/setup',
  '/auth/realms/{realm}/account/webauthn/remove',
  '/auth/realms/{realm}/account/second-factor',
  '/auth/resources/webauthn.js',
  '/auth/realms/{realm}/account/recovery-codes',
  '/auth/realms/{realm}/account/revoke',
  '/auth/realms/{realm}/account/sessions/end',
  '/auth/realms/{realm}/account/linked-accounts/remove',
  '/authentication_code',
  '/auth/resources/realmgate.css',
  '/auth/resources/code-page.js',
  '/health/live',
  '/health/ready',
  // The admin API's identity providers and users' links to them (bearer tokens of admins only).
  '/auth/admin/realms/{realm}/identity-provider/instances',
  '/auth/admin/realms/{realm}/identity-provider/instances/{id}',
  '/auth/admin/realms/{realm}/identity-provider/instances/{id}/mappers',
  '/auth/admin/realms/{realm}/identity-provider/instances/{id}/mapper-types',
  '/auth/admin/realms/{realm}/identity-provider/providers/{id}',
  '/auth/admin/realms/{realm}/identity-provider/import-config',
  '/auth/admin/realms/{realm}/users/{id}/federated-identity',
  '/auth/admin/realms/{realm}/users/{id}/federated-identity/oidc',
  // keycloak-admin-client calls added on 2026-11-30: whoami, the user profile, client policies, credentials, flows, keycloak.json.
  '/auth/admin/{realm}/console/whoami',
  '/auth/admin/realms/{realm}/users/profile',
  '/auth/admin/realms/{realm}/client-policies/profiles',
  '/auth/admin/realms/{realm}/client-policies/policies',
  '/auth/admin/realms/{realm}/users/{id}/remove-totp',
  '/auth/admin/realms/{realm}/users/{id}/configured-user-storage-credential-types',
  '/auth/admin/realms/{realm}/authentication/flows',
  '/auth/admin/realms/{realm}/authentication/flows/{id}/executions',
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

/** Client secrets the admin property sends carry this mark: no answer may ever contain it. */
const SECRET_MARK = 'FUZZ-IDP-SECRET';
const IDP_ALIASES = ['corp', 'fz', 'fz.2', 'kc'];
const loopbackIssuer = 'http://127.0.0.1:9';
/** A provider the admin API accepts; the property mutates it (or sends something else entirely). */
const VALID_IDP = { alias: 'fz', providerId: 'oidc', config: { authorizationUrl: `${loopbackIssuer}/auth`, tokenUrl: `${loopbackIssuer}/token`, clientId: 'rg', clientSecret: SECRET_MARK } };
const idpValue = fc.oneof(
  { weight: 4, arbitrary: junk },
  { weight: 2, arbitrary: fc.constantFrom('true', 'false', '', '**********', 'S256', 'plain', 'client_secret_basic', 'private_key_jwt', `${loopbackIssuer}/x`, 'http://idp.example.com/x', 'https://idp.example/x#f', 'ANY', 'FORCE') },
  { weight: 1, arbitrary: fc.oneof(fc.integer(), fc.boolean(), fc.constant(null), fc.array(junk, { maxLength: 2 }), fc.dictionary(junk, junk, { maxKeys: 2 })) },
);
const idpConfigKey = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom('authorizationUrl', 'tokenUrl', 'userInfoUrl', 'jwksUrl', 'logoutUrl', 'clientId', 'clientSecret', 'validateSignature', 'useJwksUrl', 'pkceEnabled', 'pkceMethod', 'clientAuthMethod', 'defaultScope', 'issuer', 'hideOnLoginPage', 'kc.org', 'kc.org.domain', 'syncMode', '__proto__', 'constructor') },
  { weight: 1, arbitrary: junk },
);
const idpRepresentation = fc.record(
  {
    alias: fc.oneof({ weight: 3, arbitrary: fc.constantFrom(...IDP_ALIASES) }, { weight: 1, arbitrary: idpValue }),
    providerId: fc.oneof({ weight: 3, arbitrary: fc.constantFrom('oidc', 'keycloak-oidc') }, { weight: 1, arbitrary: fc.oneof(fc.constantFrom('saml', 'google', 'OIDC'), idpValue) }),
    displayName: idpValue,
    enabled: idpValue,
    trustEmail: idpValue,
    hideOnLogin: idpValue,
    linkOnly: idpValue,
    storeToken: idpValue,
    organizationId: idpValue,
    internalId: idpValue,
    config: fc.oneof({ weight: 4, arbitrary: fc.dictionary(idpConfigKey, idpValue, { maxKeys: 6 }) }, { weight: 1, arbitrary: idpValue }),
  },
  { requiredKeys: [] },
);
/** The valid provider under one of the aliases, changed in a few fields (mostly to values that are valid too). */
const idpMutated = fc
  .record({
    alias: fc.constantFrom(...IDP_ALIASES),
    top: fc.array(
      fc.oneof(
        fc.tuple(fc.constantFrom('enabled', 'trustEmail', 'hideOnLogin', 'linkOnly', 'storeToken'), fc.oneof({ weight: 3, arbitrary: fc.boolean() }, { weight: 1, arbitrary: idpValue })),
        fc.tuple(fc.constantFrom('displayName', 'organizationId', 'internalId', 'providerId'), fc.oneof({ weight: 2, arbitrary: fc.constantFrom('Corp SSO', '', 'keycloak-oidc', 'oidc') }, { weight: 1, arbitrary: idpValue })),
        fc.tuple(fc.constant('alias'), fc.oneof(fc.constantFrom(...IDP_ALIASES), idpValue)),
      ),
      { maxLength: 2 },
    ),
    config: fc.array(fc.tuple(idpConfigKey, idpValue), { maxLength: 2 }),
  })
  .map(({ alias, top, config }) => ({ ...VALID_IDP, alias, ...Object.fromEntries(top), config: { ...VALID_IDP.config, ...Object.fromEntries(config) } }) as unknown);
/** A body for a provider: the valid one changed in a few fields, or anything. */
const idpBody = fc.oneof(
  { weight: 3, arbitrary: idpMutated },
  { weight: 1, arbitrary: idpRepresentation as fc.Arbitrary<unknown> },
  { weight: 1, arbitrary: fc.oneof(junk, fc.integer(), fc.constant(null), fc.array(idpValue, { maxLength: 3 })) as fc.Arbitrary<unknown> },
).map((body) => {
  // Whatever secret is sent carries the mark (the mask aside), so that an echo of it is seen.
  const config = body !== null && typeof body === 'object' ? (body as { config?: unknown }).config : undefined;
  if (config !== null && typeof config === 'object' && typeof (config as Record<string, unknown>).clientSecret === 'string' && (config as Record<string, unknown>).clientSecret !== '**********') {
    (config as Record<string, unknown>).clientSecret = `${SECRET_MARK}-${String((config as Record<string, unknown>).clientSecret).length}`;
  }
  return body;
});
/** import-config's fromUrl: nothing that would reach past this machine (loopback, closed ports) or no URL at all. */
const fromUrl = fc.oneof(
  fc.constantFrom(loopbackIssuer, `${loopbackIssuer}/.well-known/openid-configuration`, 'http://localhost:9', 'http://[::1]:9/', 'http://127.0.0.1:9/a/.well-known/openid-configuration', 'ftp://127.0.0.1/'),
  junk.filter((v) => !/h\s*t\s*t\s*p|\/\//i.test(v)),
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
        // The routes listed above, and every other the server has (a new one is fuzzed as soon as it exists).
        route: fc.constantFrom(...new Set([...ROUTES, ...routedPaths(fs.ts.app)])),
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

    test("admin API, identity providers, with a master admin's token: any representation, alias, user and query", async (t) => {
      const adminToken = await masterAdminToken(fs);
      const deep = (await fs.ts.store.users.findByUsername(REALM, 'deep'))!;
      const base = `/auth/admin/realms/${REALM}`;
      const alias = fc.oneof({ weight: 4, arbitrary: fc.constantFrom(...IDP_ALIASES) }, { weight: 1, arbitrary: junk.map((v) => pct(v)) });
      const op = fc.oneof(
        fc.record({ method: fc.constant<HTTPMethods>('GET'), path: fc.constant('/identity-provider/instances'), query: fc.array(fc.tuple(fc.constantFrom('search', 'briefRepresentation', 'realmOnly', 'first', 'max'), fc.oneof(junk, fc.constantFrom('true', '0', '1', '-1', '5000', '*', '"fz"', 'f*'))), { maxLength: 3 }), body: fc.constant(undefined) }),
        fc.record({ method: fc.constant<HTTPMethods>('POST'), path: fc.constant('/identity-provider/instances'), query: fc.constant([]), body: idpBody }),
        fc.record({ method: fc.constantFrom<HTTPMethods>('GET', 'PUT', 'DELETE'), path: alias.map((a) => `/identity-provider/instances/${a}`), query: fc.constant([]), body: idpBody }),
        fc.record({ method: fc.constant<HTTPMethods>('GET'), path: fc.tuple(alias, fc.constantFrom('mappers', 'mapper-types')).map(([a, x]) => `/identity-provider/instances/${a}/${x}`), query: fc.constant([]), body: fc.constant(undefined) }),
        fc.record({ method: fc.constant<HTTPMethods>('GET'), path: fc.oneof(fc.constantFrom('oidc', 'keycloak-oidc', 'saml'), junk.map((v) => pct(v))).map((id) => `/identity-provider/providers/${id}`), query: fc.constant([]), body: fc.constant(undefined) }),
        fc.record({
          method: fc.constant<HTTPMethods>('POST'),
          path: fc.constant('/identity-provider/import-config'),
          query: fc.constant([]),
          body: fc.oneof(fc.record({ providerId: fc.oneof(fc.constantFrom('oidc', 'keycloak-oidc', 'saml'), idpValue), fromUrl: fc.oneof(fromUrl, fc.integer(), fc.constant(null)) }, { requiredKeys: [] }), junk) as fc.Arbitrary<unknown>,
        }),
        fc.record({
          method: fc.constantFrom<HTTPMethods>('GET', 'POST', 'DELETE'),
          path: fc.tuple(fc.oneof({ weight: 3, arbitrary: fc.constant(deep.id) }, { weight: 1, arbitrary: junk.map((v) => pct(v)) }), alias).map(([u, a]) => `/users/${u}/federated-identity/${a}`),
          query: fc.constant([]),
          body: fc.oneof(fc.record({ userId: fc.oneof(fc.constantFrom('sub-1', 'sub-2'), idpValue), userName: idpValue }, { requiredKeys: [] }), idpValue) as fc.Arbitrary<unknown>,
        }),
      );
      await fuzz(t, fs, 'admin-identity-providers', op, async (o, io) => {
        // A GET of one link is no route: the list is.
        const path = o.method === 'GET' && o.path.startsWith('/users/') ? o.path.replace(/\/[^/]*$/, '') : o.path;
        const url = `${base}${path}${o.query.length > 0 ? `?${serialize(o.query, { modes: ['enc'], garbage: null, garbageAt: 0 })}` : ''}`;
        const withBody = o.method === 'POST' || o.method === 'PUT';
        const payload = withBody && o.body !== undefined ? JSON.stringify(o.body) ?? 'null' : undefined;
        const headers: Record<string, string> = { authorization: `Bearer ${adminToken}`, ...(payload !== undefined ? { 'content-type': 'application/json' } : {}) };
        const res = await io.send({ method: o.method, url, headers, ...(payload !== undefined ? { payload } : {}) });
        const sent = { method: o.method, url, headers, remoteAddress: io.address };
        if (res.body.includes(SECRET_MARK)) io.fail('an answer shows a client secret', sent, res);
        checkAdminError(io, sent, res);
      }, runs(1500));
      // No secret anywhere in what the API lists, and every stored provider still has one.
      const list = await fs.ts.app.inject({ method: 'GET', url: `${base}/identity-provider/instances`, remoteAddress: FINAL_ADDRESS, headers: { authorization: `Bearer ${adminToken}` } });
      if (list.statusCode !== 200 || list.body.includes(SECRET_MARK)) throw new Error(`the final listing: ${list.statusCode} ${list.body.slice(0, 500)}`);
      for (const p of await fs.ts.store.identityProviders.list(REALM)) if (!p.sealedClientSecret) throw new Error(`provider ${p.alias} lost its secret`);
      t.diagnostic(`providers at the end: ${(await fs.ts.store.identityProviders.list(REALM)).map((p) => p.alias).join(', ') || 'none'}`);
    });

    test("admin API, whoami, the user profile, client policies, a user's credentials, the authentication flows and keycloak.json, with a master admin's token: any realm, user, query and body", async (t) => {
      const adminToken = await masterAdminToken(fs);
      const deep = (await fs.ts.store.users.findByUsername(REALM, 'deep'))!;
      const realmSeg = fc.oneof({ weight: 4, arbitrary: fc.constantFrom(REALM, 'master') }, { weight: 1, arbitrary: realm });
      const user = fc.oneof({ weight: 3, arbitrary: fc.constant(deep.id) }, { weight: 1, arbitrary: junk.map((v) => pct(v)) });
      const anyBody = fc.oneof(
        { weight: 2, arbitrary: fc.record({ profiles: fc.oneof(fc.constant([]), fc.array(fc.dictionary(junk, junk, { maxKeys: 2 }), { maxLength: 2 }), idpValue) }, { requiredKeys: [] }) },
        { weight: 2, arbitrary: fc.record({ policies: fc.oneof(fc.constant([]), fc.array(fc.dictionary(junk, junk, { maxKeys: 2 }), { maxLength: 2 }), idpValue) }, { requiredKeys: [] }) },
        { weight: 1, arbitrary: fc.record({ attributes: fc.array(fc.dictionary(junk, idpValue, { maxKeys: 3 }), { maxLength: 2 }), unmanagedAttributePolicy: idpValue }, { requiredKeys: [] }) },
        { weight: 1, arbitrary: idpValue },
      ) as fc.Arbitrary<unknown>;
      const op = fc.oneof(
        fc.record({ method: fc.constant<HTTPMethods>('GET'), path: realmSeg.map((r) => `/auth/admin/${r}/console/whoami`), query: fc.array(fc.tuple(fc.constant('currentRealm'), fc.oneof(fc.constantFrom(REALM, 'master', 'nope', ''), junk)), { maxLength: 2 }), body: fc.constant(undefined) }),
        fc.record({ method: fc.constantFrom<HTTPMethods>('GET', 'PUT', 'POST', 'DELETE'), path: realmSeg.map((r) => `/auth/admin/realms/${r}/users/profile`), query: fc.constant([]), body: anyBody }),
        fc.record({
          method: fc.constantFrom<HTTPMethods>('GET', 'PUT', 'DELETE'),
          path: fc.tuple(realmSeg, fc.constantFrom('profiles', 'policies')).map(([r, k]) => `/auth/admin/realms/${r}/client-policies/${k}`),
          query: fc.array(fc.tuple(fc.constantFrom('include-global-profiles', 'include-global-policies'), fc.oneof(fc.constantFrom('true', 'false', ''), junk)), { maxLength: 2 }),
          body: anyBody,
        }),
        fc.record({ method: fc.constantFrom<HTTPMethods>('GET', 'PUT'), path: fc.tuple(realmSeg, user, fc.constantFrom('remove-totp', 'configured-user-storage-credential-types')).map(([r, u, x]) => `/auth/admin/realms/${r}/users/${u}/${x}`), query: fc.constant([]), body: anyBody }),
        fc.record({
          method: fc.constantFrom<HTTPMethods>('GET', 'POST', 'PUT', 'DELETE'),
          path: fc
            .tuple(realmSeg, fc.oneof(fc.constantFrom('browser', 'direct%20grant', 'forms', 'clients', 'nope'), junk.map((v) => pct(v))), fc.constantFrom('flows', 'flows/{x}', 'flows/{x}/executions', 'flows/{x}/copy', 'flows/{x}/executions/execution', 'executions/{x}', 'executions/{x}/raise-priority', 'config/{x}', 'config-description/{x}', 'authenticator-providers', 'client-authenticator-providers'))
            .map(([r, x, tail]) => `/auth/admin/realms/${r}/authentication/${tail.replace('{x}', x)}`),
          query: fc.constant([]),
          body: anyBody,
        }),
        fc.record({
          method: fc.constantFrom<HTTPMethods>('GET', 'POST'),
          path: fc
            .tuple(realmSeg, fc.oneof(fc.constantFrom('web-app', 'native-app'), junk.map((v) => pct(v))), fc.oneof(fc.constantFrom('keycloak-oidc-keycloak-json', 'keycloak-oidc-keycloak-subsystem'), junk.map((v) => pct(v))))
            .map(([r, c, p]) => `/auth/admin/realms/${r}/clients/${c}/installation/providers/${p}`),
          query: fc.constant([]),
          body: anyBody,
        }),
      );
      await fuzz(t, fs, 'admin-keycloak-calls', op, async (o, io) => {
        const url = `${o.path}${o.query.length > 0 ? `?${serialize(o.query, { modes: ['enc'], garbage: null, garbageAt: 0 })}` : ''}`;
        const withBody = o.method === 'POST' || o.method === 'PUT';
        const payload = withBody && o.body !== undefined ? JSON.stringify(o.body) ?? 'null' : undefined;
        const headers: Record<string, string> = { authorization: `Bearer ${adminToken}`, ...(payload !== undefined ? { 'content-type': 'application/json' } : {}) };
        const res = await io.send({ method: o.method, url, headers, ...(payload !== undefined ? { payload } : {}) });
        const sent = { method: o.method, url, headers, remoteAddress: io.address };
        checkAdminError(io, sent, res);
      }, runs(600));
      // Nothing these calls accept changes anything a later call sees: no client policy was kept.
      const kept = await fs.ts.app.inject({ method: 'GET', url: `/auth/admin/realms/${REALM}/client-policies/policies`, remoteAddress: FINAL_ADDRESS, headers: { authorization: `Bearer ${adminToken}` } });
      if (kept.statusCode !== 200 || kept.body !== '{"policies":[]}') throw new Error(`the final client policies: ${kept.statusCode} ${kept.body.slice(0, 300)}`);
    });

    test('tokens issued before the fuzzing still work', async (t) => {
      reportStats(t, fs);
      await assertGenuineTokensSurvive(fs, genuine);
    });
  });
}
