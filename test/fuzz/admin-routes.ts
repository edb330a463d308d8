/**
 * Fuzzing of every route of the admin REST API, listed from the admin app itself (an onRoute hook over
 * the same `adminRoutes` the server builds), so that a route added later is fuzzed without anyone adding
 * it here. Each request names a real route with its parameters drawn from the ids, names and aliases of
 * a realm made for the fuzz (or junk), a query, a body shaped like Keycloak's representations (or junk,
 * broken JSON, another content type), and mostly a master admin's token. Every response is checked by
 * harness.ts (no 5xx, no open redirect...) and here: an error is Keycloak's JSON error with a message,
 * and no answer shows a stack trace. At the end, what only GETs reached (realm `test`) is as it was, and
 * the tokens issued before the fuzzing still work.
 *
 * Writes go to the fuzz's own realm `fz` (or to a realm that does not exist): a master admin may do
 * anything there, including what breaks sign-ins, without touching the realm whose tokens must survive.
 * Left out, as they reach other hosts named in the body (each has tests of its own with a local server):
 * the SMTP and LDAP connection tests, the LDAP server capabilities, an LDAP provider's synchronization
 * and an identity provider's import of a discovery document.
 */
import { describe, test, before, after } from 'node:test';
import fc from 'fast-check';
import Fastify, { type HTTPMethods } from 'fastify';
import { adminRoutes } from '../../src/http/admin/routes.js';
import { contentType, junk, paramName, pct, rawBytes, serialize, tokenRef, type Pair, type TokenRef } from './arbitraries.js';
import { assertGenuineTokensSurvive, checkAdminError, FINAL_ADDRESS, fuzz, masterAdminToken, reportStats, resolveToken, runs, startFuzzServer, type FuzzServer, type GenuineToken } from './harness.js';
import { REALM } from '../helpers/server.js';

const FZ = 'fz';
const ADMIN = '/auth/admin/realms';

/** Routes that connect to a host the request names (see above). */
const OUTBOUND = /\/(testSMTPConnection|testLDAPConnection|ldap-server-capabilities|identity-provider\/import-config)$|\/user-storage\/:id(\/mappers\/:mapperId)?\/sync$/;

interface Route {
  method: HTTPMethods;
  url: string;
  params: string[];
}

/** Every route of the admin REST API (not the console's pages), HEAD aside (Fastify adds it to each GET). */
async function adminRestRoutes(fs: FuzzServer): Promise<Route[]> {
  const app = Fastify();
  const list: Route[] = [];
  app.addHook('onRoute', (r) => {
    for (const method of [r.method].flat() as HTTPMethods[]) {
      if (method === 'HEAD') continue;
      list.push({ method, url: r.url, params: [...r.url.matchAll(/:([A-Za-z0-9_-]+)/g)].map((m) => m[1]!) });
    }
  });
  await adminRoutes(app, { services: fs.ts.services });
  await app.ready();
  await app.close();
  return list.filter((r) => (r.url.startsWith(ADMIN) || r.url === '/auth/admin/serverinfo' || r.url.endsWith('/console/whoami')) && !OUTBOUND.test(r.url));
}

interface Sent {
  status: number;
  body: string;
}

/** Makes the fuzz realm and something of each kind in it; returns the ids, names and aliases made. */
async function seedRealm(fs: FuzzServer, token: string): Promise<{ vocab: Map<string, string[]> }> {
  const call = async (method: HTTPMethods, path: string, body?: unknown): Promise<Sent> => {
    const res = await fs.ts.app.inject({
      method,
      url: `${ADMIN}${path}`,
      remoteAddress: FINAL_ADDRESS,
      headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { payload: JSON.stringify(body) }),
    });
    if (res.statusCode >= 300) throw new Error(`seeding the fuzz realm: ${method} ${path}: ${res.statusCode} ${res.body.slice(0, 300)}`);
    return { status: res.statusCode, body: res.body };
  };
  const list = async (path: string): Promise<Array<Record<string, unknown>>> => JSON.parse((await call('GET', path)).body) as Array<Record<string, unknown>>;
  await call('POST', '', { realm: FZ, enabled: true, organizationsEnabled: true });
  await call('POST', `/${FZ}/users`, { username: 'ann', email: 'ann@fz.example', enabled: true, firstName: 'Ann', lastName: 'Fz' });
  await call('POST', `/${FZ}/users`, { username: 'bob', enabled: true, credentials: [{ type: 'password', value: 'bob fuzz password 1', temporary: false }] });
  await call('POST', `/${FZ}/clients`, { clientId: 'fz-app', redirectUris: ['https://app.fz.example/cb'], publicClient: false, serviceAccountsEnabled: true });
  await call('POST', `/${FZ}/clients`, { clientId: 'fz-spa', redirectUris: ['https://spa.fz.example/cb'], publicClient: true, webOrigins: ['+'] });
  await call('POST', `/${FZ}/roles`, { name: 'fz-role', description: 'a role' });
  await call('POST', `/${FZ}/clients/fz-app/roles`, { name: 'fz-client-role' });
  await call('POST', `/${FZ}/groups`, { name: 'fz-group' });
  const [group] = await list(`/${FZ}/groups`);
  await call('POST', `/${FZ}/groups/${String(group!.id)}/children`, { name: 'fz-sub' });
  await call('POST', `/${FZ}/client-scopes`, { name: 'fz-scope', protocol: 'openid-connect' });
  await call('POST', `/${FZ}/organizations`, { name: 'Fz Org', alias: 'fz-org', domains: [{ name: 'fz.example' }] });
  await call('POST', `/${FZ}/identity-provider/instances`, {
    alias: 'fz-idp',
    providerId: 'oidc',
    config: { authorizationUrl: 'http://127.0.0.1:9/auth', tokenUrl: 'http://127.0.0.1:9/token', clientId: 'fz', clientSecret: 'fz secret' },
  });

  // An LDAP provider whose directory refuses at once (port 1 on loopback), and one of its mappers.
  await call('POST', `/${FZ}/components`, {
    name: 'fz-ldap', providerId: 'ldap', providerType: 'org.keycloak.storage.UserStorageProvider', parentId: FZ,
    config: { connectionUrl: ['ldap://127.0.0.1:1'], usersDn: ['ou=people,dc=fz,dc=example'], bindDn: ['cn=admin,dc=fz,dc=example'], bindCredential: ['fz'], editMode: ['READ_ONLY'], vendor: ['other'], usernameLDAPAttribute: ['uid'], rdnLDAPAttribute: ['uid'], uuidLDAPAttribute: ['entryUUID'], userObjectClasses: ['inetOrgPerson'], searchScope: ['1'] },
  });
  const [ldap] = await list(`/${FZ}/components?type=org.keycloak.storage.UserStorageProvider`);
  await call('POST', `/${FZ}/components`, { name: 'fz-phone', providerId: 'user-attribute-ldap-mapper', providerType: 'org.keycloak.storage.ldap.mappers.LDAPStorageMapper', parentId: String(ldap!.id), config: { 'ldap.attribute': ['telephoneNumber'], 'user.model.attribute': ['phone'] } });
  await call('POST', `/${FZ}/clients-initial-access`, { expiration: 3600, count: 5 });

  const ids = (rows: Array<Record<string, unknown>>, ...keys: string[]): string[] => rows.flatMap((r) => keys.map((k) => r[k]).filter((v): v is string => typeof v === 'string'));
  const users = ids(await list(`/${FZ}/users`), 'id', 'username');
  const clients = ids(await list(`/${FZ}/clients`), 'id', 'clientId');
  const roles = ids(await list(`/${FZ}/roles`), 'id', 'name');
  const groups = ids(await list(`/${FZ}/groups?briefRepresentation=false`), 'id', 'name');
  for (const g of await list(`/${FZ}/groups/${String(group!.id)}/children`)) groups.push(String(g.id));
  const scopes = ids(await list(`/${FZ}/client-scopes`), 'id', 'name');
  const orgs = ids(await list(`/${FZ}/organizations`), 'id', 'alias');
  const idps = ids(await list(`/${FZ}/identity-provider/instances`), 'alias', 'internalId');
  const flows = ids(await list(`/${FZ}/authentication/flows`), 'id', 'alias');
  const components = ids(await list(`/${FZ}/components`), 'id', 'name');
  const initialAccess = ids(await list(`/${FZ}/clients-initial-access`), 'id');
  const all = [...users, ...clients, ...roles, ...groups, ...scopes, ...orgs, ...idps, ...flows, ...components, ...initialAccess];
  // Which of the made things each route parameter names, by its name; any other parameter: any of them.
  const vocab = new Map<string, string[]>([
    ['user', users], ['userId', users], ['id', all], ['client', clients], ['clientId', clients], ['roleName', roles], ['roleId', roles],
    ['name', roles], ['role', roles], ['roleContainer', [...clients, FZ]], ['group', groups], ['groupId', groups], ['scopeId', scopes],
    ['org', orgs], ['alias', [...idps, ...flows]], ['provider', ['oidc', 'keycloak-oidc', 'ldap']], ['providerId', ['oidc', 'ldap', 'auth-cookie']],
    ['provider_id', ['oidc', 'keycloak-oidc']], ['flow', flows], ['protocol', ['openid-connect', 'saml']], ['locale', ['en', 'de', 'fr']],
    ['key', ['loginTitle', 'fz-key']], ['attr', ['enabled', 'custom']], ['component', components], ['mapperId', components], ['initialAccess', initialAccess], ['*', all],
  ]);
  return { vocab };
}

/** Keys of Keycloak's representations, so that bodies reach past "unknown field" into what routes read. */
const KEYS = [
  'id', 'name', 'enabled', 'username', 'email', 'firstName', 'lastName', 'emailVerified', 'attributes', 'credentials', 'type', 'value',
  'temporary', 'requiredActions', 'groups', 'clientId', 'secret', 'redirectUris', 'webOrigins', 'publicClient', 'protocol', 'rootUrl',
  'baseUrl', 'description', 'composite', 'composites', 'realm', 'client', 'realmRoles', 'clientRoles', 'subGroups', 'path', 'alias',
  'providerId', 'config', 'protocolMappers', 'protocolMapper', 'consentRequired', 'displayName', 'domains', 'members', 'parentId',
  'subType', 'priority', 'requirement', 'authenticator', 'flowAlias', 'topLevel', 'builtIn', 'users', 'clients', 'roles', 'scope',
  'directAccessGrantsEnabled', 'serviceAccountsEnabled', 'standardFlowEnabled', 'fullScopeAllowed', 'defaultClientScopes',
  'optionalClientScopes', 'notBefore', 'identityProviderAlias', 'userId', 'userName', 'accessTokenLifespan', 'ssoSessionIdleTimeout',
  'bruteForceProtected', 'passwordPolicy', 'supportedLocales', 'defaultLocale', 'eventsEnabled', 'enabledEventTypes',
  'adminEventsEnabled', 'policies', 'profiles', 'ifResourceExists', 'federationLink', 'serviceAccountClientId', 'count', 'expiration',
  'authenticationExecutions', 'requirementChoices', 'index', 'level', 'redirect', 'lifespan', 'realmRolesMapping', 'unmanagedAttributePolicy',
  'validations', 'permissions', 'multivalued', '__proto__', 'constructor',
];

const QUERY_KEYS = [
  'first', 'max', 'search', 'q', 'exact', 'briefRepresentation', 'type', 'client', 'user', 'dateFrom', 'dateTo', 'operationTypes',
  'resourceTypes', 'realmOnly', 'global', 'idpAlias', 'enabled', 'username', 'email', 'emailVerified', 'populateHierarchy',
  'subGroupsCount', 'clientId', 'viewableOnly', 'isOffline', 'direction', 'scope', 'userId', 'audience', 'lifespan', 'redirect_uri',
  'include-global-profiles', 'include-global-policies', 'parent', 'name', 'firstName', 'lastName', 'idpUserId', 'membershipType',
];

/** The kind of thing an `:id` after this path segment names. */
const SEGMENT_KIND: Record<string, string> = {
  users: 'user', clients: 'client', groups: 'group', 'roles-by-id': 'roleId', 'client-scopes': 'scopeId', organizations: 'org',
  flows: 'flow', components: 'component', 'user-storage': 'component', 'clients-initial-access': 'initialAccess',
};

/** The path segment before a route's parameter: `users` for `:id` in `/realms/:realm/users/:id`. */
function segmentBefore(url: string, param: string): string {
  const parts = url.split('/');
  const at = parts.indexOf(`:${param}`);
  return at > 0 ? parts[at - 1]! : '';
}

/** Keys a body must not send to PUT /realms/fz: renaming the realm would leave the rest of the fuzz without one. */
const REALM_IDENTITY = new Set(['realm', 'id']);

type Body = { kind: 'none' } | { kind: 'json'; value: unknown } | { kind: 'raw'; type: string | null; text: string };
type Auth = { kind: 'admin' } | { kind: 'none' } | { kind: 'raw'; value: string } | { kind: 'token'; ref: TokenRef };

export function fuzzSuite(dialect: 'sqlite' | 'postgres'): void {
  describe(`fuzz: every admin REST API route (${dialect})`, () => {
    let fs: FuzzServer;
    let genuine: GenuineToken[];
    before(async () => {
      ({ fs, genuine } = await startFuzzServer(dialect));
    });
    after(() => fs.ts.close());

    test("every admin route, with a master admin's token: real and junk ids, queries, Keycloak-shaped and broken bodies", async (t) => {
      const adminToken = await masterAdminToken(fs);
      const routes = await adminRestRoutes(fs);
      // The list comes from the admin app: were it empty (a change in how routes register), nothing would be fuzzed.
      if (routes.length < 250) throw new Error(`only ${routes.length} admin routes listed`);
      t.diagnostic(`${routes.length} admin routes`);
      const { vocab } = await seedRealm(fs, adminToken);
      const get = (path: string) => fs.ts.app.inject({ method: 'GET', url: path, remoteAddress: FINAL_ADDRESS, headers: { authorization: `Bearer ${adminToken}` } });
      const testRealmBefore = (await get(`${ADMIN}/${REALM}`)).body;

      const known = [...new Set([...vocab.values()].flat())];
      const scalar: fc.Arbitrary<unknown> = fc.oneof(
        { weight: 3, arbitrary: junk },
        { weight: 3, arbitrary: fc.constantFrom(...known, FZ, 'true', 'false', '', '**********', 'openid-connect', 'password', 'REQUIRED', 'DISABLED') },
        { weight: 1, arbitrary: fc.boolean() },
        { weight: 1, arbitrary: fc.oneof(fc.integer(), fc.constantFrom(-1, 0, 2 ** 31, 2 ** 53, 1e308, 0.5)) },
        { weight: 1, arbitrary: fc.constant(null) },
      );
      const key = fc.oneof({ weight: 5, arbitrary: fc.constantFrom(...KEYS) }, { weight: 1, arbitrary: junk });
      const leaf = fc.oneof(
        { weight: 5, arbitrary: scalar },
        { weight: 2, arbitrary: fc.array(scalar, { maxLength: 3 }) },
        { weight: 2, arbitrary: fc.dictionary(key, fc.oneof(scalar, fc.array(scalar, { maxLength: 2 })), { maxKeys: 3 }) },
        { weight: 1, arbitrary: fc.array(fc.dictionary(key, scalar, { maxKeys: 3 }), { maxLength: 2 }) },
      );
      const object = fc.dictionary(key, leaf, { maxKeys: 6 });
      const body: fc.Arbitrary<Body> = fc.oneof(
        { weight: 2, arbitrary: fc.constant<Body>({ kind: 'none' }) },
        { weight: 6, arbitrary: object.map((value): Body => ({ kind: 'json', value })) },
        { weight: 2, arbitrary: fc.array(fc.oneof(object, scalar), { maxLength: 3 }).map((value): Body => ({ kind: 'json', value })) },
        { weight: 1, arbitrary: scalar.map((value): Body => ({ kind: 'json', value })) },
        { weight: 1, arbitrary: fc.tuple(fc.constantFrom('application/json', 'text/plain'), junk).map(([type, text]): Body => ({ kind: 'raw', type, text })) },
        { weight: 1, arbitrary: fc.tuple(contentType, rawBytes).map(([type, text]): Body => ({ kind: 'raw', type, text })) },
      );
      const query = fc.array(fc.tuple(paramName(QUERY_KEYS), fc.oneof(junk, fc.constantFrom('0', '1', '-1', '100000', '2147483648', '1e3', 'true', 'false', 'x', ...known))), { maxLength: 3 });
      const auth = fc.oneof(
        { weight: 12, arbitrary: fc.constant<Auth>({ kind: 'admin' }) },
        { weight: 1, arbitrary: fc.constant<Auth>({ kind: 'none' }) },
        { weight: 1, arbitrary: junk.map((value): Auth => ({ kind: 'raw', value })) },
        { weight: 1, arbitrary: tokenRef.map((ref): Auth => ({ kind: 'token', ref })) },
      );
      const paramValue = (name: string, method: HTTPMethods, before: string): fc.Arbitrary<string> => {
        if (name === 'realm') {
          // GETs may read any realm; anything else goes to the fuzz realm, or one that does not exist.
          const reads = method === 'GET' ? [{ weight: 3, arbitrary: fc.constantFrom(REALM, 'master') }] : [];
          return fc.oneof({ weight: 12, arbitrary: fc.constant(FZ) }, ...reads, { weight: 1, arbitrary: fc.constantFrom('nope', 'FZ', '%2e%2e', 'fz%00') });
        }
        // An `id` takes its kind from the segment before it (users/:id is a user's).
        const words = (name === 'id' ? vocab.get(SEGMENT_KIND[before] ?? '') : undefined) ?? vocab.get(name) ?? vocab.get('*')!;
        return fc.oneof({ weight: 6, arbitrary: fc.constantFrom(...words).map((w) => encodeURIComponent(w)) }, { weight: 2, arbitrary: junk.map((v) => pct(v)) });
      };
      const spec = fc.constantFrom(...routes).chain((route) =>
        fc.record({
          route: fc.constant(route),
          params: fc.tuple(...route.params.map((p) => paramValue(p, route.method, segmentBefore(route.url, p)))),
          wildcard: junk.map((v) => pct(v)),
          query,
          body,
          auth,
        }),
      );
      // Deleting the fuzz realm itself would leave the rest of the run with 404s only.
      const spares = (r: Route, params: string[]): boolean => !(r.method === 'DELETE' && r.url === `${ADMIN}/:realm` && params[0] === FZ);

      await fuzz(t, fs, 'admin-every-route', spec, async (s, io) => {
        const { route } = s;
        if (!spares(route, s.params)) return;
        let i = 0;
        const path = route.url.replace(/:[A-Za-z0-9_-]+/g, () => s.params[i++]!).replace('*', s.wildcard);
        const url = s.query.length > 0 ? `${path}?${serialize(s.query as Pair[], { modes: ['enc'], garbage: null, garbageAt: 0 })}` : path;
        const headers: Record<string, string> = {};
        if (s.auth.kind === 'admin') headers.authorization = `Bearer ${adminToken}`;
        else if (s.auth.kind === 'raw') headers.authorization = s.auth.value;
        else if (s.auth.kind === 'token') headers.authorization = `Bearer ${(await resolveToken(fs, s.auth.ref)).value}`;
        let payload: string | undefined;
        if (route.method !== 'GET' && route.method !== 'DELETE' || s.body.kind !== 'none') {
          if (s.body.kind === 'json') {
            let value = s.body.value;
            if (route.method === 'PUT' && route.url === `${ADMIN}/:realm` && value && typeof value === 'object' && !Array.isArray(value)) {
              value = Object.fromEntries(Object.entries(value).filter(([k]) => !REALM_IDENTITY.has(k)));
            }
            payload = JSON.stringify(value) ?? 'null';
            headers['content-type'] = 'application/json';
          } else if (s.body.kind === 'raw') {
            payload = s.body.text;
            if (s.body.type !== null) headers['content-type'] = s.body.type;
          }
        }
        const res = await io.send({ method: route.method, url, headers, ...(payload !== undefined ? { payload } : {}) });
        const sent = { method: route.method, url, headers, remoteAddress: io.address };
        checkAdminError(io, sent, res);
        if (/\bat [^\n]*\((?:node:|file:|\/)[^)]*:\d+:\d+\)/.test(res.body)) io.fail('an answer shows a stack trace', sent, res);
      }, runs(2000));

      // Only GETs reached the realm whose tokens must survive: it is as it was.
      const after = await get(`${ADMIN}/${REALM}`);
      if (after.statusCode !== 200 || after.body !== testRealmBefore) throw new Error(`realm ${REALM} changed under GETs only:\n${testRealmBefore.slice(0, 400)}\n${after.body.slice(0, 400)}`);
      // The admin's token still works, and so does the API.
      const realms = await get(ADMIN);
      if (realms.statusCode !== 200) throw new Error(`GET ${ADMIN} after the fuzz: ${realms.statusCode} ${realms.body.slice(0, 300)}`);
    });

    test('tokens issued before the fuzzing still work', async (t) => {
      reportStats(t, fs);
      await assertGenuineTokensSurvive(fs, genuine);
    });
  });
}
