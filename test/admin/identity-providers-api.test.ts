import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { dialects } from '../helpers/db.js';
import { PASSWORD, REALM } from '../helpers/server.js';
import { startUpstream, type Upstream } from '../helpers/upstream-provider.js';
import { providerSecret, SECRET_MASK } from '../../src/admin/operations/identity-providers.js';
import { errorOf, serviceAccountAdmin, startAdminServer, statusOf, type AdminTestServer } from './helpers.js';

/** A small OpenID Connect provider's endpoints on a loopback address (http is accepted there only). */
const endpoints = (base = 'http://127.0.0.1:9999') => ({
  issuer: base,
  authorizationUrl: `${base}/auth`,
  tokenUrl: `${base}/token`,
  jwksUrl: `${base}/jwks`,
  validateSignature: 'true',
  useJwksUrl: 'true',
});

// Keycloak 26's identity providers API and users' federated identities, through
// @keycloak/keycloak-admin-client 26 unchanged, and raw requests for what it does not send.
for (const dialect of dialects()) {
  describe(`admin API: identity providers (${dialect})`, () => {
    let ts: AdminTestServer;
    let up: Upstream;
    /** A document server whose answers each test sets: path -> [status, body]. */
    let docs: http.Server;
    let docsUrl: string;
    const served = new Map<string, [number, unknown]>();

    before(async () => {
      ts = await startAdminServer({ dialect });
      up = await startUpstream({ redirectUri: `${ts.baseUrl}/auth/realms/${REALM}/broker/corp/endpoint` });
      docs = http.createServer((req, res) => {
        const [status, body] = served.get(req.url ?? '') ?? [404, { error: 'not found' }];
        res.writeHead(status, { 'content-type': 'application/json' }).end(typeof body === 'string' ? body : JSON.stringify(body));
      });
      await new Promise<void>((r) => docs.listen(0, '127.0.0.1', r));
      docsUrl = `http://127.0.0.1:${(docs.address() as { port: number }).port}`;
    });
    after(async () => {
      await new Promise<void>((r) => docs.close(() => r()));
      await up.close();
      await ts.close();
    });

    const api = (path: string): string => `${ts.baseUrl}/auth/admin/realms/${REALM}${path}`;
    /** A raw request as the master admin; the status and the JSON body (if any). */
    async function raw(method: string, path: string, body?: unknown, token?: string): Promise<{ status: number; json: Record<string, unknown> | undefined }> {
      const bearer = token ?? (await ts.kc.getAccessToken());
      const res = await fetch(api(path), {
        method,
        headers: { authorization: `Bearer ${bearer}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
        ...(body !== undefined ? { body: typeof body === 'string' ? body : JSON.stringify(body) } : {}),
      });
      const text = await res.text();
      return { status: res.status, json: text ? (JSON.parse(text) as Record<string, unknown>) : undefined };
    }
    const stored = async (alias: string) => (await ts.store.identityProviders.get(REALM, alias))!;

    test('create, read, list, replace and delete a provider; the client secret is never shown', async () => {
      const { id } = await ts.kc.identityProviders.create({
        realm: REALM,
        alias: 'corp',
        displayName: 'Corp SSO',
        providerId: 'oidc',
        enabled: true,
        trustEmail: true,
        config: { ...endpoints(), clientId: 'rg', clientSecret: 's3cret-one', defaultScope: 'openid email', syncMode: 'FORCE' },
      });
      assert.equal(id, 'corp', "the Location's last segment is the alias");
      const rep = await ts.kc.identityProviders.findOne({ realm: REALM, alias: 'corp' });
      assert.ok(rep);
      assert.equal(rep.alias, 'corp');
      assert.equal(rep.displayName, 'Corp SSO');
      assert.equal(rep.providerId, 'oidc');
      assert.equal(rep.enabled, true);
      assert.equal(rep.trustEmail, true);
      assert.match(rep.internalId!, /^[0-9a-f-]{36}$/);
      assert.equal(rep.config!.clientSecret, SECRET_MASK, 'the secret is masked');
      assert.equal(rep.config!.clientId, 'rg');
      assert.equal(rep.config!.syncMode, 'FORCE');
      assert.equal(await providerSecret(ts.store, await stored('corp')), 's3cret-one');
      // Keycloak's getByIdOrAlias: the internal id names it too.
      assert.equal((await ts.kc.identityProviders.findOne({ realm: REALM, alias: rep.internalId! }))!.alias, 'corp');
      // The secret never appears in any answer, nor in the admin event.
      const list = await ts.kc.identityProviders.find({ realm: REALM });
      assert.deepEqual(list.map((p) => p.alias), ['corp']);
      assert.ok(!JSON.stringify(list).includes('s3cret-one'));
      assert.ok(!JSON.stringify(await ts.store.adminEvents.list(REALM)).includes('s3cret-one'));

      // Duplicate alias: 409, as Keycloak.
      assert.equal(await statusOf(ts.kc.identityProviders.create({ realm: REALM, alias: 'corp', providerId: 'oidc', config: { ...endpoints(), clientId: 'x', clientSecret: 'y' } })), 409);

      // PUT is a replacement: the representation read back, with the mask, keeps the secret.
      await ts.kc.identityProviders.update({ realm: REALM, alias: 'corp' }, { ...rep, displayName: 'Corp', enabled: false });
      let now = (await ts.kc.identityProviders.findOne({ realm: REALM, alias: 'corp' }))!;
      assert.equal(now.displayName, 'Corp');
      assert.equal(now.enabled, false);
      assert.equal(now.config!.clientSecret, SECRET_MASK);
      assert.equal(await providerSecret(ts.store, await stored('corp')), 's3cret-one', 'the mask keeps the stored secret');
      // The mask with another token endpoint: refused, since the stored secret would go there (the
      // provider's admin could read it off); with the secret given again, it may move.
      const moved = await errorOf(ts.kc.identityProviders.update({ realm: REALM, alias: 'corp' }, { ...rep, config: { ...rep.config, tokenUrl: 'https://elsewhere.example/token' } }));
      assert.equal(moved.status, 400);
      assert.match(String(moved.body.errorMessage), /clientSecret must be given again .* to move config\.tokenUrl to another host/);
      assert.equal((await errorOf(ts.kc.identityProviders.update({ realm: REALM, alias: 'corp' }, { ...rep, config: { ...rep.config, clientSecret: undefined, tokenUrl: 'https://elsewhere.example/token' } }))).status, 400);
      assert.equal((await stored('corp')).config.tokenUrl, rep.config!.tokenUrl);
      // Another path of the same host (a tenant's, a realm's) is the same receiver: the mask keeps it.
      await ts.kc.identityProviders.update({ realm: REALM, alias: 'corp' }, { ...rep, config: { ...rep.config, tokenUrl: `${new URL(rep.config!.tokenUrl!).origin}/tenant-2/token` } });
      assert.equal(await providerSecret(ts.store, await stored('corp')), 's3cret-one');
      await ts.kc.identityProviders.update({ realm: REALM, alias: 'corp' }, { ...rep, config: { ...rep.config, clientSecret: 'for-elsewhere', tokenUrl: 'https://elsewhere.example/token' } });
      assert.equal(await providerSecret(ts.store, await stored('corp')), 'for-elsewhere');
      // A new secret replaces it; what is left out takes its default.
      await ts.kc.identityProviders.update({ realm: REALM, alias: 'corp' }, { alias: 'corp', providerId: 'oidc', config: { ...endpoints(), clientId: 'rg2', clientSecret: 's3cret-two' } });
      now = (await ts.kc.identityProviders.findOne({ realm: REALM, alias: 'corp' }))!;
      assert.equal(await providerSecret(ts.store, await stored('corp')), 's3cret-two');
      assert.equal(now.displayName, undefined, 'left out: no display name');
      assert.equal(now.enabled, true, 'left out: enabled');
      assert.equal(now.trustEmail, false);
      assert.equal(now.config!.clientId, 'rg2');
      assert.equal(now.config!.syncMode, undefined, 'the config is replaced');
      // The alias cannot change.
      assert.equal(await statusOf(ts.kc.identityProviders.update({ realm: REALM, alias: 'corp' }, { ...now, alias: 'other' })), 400);
      assert.equal(await statusOf(ts.kc.identityProviders.update({ realm: REALM, alias: 'nope' }, { ...now, alias: 'nope' })), 404);

      await ts.kc.identityProviders.del({ realm: REALM, alias: 'corp' });
      assert.equal(await ts.kc.identityProviders.findOne({ realm: REALM, alias: 'corp' }), null);
      assert.equal(await statusOf(ts.kc.identityProviders.del({ realm: REALM, alias: 'corp' })), 404);
      const ops = (await ts.store.adminEvents.list(REALM)).filter((e) => e.resourcePath === 'identity-provider/instances/corp').map((e) => e.operation);
      assert.deepEqual(ops, ['DELETE', 'UPDATE', 'UPDATE', 'UPDATE', 'UPDATE', 'CREATE'], 'the refused updates record nothing');
    });

    test("search, brief representation, realmOnly and paging (Keycloak's query parameters)", async () => {
      const orgs = await ts.kc.organizations.find({ realm: REALM, search: 'acme', exact: true });
      const acme = orgs[0]!.id!;
      for (const [alias, displayName, organizationId] of [
        ['alpha', 'Alpha Login', undefined],
        ['alpine', 'Mountain', undefined],
        ['beta', 'Alpha Two', acme],
      ] as const) {
        await ts.kc.identityProviders.create({ realm: REALM, alias, displayName, providerId: 'keycloak-oidc', ...(organizationId ? { organizationId } : {}), config: { ...endpoints(), clientId: alias, clientSecret: 'x' } });
      }
      const aliases = async (q: Record<string, unknown>) => (await ts.kc.identityProviders.find({ realm: REALM, ...q })).map((p) => p.alias);
      assert.deepEqual(await aliases({}), ['alpha', 'alpine', 'beta']);
      assert.deepEqual(await aliases({ search: 'alpi' }), ['alpine'], 'a prefix of the alias by default');
      assert.deepEqual(await aliases({ search: 'mount' }), ['alpine'], 'or of the display name');
      assert.deepEqual(await aliases({ search: 'alp' }), ['alpha', 'alpine', 'beta']);
      assert.deepEqual(await aliases({ search: 'ALPHA' }), ['alpha', 'beta'], 'case-insensitive, over display names too');
      assert.deepEqual(await aliases({ search: '*two' }), ['beta'], '* is a wildcard');
      assert.deepEqual(await aliases({ search: '"alpha"' }), ['alpha'], 'quoted: exact');
      assert.deepEqual(await aliases({ search: '"alp"' }), []);
      assert.deepEqual(await aliases({ search: 'a.p' }), [], 'no regular expressions');
      assert.deepEqual(await aliases({ realmOnly: true }), ['alpha', 'alpine']);
      assert.deepEqual(await aliases({ first: 1, max: 1 }), ['alpine']);
      const brief = await ts.kc.identityProviders.find({ realm: REALM, briefRepresentation: true } as Record<string, unknown>);
      assert.deepEqual(Object.keys(brief[0]!).sort(), ['alias', 'displayName', 'enabled', 'internalId', 'providerId']);
      const beta = (await ts.kc.identityProviders.findOne({ realm: REALM, alias: 'beta' }))!;
      assert.equal(beta.organizationId, acme);
      // A provider's organization is not changed through this API (Keycloak strips it from a PUT).
      await ts.kc.identityProviders.update({ realm: REALM, alias: 'beta' }, { ...beta, organizationId: undefined, displayName: 'Beta' });
      assert.equal((await ts.kc.identityProviders.findOne({ realm: REALM, alias: 'beta' }))!.organizationId, acme);
      assert.equal((await raw('GET', '/identity-provider/instances?max=5000')).status, 400);
      assert.equal((await raw('GET', '/identity-provider/instances?first=-1')).status, 400);
      for (const alias of ['alpha', 'alpine', 'beta']) await ts.kc.identityProviders.del({ realm: REALM, alias });
    });

    test('bad input is a 400 JSON error naming the problem, never a 500', async () => {
      const base = { providerId: 'oidc', config: { ...endpoints(), clientId: 'c', clientSecret: 's' } };
      const cases: Array<[unknown, RegExp]> = [
        [{ ...base, alias: 'has space' }, /alias/],
        [{ ...base, alias: '' }, /alias/],
        [{ ...base, alias: '../x' }, /alias/],
        [{ ...base, alias: 'a'.repeat(256) }, /alias/],
        [base, /alias is required/],
        [{ ...base, alias: 'x', providerId: 'saml' }, /providerId "saml" is not supported/],
        [{ ...base, alias: 'x', providerId: 42 }, /providerId must be a string/],
        [{ ...base, alias: 'x', config: { ...base.config, clientId: 42 } }, /config\.clientId must be a string/],
        [{ ...base, alias: 'x', config: { ...base.config, validateSignature: true } }, /config\.validateSignature must be a string/],
        [{ ...base, alias: 'x', config: 'nope' }, /config/],
        [{ ...base, alias: 'x', config: { ...base.config, clientSecret: undefined } }, /clientSecret/],
        [{ ...base, alias: 'x', config: { ...base.config, tokenUrl: 'http://idp.example.com/token' } }, /config\.tokenUrl must be an https URL/],
        [{ ...base, alias: 'x', config: { ...base.config, authorizationUrl: 'not a url' } }, /config\.authorizationUrl must be an absolute URL/],
        [{ ...base, alias: 'x', enabled: 'yes' }, /enabled must be true or false/],
        [{ ...base, alias: 'x', storeToken: true }, /storeToken/],
        [{ ...base, alias: 'x', organizationId: 'no-such-org' }, /organizationId/],
        [[base], /body must be object/],
      ];
      for (const [body, message] of cases) {
        const r = await raw('POST', '/identity-provider/instances', body);
        assert.equal(r.status, 400, `${JSON.stringify(body)}: ${JSON.stringify(r.json)}`);
        assert.equal(r.json!.error, 'invalid_request');
        assert.match(String(r.json!.errorMessage), message, JSON.stringify(body));
      }
      for (const text of ['{', 'not json at all', '"bare"', '42']) assert.equal((await raw('POST', '/identity-provider/instances', text)).status, 400, text);
      assert.deepEqual(await ts.kc.identityProviders.find({ realm: REALM }), [], 'nothing was created');
      // Unknown providers and realms.
      assert.equal((await raw('GET', '/identity-provider/instances/nope')).status, 404);
      assert.equal((await raw('PUT', '/identity-provider/instances/nope', { ...base, alias: 'nope' })).status, 404);
      assert.equal((await raw('GET', '/identity-provider/instances/nope/mappers')).status, 404);
      assert.equal((await raw('GET', `/identity-provider/instances/${'x'.repeat(256)}`)).status, 400, 'an alias has at most 255 characters');
      const other = await fetch(`${ts.baseUrl}/auth/admin/realms/no-such-realm/identity-provider/instances`, { headers: { authorization: `Bearer ${await ts.kc.getAccessToken()}` } });
      assert.equal(other.status, 404);
      // A bad PUT changes nothing.
      await ts.kc.identityProviders.create({ realm: REALM, alias: 'keep', ...base });
      const r = await raw('PUT', '/identity-provider/instances/keep', { alias: 'keep', providerId: 'oidc', config: { ...base.config, clientSecret: SECRET_MASK, pkceMethod: 'S512' } });
      assert.equal(r.status, 400);
      assert.match(String(r.json!.errorMessage), /pkceMethod/);
      assert.equal((await stored('keep')).config.pkceMethod, undefined);
      await ts.kc.identityProviders.del({ realm: REALM, alias: 'keep' });
    });

    test("provider types, mappers and mapper types (the console's reads)", async () => {
      assert.deepEqual(await ts.kc.identityProviders.findFactory({ realm: REALM, providerId: 'oidc' }), { id: 'oidc', name: 'OpenID Connect v1.0' });
      assert.deepEqual(await ts.kc.identityProviders.findFactory({ realm: REALM, providerId: 'keycloak-oidc' }), { id: 'keycloak-oidc', name: 'Keycloak OpenID Connect' });
      const saml = await raw('GET', '/identity-provider/providers/saml');
      assert.equal(saml.status, 400, 'Keycloak answers 400 for a provider type it does not have');
      assert.match(String(saml.json!.errorMessage), /saml/);
      await ts.kc.identityProviders.create({ realm: REALM, alias: 'm', providerId: 'oidc', config: { ...endpoints(), clientId: 'c', clientSecret: 's' } });
      assert.deepEqual(await ts.kc.identityProviders.findMappers({ realm: REALM, alias: 'm' }), []);
      assert.deepEqual(Object.keys(await ts.kc.identityProviders.findMapperTypes({ realm: REALM, alias: 'm' })).sort(), [
        'hardcoded-attribute-idp-mapper',
        'oidc-hardcoded-group-idp-mapper',
        'oidc-hardcoded-role-idp-mapper',
        'oidc-role-idp-mapper',
        'oidc-user-attribute-idp-mapper',
      ]);
      await ts.kc.identityProviders.del({ realm: REALM, alias: 'm' });
      const info = await ts.kc.serverInfo.find();
      assert.deepEqual(info.identityProviders, [
        { id: 'oidc', name: 'OpenID Connect v1.0' },
        { id: 'keycloak-oidc', name: 'Keycloak OpenID Connect' },
      ]);
    });

    test("import-config reads a provider's discovery document (node-oidc-provider) by its issuer or its well-known URL", async () => {
      const wellKnown = `${up.issuer}/.well-known/openid-configuration`;
      const config = await ts.kc.identityProviders.importFromUrl({ realm: REALM, providerId: 'oidc', fromUrl: wellKnown });
      const doc = (await (await fetch(wellKnown)).json()) as Record<string, string>;
      assert.equal(config.issuer, up.issuer);
      assert.equal(config.authorizationUrl, doc.authorization_endpoint);
      assert.equal(config.tokenUrl, doc.token_endpoint);
      assert.equal(config.userInfoUrl, doc.userinfo_endpoint);
      assert.equal(config.jwksUrl, doc.jwks_uri);
      assert.equal(config.logoutUrl, doc.end_session_endpoint);
      assert.equal(config.validateSignature, 'true');
      assert.equal(config.useJwksUrl, 'true');
      assert.equal(config.metadataDescriptorUrl, wellKnown, 'as Keycloak, the URL read');
      const byIssuer = await ts.kc.identityProviders.importFromUrl({ realm: REALM, providerId: 'keycloak-oidc', fromUrl: up.issuer });
      assert.deepEqual({ ...byIssuer, metadataDescriptorUrl: wellKnown }, config);

      // The console's next step: create the provider from it, with the client's credentials.
      await ts.kc.identityProviders.create({ realm: REALM, alias: 'corp', providerId: 'oidc', config: { ...config, clientId: up.clientId, clientSecret: up.clientSecret, pkceEnabled: 'true', pkceMethod: 'S256' } });
      assert.equal((await ts.kc.identityProviders.findOne({ realm: REALM, alias: 'corp' }))!.config!.tokenUrl, doc.token_endpoint);
      await ts.kc.identityProviders.del({ realm: REALM, alias: 'corp' });

      // What cannot be imported: 400 with the reason.
      served.set('/.well-known/openid-configuration', [200, { issuer: 'https://elsewhere.example', authorization_endpoint: `${docsUrl}/auth` }]);
      served.set('/broken/.well-known/openid-configuration', [200, 'not json']);
      served.set('/down/.well-known/openid-configuration', [500, { error: 'oops' }]);
      const bad: Array<[unknown, RegExp]> = [
        [{ providerId: 'oidc', fromUrl: docsUrl }, /names the issuer "https:\/\/elsewhere\.example"/],
        [{ providerId: 'oidc', fromUrl: `${docsUrl}/broken` }, /could not read/],
        [{ providerId: 'oidc', fromUrl: `${docsUrl}/down/.well-known/openid-configuration` }, /HTTP 500/],
        [{ providerId: 'oidc', fromUrl: 'http://127.0.0.1:1' }, /could not read/],
        [{ providerId: 'oidc', fromUrl: 'http://idp.example.com' }, /https/],
        [{ providerId: 'oidc', fromUrl: 'not a url' }, /absolute URL/],
        [{ providerId: 'saml', fromUrl: up.issuer }, /providerId "saml" is not supported/],
        [{ providerId: 'oidc' }, /providerId and fromUrl/],
        [{ fromUrl: up.issuer }, /providerId and fromUrl/],
        [{ providerId: 'oidc', fromUrl: 42 }, /providerId and fromUrl/],
        ['[]', /body must be object/],
      ];
      for (const [body, message] of bad) {
        const r = await raw('POST', '/identity-provider/import-config', body);
        assert.equal(r.status, 400, `${JSON.stringify(body)}: ${JSON.stringify(r.json)}`);
        assert.match(String(r.json!.errorMessage), message, JSON.stringify(body));
      }
    });

    test("users' federated identities: link, list, 409 when linked, 404 for an unknown provider, unlink; deleting the provider removes the links", async () => {
      await ts.kc.identityProviders.create({ realm: REALM, alias: 'corp', providerId: 'oidc', config: { ...endpoints(), clientId: 'c', clientSecret: 's' } });
      await ts.kc.identityProviders.create({ realm: REALM, alias: 'other', providerId: 'oidc', config: { ...endpoints(), clientId: 'c', clientSecret: 's' } });
      const { id } = await ts.kc.users.create({ realm: REALM, username: 'fed-user', enabled: true });
      const { id: id2 } = await ts.kc.users.create({ realm: REALM, username: 'fed-user-2', enabled: true });
      assert.deepEqual(await ts.kc.users.listFederatedIdentities({ realm: REALM, id }), []);
      await ts.kc.users.addToFederatedIdentity({ realm: REALM, id, federatedIdentityId: 'corp', federatedIdentity: { userId: 'sub-1', userName: 'fed.user' } });
      await ts.kc.users.addToFederatedIdentity({ realm: REALM, id, federatedIdentityId: 'other', federatedIdentity: { userId: 'sub-9' } });
      assert.deepEqual(await ts.kc.users.listFederatedIdentities({ realm: REALM, id }), [
        { identityProvider: 'corp', userId: 'sub-1', userName: 'fed.user' },
        { identityProvider: 'other', userId: 'sub-9', userName: 'sub-9' },
      ]);
      // As Keycloak's GET of a user in a realm with identity providers: the links in the representation.
      assert.deepEqual((await ts.kc.users.findOne({ realm: REALM, id }))?.federatedIdentities?.map((f) => f.identityProvider), ['corp', 'other']);
      // Already linked to the provider, or the account linked to another user: 409.
      assert.equal(await statusOf(ts.kc.users.addToFederatedIdentity({ realm: REALM, id, federatedIdentityId: 'corp', federatedIdentity: { userId: 'sub-2' } })), 409);
      assert.equal(await statusOf(ts.kc.users.addToFederatedIdentity({ realm: REALM, id: id2, federatedIdentityId: 'corp', federatedIdentity: { userId: 'sub-1' } })), 409);
      assert.equal(await statusOf(ts.kc.users.addToFederatedIdentity({ realm: REALM, id, federatedIdentityId: 'nope', federatedIdentity: { userId: 'sub-1' } })), 404);
      assert.equal(await statusOf(ts.kc.users.addToFederatedIdentity({ realm: REALM, id: 'no-such-user', federatedIdentityId: 'corp', federatedIdentity: { userId: 'sub-3' } })), 404);
      assert.equal(await statusOf(ts.kc.users.listFederatedIdentities({ realm: REALM, id: 'no-such-user' })), 404);
      for (const body of [{}, { userId: '' }, { userId: 42 }, { userId: 'x', userName: 7 }, { userId: 'x'.repeat(300) }, '[]']) {
        const r = await raw('POST', `/users/${id2}/federated-identity/corp`, body);
        assert.equal(r.status, 400, `${JSON.stringify(body)}: ${JSON.stringify(r.json)}`);
        assert.equal(r.json!.error, 'invalid_request');
      }
      const events = (await ts.store.adminEvents.list(REALM)).filter((e) => e.resourcePath === `users/${id}/federated-identity/corp`);
      assert.deepEqual(events.map((e) => e.operation), ['CREATE']);

      await ts.kc.users.delFromFederatedIdentity({ realm: REALM, id, federatedIdentityId: 'other' });
      assert.equal(await statusOf(ts.kc.users.delFromFederatedIdentity({ realm: REALM, id, federatedIdentityId: 'other' })), 404);
      assert.deepEqual((await ts.kc.users.listFederatedIdentities({ realm: REALM, id })).map((f) => f.identityProvider), ['corp']);

      // Deleting a provider removes every user's link to it; the users stay.
      await ts.kc.identityProviders.del({ realm: REALM, alias: 'corp' });
      assert.deepEqual(await ts.kc.users.listFederatedIdentities({ realm: REALM, id }), []);
      assert.equal(await ts.store.identityProviders.findLink(REALM, 'corp', 'sub-1'), undefined);
      assert.equal((await ts.kc.users.findOne({ realm: REALM, id }))!.username, 'fed-user');
      // A provider made again with the alias starts with no links.
      await ts.kc.identityProviders.create({ realm: REALM, alias: 'corp', providerId: 'oidc', config: { ...endpoints(), clientId: 'c', clientSecret: 's' } });
      assert.deepEqual(await ts.kc.users.listFederatedIdentities({ realm: REALM, id }), []);
      await ts.kc.users.addToFederatedIdentity({ realm: REALM, id: id2, federatedIdentityId: 'corp', federatedIdentity: { userId: 'sub-1' } });
      for (const alias of ['corp', 'other']) await ts.kc.identityProviders.del({ realm: REALM, alias });
      for (const u of [id, id2]) await ts.kc.users.del({ realm: REALM, id: u });
    });

    test('the OpenAPI document lists the routes with their parameters', async () => {
      const doc = (await (await fetch(`${ts.baseUrl}/auth/admin/openapi.json`)).json()) as { paths: Record<string, Record<string, { tags: string[]; parameters?: Array<{ in: string; name: string }> }>> };
      const base = '/auth/admin/realms/{realm}';
      const methods = (p: string) => Object.keys(doc.paths[`${base}${p}`] ?? {}).sort();
      assert.deepEqual(methods('/identity-provider/instances'), ['get', 'post']);
      assert.deepEqual(methods('/identity-provider/instances/{alias}'), ['delete', 'get', 'put']);
      assert.deepEqual(methods('/identity-provider/instances/{alias}/mappers'), ['get', 'post']);
      assert.deepEqual(methods('/identity-provider/instances/{alias}/mappers/{id}'), ['delete', 'get', 'put']);
      assert.deepEqual(methods('/identity-provider/instances/{alias}/mapper-types'), ['get']);
      assert.deepEqual(methods('/identity-provider/providers/{provider_id}'), ['get']);
      assert.deepEqual(methods('/identity-provider/import-config'), ['post']);
      assert.deepEqual(methods('/users/{id}/federated-identity'), ['get']);
      assert.deepEqual(methods('/users/{id}/federated-identity/{provider}'), ['delete', 'post']);
      const query = doc.paths[`${base}/identity-provider/instances`]!.get!.parameters!.filter((x) => x.in === 'query').map((x) => x.name);
      assert.deepEqual(query.sort(), ['briefRepresentation', 'first', 'max', 'realmOnly', 'search']);
      assert.deepEqual(doc.paths[`${base}/identity-provider/instances`]!.get!.tags, ['identity-providers']);
    });

    test('view-identity-providers reads, manage-identity-providers changes (realm-admin both); users\' links need view-users / manage-users; others get 403', async () => {
      await ts.kc.identityProviders.create({ realm: REALM, alias: 'perm', providerId: 'oidc', config: { ...endpoints(), clientId: 'c', clientSecret: 's' } });
      const create = (kc: AdminTestServer['kc'], alias: string) => kc.identityProviders.create({ realm: REALM, alias, providerId: 'oidc', config: { ...endpoints(), clientId: 'c', clientSecret: 's' } });
      const { id: userId } = await ts.kc.users.create({ realm: REALM, username: 'perm-user', enabled: true });

      const viewer = await serviceAccountAdmin(ts, REALM, 'idp-viewer', ['view-identity-providers']);
      assert.equal((await viewer.kc.identityProviders.find({ realm: REALM })).length, 1);
      assert.equal((await viewer.kc.identityProviders.findOne({ realm: REALM, alias: 'perm' }))!.config!.clientSecret, SECRET_MASK);
      assert.deepEqual(await viewer.kc.identityProviders.findFactory({ realm: REALM, providerId: 'oidc' }), { id: 'oidc', name: 'OpenID Connect v1.0' });
      assert.equal(await statusOf(create(viewer.kc, 'v')), 403);
      assert.equal(await statusOf(viewer.kc.identityProviders.update({ realm: REALM, alias: 'perm' }, { alias: 'perm', providerId: 'oidc', config: { ...endpoints(), clientId: 'c' } })), 403);
      assert.equal(await statusOf(viewer.kc.identityProviders.del({ realm: REALM, alias: 'perm' })), 403);
      assert.equal(await statusOf(viewer.kc.identityProviders.importFromUrl({ realm: REALM, providerId: 'oidc', fromUrl: up.issuer })), 403);
      assert.equal(await statusOf(viewer.kc.users.listFederatedIdentities({ realm: REALM, id: userId })), 403);
      // 403 before 404: a missing provider is not told apart.
      assert.equal(await statusOf(viewer.kc.identityProviders.del({ realm: REALM, alias: 'nope' })), 403);

      const manager = await serviceAccountAdmin(ts, REALM, 'idp-manager', ['manage-identity-providers']);
      await create(manager.kc, 'made-by-manager');
      assert.equal((await manager.kc.identityProviders.findOne({ realm: REALM, alias: 'made-by-manager' }))!.alias, 'made-by-manager', 'manage implies view');
      assert.equal((await manager.kc.identityProviders.importFromUrl({ realm: REALM, providerId: 'oidc', fromUrl: up.issuer })).issuer, up.issuer);
      await manager.kc.identityProviders.del({ realm: REALM, alias: 'made-by-manager' });
      assert.equal(await statusOf(manager.kc.users.addToFederatedIdentity({ realm: REALM, id: userId, federatedIdentityId: 'perm', federatedIdentity: { userId: 's' } })), 403, 'a link is a change of the user');

      const realmAdmin = await serviceAccountAdmin(ts, REALM, 'idp-realm-admin', ['realm-admin']);
      await create(realmAdmin.kc, 'made-by-realm-admin');
      await realmAdmin.kc.identityProviders.del({ realm: REALM, alias: 'made-by-realm-admin' });

      const users = await serviceAccountAdmin(ts, REALM, 'idp-users', ['view-users']);
      assert.deepEqual(await users.kc.users.listFederatedIdentities({ realm: REALM, id: userId }), []);
      assert.equal(await statusOf(users.kc.users.addToFederatedIdentity({ realm: REALM, id: userId, federatedIdentityId: 'perm', federatedIdentity: { userId: 's' } })), 403);
      assert.equal(await statusOf(users.kc.identityProviders.find({ realm: REALM })), 403);
      await users.grant('manage-users');
      await users.kc.users.addToFederatedIdentity({ realm: REALM, id: userId, federatedIdentityId: 'perm', federatedIdentity: { userId: 's' } });
      await users.kc.users.delFromFederatedIdentity({ realm: REALM, id: userId, federatedIdentityId: 'perm' });

      // A user with no admin role; a token of another realm; no token.
      await ts.store.clients.update(REALM, ts.publicClient.id, { directAccessGrantsEnabled: true });
      const alice = ts.newClient(REALM);
      await alice.auth({ username: 'alice', password: PASSWORD, grantType: 'password', clientId: ts.publicClient.id });
      assert.equal(await statusOf(alice.identityProviders.find({ realm: REALM })), 403);
      assert.equal(await statusOf(create(alice, 'evil')), 403);
      assert.equal(await statusOf(alice.identityProviders.importFromUrl({ realm: REALM, providerId: 'oidc', fromUrl: up.issuer })), 403);
      const anonymous = await fetch(api('/identity-provider/instances'));
      assert.equal(anonymous.status, 401);
      await ts.kc.identityProviders.del({ realm: REALM, alias: 'perm' });
      await ts.kc.users.del({ realm: REALM, id: userId });
    });
  });
}
