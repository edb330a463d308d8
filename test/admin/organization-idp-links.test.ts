import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { dialects } from '../helpers/db.js';
import { REALM } from '../helpers/server.js';
import { routedProvider } from '../../src/admin/operations/identity-providers.js';
import { errorOf, serviceAccountAdmin, startAdminServer, statusOf, type AdminTestServer } from './helpers.js';

/** A small OpenID Connect provider's endpoints on a loopback address (http is accepted there only). */
const endpoints = (base = 'http://127.0.0.1:9999') => ({ issuer: base, authorizationUrl: `${base}/auth`, tokenUrl: `${base}/token`, clientId: 'rg', clientSecret: 'provider-secret' });

// Keycloak 26's organization identity providers (OrganizationIdentityProvidersResource) through
// keycloak-admin-client 26's organizations.listIdentityProviders, linkIdp and unLinkIdp, unchanged.
for (const dialect of dialects()) {
  describe(`admin API: an organization's identity providers (${dialect})`, () => {
    let ts: AdminTestServer;
    let org: string;
    let other: string;
    before(async () => {
      ts = await startAdminServer({ dialect });
      org = (await ts.kc.organizations.create({ realm: REALM, name: 'Links Org', enabled: true, domains: [{ name: 'links.example', verified: true }] })).id;
      other = (await ts.kc.organizations.create({ realm: REALM, name: 'Other Org', enabled: true, domains: [{ name: 'other.example', verified: true }] })).id;
      // corp signs in the organization's users by their email domain once it is the organization's.
      await ts.kc.identityProviders.create({ realm: REALM, alias: 'corp', providerId: 'oidc', config: { ...endpoints(), 'kc.org.domain': 'links.example', 'kc.org.broker.redirect.mode.email-matches': 'true' } });
      await ts.kc.identityProviders.create({ realm: REALM, alias: 'spare', providerId: 'oidc', config: endpoints() });
      await ts.kc.identityProviders.create({ realm: REALM, alias: 'elsewhere', providerId: 'oidc', config: { ...endpoints(), 'kc.org.domain': 'other.example' } });
    });
    after(() => ts.close());

    const api = (path: string): string => `${ts.baseUrl}/auth/admin/realms/${REALM}${path}`;
    async function raw(method: string, path: string, body?: string, token?: string): Promise<{ status: number; json: Record<string, unknown> | undefined }> {
      const res = await fetch(api(path), {
        method,
        headers: { authorization: `Bearer ${token ?? (await ts.kc.getAccessToken())}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
        ...(body !== undefined ? { body } : {}),
      });
      const text = await res.text();
      return { status: res.status, json: text ? (JSON.parse(text) as Record<string, unknown>) : undefined };
    }
    const linked = async (orgId: string): Promise<string[]> => (await ts.kc.organizations.listIdentityProviders({ realm: REALM, orgId })).map((p) => p.alias!).sort();

    test('link, list, read, unlink: the provider follows, and so does the sign-in routing by email domain', async () => {
      assert.deepEqual(await linked(org), []);
      assert.equal(await routedProvider(ts.store, REALM, 'bob@links.example'), undefined, 'no organization: no routing');

      await ts.kc.organizations.linkIdp({ realm: REALM, orgId: org, alias: 'corp' });
      assert.deepEqual(await linked(org), ['corp']);
      const [rep] = await ts.kc.organizations.listIdentityProviders({ realm: REALM, orgId: org });
      assert.equal(rep!.organizationId, org);
      assert.equal(rep!.config!.clientSecret, '**********', 'secrets are masked');
      assert.equal((await ts.kc.identityProviders.findOne({ realm: REALM, alias: 'corp' }))!.organizationId, org);
      assert.equal((await ts.store.identityProviders.get(REALM, 'corp'))!.organizationId, org);
      assert.equal((await routedProvider(ts.store, REALM, 'bob@links.example'))?.alias, 'corp', 'the organization routes its domain to the provider');
      assert.deepEqual(await linked(other), [], 'the other organization has none');

      // The one provider (GET .../identity-providers/{alias}; keycloak-admin-client has no method for it).
      const one = await raw('GET', `/organizations/${org}/identity-providers/corp`);
      assert.equal(one.status, 200);
      assert.equal(one.json!.alias, 'corp');
      assert.equal((await raw('GET', `/organizations/${org}/identity-providers/spare`)).status, 404, 'not the organization\'s');
      assert.equal((await raw('GET', `/organizations/${other}/identity-providers/corp`)).status, 404);

      // By internal id too, as a quoted JSON string (Keycloak's getByIdOrAlias; quotes trimmed).
      const spareId = (await ts.store.identityProviders.get(REALM, 'spare'))!.id;
      assert.equal((await raw('POST', `/organizations/${org}/identity-providers`, JSON.stringify(` ${spareId} `))).status, 204);
      assert.deepEqual(await linked(org), ['corp', 'spare']);

      await ts.kc.organizations.unLinkIdp({ realm: REALM, orgId: org, alias: 'corp' });
      assert.deepEqual(await linked(org), ['spare']);
      const unlinked = (await ts.kc.identityProviders.findOne({ realm: REALM, alias: 'corp' }))!;
      assert.equal(unlinked.organizationId, undefined, 'the provider stays, unlinked');
      assert.equal(unlinked.config!['kc.org.domain'], undefined, 'its organization domain goes with the link (Keycloak)');
      assert.equal(unlinked.config!['kc.org.broker.redirect.mode.email-matches'], 'true');
      assert.equal(await routedProvider(ts.store, REALM, 'bob@links.example'), undefined);
      await ts.kc.organizations.unLinkIdp({ realm: REALM, orgId: org, alias: 'spare' });
      assert.deepEqual(await linked(org), []);

      // Each link and unlink is an UPDATE of the provider, as a change through the provider API.
      const ops = (await ts.store.adminEvents.list(REALM)).filter((e) => e.resourcePath === 'identity-provider/instances/corp').map((e) => e.operation);
      assert.deepEqual(ops, ['UPDATE', 'UPDATE', 'CREATE']);
    });

    test("Keycloak's refusals: 409 linked already, 400 another organization's or unknown, 404 unlinking what is not linked", async () => {
      await ts.kc.organizations.linkIdp({ realm: REALM, orgId: other, alias: 'elsewhere' });
      const again = await errorOf(ts.kc.organizations.linkIdp({ realm: REALM, orgId: other, alias: 'elsewhere' }));
      assert.equal(again.status, 409);
      assert.match(String(again.body.errorMessage), /already associated to the organization/);
      const taken = await errorOf(ts.kc.organizations.linkIdp({ realm: REALM, orgId: org, alias: 'elsewhere' }));
      assert.equal(taken.status, 400);
      assert.match(String(taken.body.errorMessage), /different organization/);
      assert.equal((await ts.store.identityProviders.get(REALM, 'elsewhere'))!.organizationId, other, 'still the first organization\'s');
      const unknown = await errorOf(ts.kc.organizations.linkIdp({ realm: REALM, orgId: org, alias: 'nope' }));
      assert.equal(unknown.status, 400);
      assert.match(String(unknown.body.errorMessage), /not found/);
      // The provider's domain must be one of the organization's (the provider API's own check).
      await ts.kc.organizations.unLinkIdp({ realm: REALM, orgId: other, alias: 'elsewhere' });
      await ts.kc.identityProviders.update({ realm: REALM, alias: 'elsewhere' }, { alias: 'elsewhere', providerId: 'oidc', config: { ...endpoints(), 'kc.org.domain': 'other.example' } });
      const domain = await errorOf(ts.kc.organizations.linkIdp({ realm: REALM, orgId: org, alias: 'elsewhere' }));
      assert.equal(domain.status, 400);
      assert.match(String(domain.body.errorMessage), /kc\.org\.domain/);
      assert.equal((await ts.store.identityProviders.get(REALM, 'elsewhere'))!.organizationId, null);

      assert.equal(await statusOf(ts.kc.organizations.unLinkIdp({ realm: REALM, orgId: org, alias: 'spare' })), 404, 'not linked');
      assert.equal(await statusOf(ts.kc.organizations.unLinkIdp({ realm: REALM, orgId: org, alias: 'nope' })), 404);
      assert.equal(await statusOf(ts.kc.organizations.listIdentityProviders({ realm: REALM, orgId: 'no-such-org' })), 404);
      assert.equal(await statusOf(ts.kc.organizations.linkIdp({ realm: REALM, orgId: 'no-such-org', alias: 'spare' })), 404);
      for (const body of ['{}', '[]', '42', '', '""']) assert.equal((await raw('POST', `/organizations/${org}/identity-providers`, body)).status, 400, JSON.stringify(body));
      assert.deepEqual(await linked(org), []);
    });

    test('view-realm reads the links, manage-realm changes them; others get 403', async () => {
      await ts.kc.organizations.linkIdp({ realm: REALM, orgId: org, alias: 'spare' });
      const viewer = await serviceAccountAdmin(ts, REALM, 'org-idp-viewer', ['view-realm']);
      assert.deepEqual((await viewer.kc.organizations.listIdentityProviders({ realm: REALM, orgId: org })).map((p) => p.alias), ['spare']);
      assert.equal(await statusOf(viewer.kc.organizations.linkIdp({ realm: REALM, orgId: org, alias: 'corp' })), 403);
      assert.equal(await statusOf(viewer.kc.organizations.unLinkIdp({ realm: REALM, orgId: org, alias: 'spare' })), 403);
      const idps = await serviceAccountAdmin(ts, REALM, 'org-idp-idps', ['manage-identity-providers']);
      assert.equal(await statusOf(idps.kc.organizations.listIdentityProviders({ realm: REALM, orgId: org })), 403);
      assert.equal(await statusOf(idps.kc.organizations.linkIdp({ realm: REALM, orgId: org, alias: 'corp' })), 403);
      const manager = await serviceAccountAdmin(ts, REALM, 'org-idp-manager', ['manage-realm']);
      await manager.kc.organizations.linkIdp({ realm: REALM, orgId: org, alias: 'corp' });
      assert.deepEqual(await linked(org), ['corp', 'spare']);
      await manager.kc.organizations.unLinkIdp({ realm: REALM, orgId: org, alias: 'corp' });
      await manager.kc.organizations.unLinkIdp({ realm: REALM, orgId: org, alias: 'spare' });
      assert.deepEqual(await linked(org), []);
    });
  });
}
