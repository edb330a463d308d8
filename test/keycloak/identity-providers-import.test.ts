import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { decodeJwt } from 'jose';
import { dialects } from '../helpers/db.js';
import { basic } from '../helpers/server.js';
import { startAdminServer, statusOf, type AdminTestServer } from '../admin/helpers.js';
import { FetchCookieJar, consentUntil, followRedirects } from '../helpers/fetch-browser.js';
import { startUpstream, type Upstream, type UpstreamAccount } from '../helpers/upstream-provider.js';
import { readExport } from '../../src/admin/keycloak/import-files.js';
import { importKeycloakRealms } from '../../src/admin/operations/realm-import.js';
import { exportRealm } from '../../src/admin/keycloak/export.js';
import { discoverProvider, providerSecret } from '../../src/admin/operations/identity-providers.js';
import { cliActor } from '../../src/admin/operations/common.js';
import type { RealmReport } from '../../src/admin/keycloak/import-report.js';
import { realmOf } from './helpers.js';

const FIXTURE = path.resolve(import.meta.dirname, '../../../shared/fixtures/keycloak/migration-realm-26.6.0.json');
const RP = 'https://rp.example.com/callback';
const APP_SECRET = 'moved-app-secret-4c1d9e27';
const DORA = 'd0d0d0d0-0000-4000-8000-00000000000d';
const actor = { ...cliActor(), via: 'import' as const };

type Json = Record<string, unknown>;
const lineOf = (r: RealmReport, element: string) => {
  const l = r.lines.find((x) => x.element === element);
  assert.ok(l, `no line for ${element}: ${JSON.stringify(r.lines.map((x) => x.element))}`);
  return l;
};

// Identity brokering moves with a Keycloak realm: its OpenID Connect providers (secret sealed, in their
// organizations), users' links to their accounts there (federatedIdentities), and back out in the
// export. The hand-made realm's provider is node-oidc-provider over real HTTP: a user linked in the file
// signs in through it as the same user (the link, not an email, finds them).
for (const dialect of dialects()) {
  describe(`Keycloak import and export: identity providers (${dialect})`, () => {
    let ts: AdminTestServer;
    let up: Upstream;
    let endpoints: Record<string, string>;
    let report: RealmReport;

    /** A realm as Keycloak exports it, its provider `corp` the upstream. */
    function movedRealm(): Json {
      const oidc = (alias: string, config: Record<string, string> = {}, more: Json = {}): Json => ({
        alias,
        providerId: 'oidc',
        enabled: true,
        trustEmail: false,
        storeToken: false,
        addReadTokenRoleOnCreate: false,
        authenticateByDefault: false,
        linkOnly: false,
        firstBrokerLoginFlowAlias: 'first broker login',
        config: { authorizationUrl: 'https://sso.partner.example/auth', tokenUrl: 'https://sso.partner.example/token', clientId: `${alias}-client`, clientSecret: `${alias}-secret`, clientAuthMethod: 'client_secret_post', syncMode: 'IMPORT', ...config },
        ...more,
      });
      return {
        realm: 'moved',
        enabled: true,
        organizationsEnabled: true,
        clients: [{ clientId: 'app', publicClient: false, secret: APP_SECRET, redirectUris: [RP], protocol: 'openid-connect' }],
        identityProviders: [
          oidc('corp', { ...endpoints, clientId: up.clientId, clientSecret: up.clientSecret, pkceEnabled: 'true', pkceMethod: 'S256', defaultScope: 'openid email profile', guiOrder: '1' }, { displayName: 'Corp SSO', storeToken: true, firstBrokerLoginFlowAlias: 'custom first login' }),
          // Keycloak before 26 kept "hide on login page" in the config.
          oidc('hidden', { hideOnLoginPage: 'true', 'kc.org.domain': '*.corp.example', 'kc.org.broker.redirect.mode.email-matches': 'true', 'kc.org.excluded.domains': 'lab.corp.example' }, { providerId: 'keycloak-oidc' }),
          { alias: 'saml-idp', providerId: 'saml', enabled: true, config: { singleSignOnServiceUrl: 'https://idp.example/saml' } },
          { alias: 'twitter', providerId: 'twitter', enabled: true, config: { clientId: 'g', clientSecret: 'g-secret' } },
          oidc('vaulted', { clientSecret: '${vault.corp_secret}' }),
          oidc('masked', { clientSecret: '**********' }),
          oidc('no-auth-url', { authorizationUrl: '' }),
          oidc('jwt-auth', { clientAuthMethod: 'private_key_jwt' }),
          oidc('corp', {}, { displayName: 'the second corp' }),
          oidc('typed', {}, { enabled: 'yes' }),
        ],
        identityProviderMappers: [
          { name: 'department', identityProviderAlias: 'corp', identityProviderMapper: 'oidc-user-attribute-idp-mapper', config: { claim: 'dept', 'user.attribute': 'department' } },
          { name: 'staff role', identityProviderAlias: 'corp', identityProviderMapper: 'oidc-role-idp-mapper', config: {} },
          { id: 'kc-mapper-1', name: 'member', identityProviderAlias: 'corp', identityProviderMapper: 'oidc-hardcoded-role-idp-mapper', config: { role: 'member', syncMode: 'FORCE' } },
          { name: 'staff group', identityProviderAlias: 'corp', identityProviderMapper: 'oidc-hardcoded-group-idp-mapper', config: { group: '/staff', syncMode: 'INHERIT' } },
          { name: 'department', identityProviderAlias: 'corp', identityProviderMapper: 'hardcoded-attribute-idp-mapper', config: { attribute: 'x', 'attribute.value': 'y' } },
          { name: 'saml roles', identityProviderAlias: 'corp', identityProviderMapper: 'saml-role-idp-mapper', config: {} },
          { name: 'session note', identityProviderAlias: 'corp', identityProviderMapper: 'hardcoded-user-session-attribute-idp-mapper', config: {} },
          { name: 'ghost group', identityProviderAlias: 'corp', identityProviderMapper: 'oidc-hardcoded-group-idp-mapper', config: { group: '/nowhere' } },
          { name: 'of saml', identityProviderAlias: 'saml-idp', identityProviderMapper: 'oidc-hardcoded-role-idp-mapper', config: { role: 'member' } },
        ],
        roles: { realm: [{ name: 'member' }] },
        groups: [{ name: 'staff', path: '/staff' }],
        organizations: [
          { alias: 'corp-org', name: 'Corp', enabled: true, domains: [{ name: 'corp.example', verified: true }, { name: '*.corp.example', verified: true }], identityProviders: [{ alias: 'hidden' }, { alias: 'ghost' }], members: [] },
        ],
        users: [
          // Keycloak's brokered users have no password: they sign in through the provider.
          { id: DORA, username: 'dora', enabled: true, email: 'dora@moved.example', federatedIdentities: [{ identityProvider: 'corp', userId: 'kc-sub-dora', userName: 'dora.upstream' }, { identityProvider: 'twitter', userId: 'g-1', userName: 'dora-tw' }] },
          { id: 'e0e0e0e0-0000-4000-8000-00000000000e', username: 'eve', enabled: true, federatedIdentities: [{ identityProvider: 'corp', userId: 'kc-sub-dora', userName: 'eve' }] },
          { id: 'f0f0f0f0-0000-4000-8000-00000000000f', username: 'fay', enabled: true, credentials: [{ type: 'password', value: 'fay password 1' }], federatedIdentities: [{ identityProvider: '', userId: 'x' }, { identityProvider: 'hidden', userId: 'h-fay' }] },
          { id: '90909090-0000-4000-8000-000000000009', username: 'gus', enabled: true, federatedIdentities: 'corp' },
          { id: 'a1a1a1a1-0000-4000-8000-0000000000a1', username: 'hal', enabled: true, federatedIdentities: [{ identityProvider: 'nowhere', userId: 'n-1' }] },
        ],
      };
    }

    before(async () => {
      ts = await startAdminServer({ dialect });
      // The redirect URI a provider registered for Keycloak has: /realms/{realm}/broker/{alias}/endpoint.
      up = await startUpstream({ redirectUri: `${ts.baseUrl}/auth/realms/moved/broker/corp/endpoint` });
      endpoints = await discoverProvider(up.issuer);
      report = realmOf(await importKeycloakRealms(ts.store, [movedRealm()], { ifExists: 'fail' }, actor), 'moved');
    });
    after(async () => {
      await up.close();
      await ts.close();
    });

    /** Follows redirects as a browser does, until a page or the client's redirect URI. */
    const follow = (jar: FetchCookieJar, url: URL): Promise<{ url: URL; res: Response }> => followRedirects(jar, url, (u) => u.href.startsWith(RP));

    /** Signs in to `app` of realm moved through the provider (kc_idp_hint) as `account`; the ID token's claims. */
    async function signInThrough(alias: string, account: UpstreamAccount): Promise<Record<string, unknown>> {
      const jar = new FetchCookieJar();
      up.nextAccount = account;
      const q = new URLSearchParams({ client_id: 'app', redirect_uri: RP, response_type: 'code', scope: 'openid', state: 's1', kc_idp_hint: alias });
      const at = await follow(jar, new URL(`/auth/realms/moved/protocol/openid-connect/auth?${q}`, ts.baseUrl));
      const code = (await consentUntil(jar, at, (u) => u.href.startsWith(RP))).searchParams.get('code')!;
      const tokens = await fetch(`${ts.baseUrl}/auth/realms/moved/protocol/openid-connect/token`, {
        method: 'POST',
        headers: { authorization: basic('app', APP_SECRET), 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ grant_type: 'authorization_code', code, redirect_uri: RP }),
      });
      assert.equal(tokens.status, 200);
      return decodeJwt(((await tokens.json()) as { id_token: string }).id_token);
    }

    test("Keycloak's own export: m1..m5 in their organizations with their secrets sealed; gitlab skipped, the realm imported", async () => {
      const fixture = await importKeycloakRealms(ts.store, await readExport(FIXTURE), { ifExists: 'fail' }, actor);
      assert.equal(fixture.failed, false);
      const m = realmOf(fixture, 'Migration');
      const orgs = new Map((await ts.store.organizationAdmin.list('Migration', {})).map((o) => [o.id, o.alias]));
      const providers = await ts.store.identityProviders.list('Migration');
      assert.deepEqual(providers.map((p) => p.alias), ['m1-acme-idp', 'm2-acme-idp', 'm3-acme-idp', 'm4-acme-idp', 'm5-acme-idp']);
      for (const [i, p] of providers.entries()) {
        const n = i + 1;
        assert.equal(p.providerId, 'oidc');
        assert.equal(p.displayName, `M${n} Acme IdP`);
        assert.equal(orgs.get(p.organizationId!), `m${n}-acme`, `${p.alias} is in its organization`);
        assert.equal(p.config.clientId, `m${n}-client`);
        assert.equal(p.config.authorizationUrl, `https://m${n}-acme.example.com/auth`);
        assert.equal(p.config.clientSecret, undefined, 'the secret is not in the config');
        assert.ok(p.sealedClientSecret && !p.sealedClientSecret.includes(`m${n}-secret`), 'sealed');
        assert.equal(await providerSecret(ts.store, p), `m${n}-secret`);
        assert.match(lineOf(m, `identity provider ${p.alias}`).reason!, new RegExp(`^oidc, of organization m${n}-acme; kc.org.broker.redirect.mode.email-matches: an email of`));
      }
      // Keycloak's organization settings are kept as they came (kc.org.domain a domain of the organization, or ANY).
      assert.equal(providers[0]!.config['kc.org.domain'], 'acme.com');
      assert.equal(providers[2]!.config['kc.org.excluded.domains'], 'internal.example-m3.com');
      assert.equal(lineOf(m, 'organization m1-acme').outcome, 'imported');
      const m2 = realmOf(fixture, 'Migration2');
      assert.equal(m2.status, 'imported');
      // Keycloak's GitLab provider, exported with its client id and secret only: GitLab.com's endpoints
      // and Keycloak's scope for it (openid read_user).
      assert.equal(lineOf(m2, 'identity provider gitlab').outcome, 'imported', JSON.stringify(lineOf(m2, 'identity provider gitlab')));
      const gitlab = (await ts.store.identityProviders.list('Migration2')).map((p) => [p.alias, p.providerId, p.config.authorizationUrl, p.config.tokenUrl, p.config.userInfoUrl, p.config.defaultScope, p.hideOnLogin, p.config.syncMode]);
      assert.deepEqual(gitlab, [['gitlab', 'gitlab', 'https://gitlab.com/oauth/authorize', 'https://gitlab.com/oauth/token', 'https://gitlab.com/oauth/userinfo', 'openid read_user', true, 'LEGACY']]);
    });

    test('a hand-made export: each provider imported, mapped or skipped with the reason', async () => {
      assert.equal(report.status, 'imported', report.reason);
      const corp = lineOf(report, 'identity provider corp');
      assert.equal(corp.outcome, 'mapped');
      assert.match(corp.reason!, /^oidc; storeToken true: Realmgate does not store the provider's tokens.*first login flow "custom first login" is not run/);
      const hidden = lineOf(report, 'identity provider hidden');
      assert.match(hidden.reason!, /^keycloak-oidc, of organization corp-org; config kc.org.domain "\*\.corp\.example" left out: not a domain organization corp-org has here/);
      const skipped = (alias: string, reason: RegExp): void => {
        const l = report.lines.filter((x) => x.element === `identity provider ${alias}`).at(-1)!;
        assert.equal(l.outcome, 'skipped', alias);
        assert.match(l.reason!, reason, alias);
      };
      skipped('saml-idp', /^a SAML provider: Realmgate brokers to OpenID Connect providers and Keycloak's social providers google, github, gitlab, microsoft, facebook, linkedin-openid-connect, bitbucket only/);
      skipped('twitter', /^providerId "twitter" is not supported/);
      skipped('vaulted', /vault \(\$\{vault\.corp_secret\}\), which Realmgate cannot read: put the secret itself in the file/);
      skipped('masked', /masked \(\*{10}\)/);
      skipped('no-auth-url', /needs config\.authorizationUrl/);
      skipped('jwt-auth', /clientAuthMethod "private_key_jwt" is not supported/);
      skipped('corp', /listed twice/);
      skipped('typed', /enabled must be true or false/);
      // The mappers of the types Realmgate applies move (after the roles and groups they name); the others are reported.
      assert.equal(lineOf(report, 'mappers of identity provider corp').reason, '3 mapper(s): department (oidc-user-attribute-idp-mapper), member (oidc-hardcoded-role-idp-mapper), staff group (oidc-hardcoded-group-idp-mapper); applied at sign-ins through the provider');
      assert.match(lineOf(report, 'mapper staff role of identity provider corp').reason!, /config\.role is required/);
      assert.match(lineOf(report, 'mapper department of identity provider corp').reason!, /a second mapper of this name/);
      assert.match(lineOf(report, 'mapper saml roles of identity provider corp').reason!, /^type "saml-role-idp-mapper" is not one Realmgate applies/);
      assert.match(lineOf(report, 'mapper session note of identity provider corp').reason!, /^type "hardcoded-user-session-attribute-idp-mapper" is not one Realmgate applies/);
      assert.match(lineOf(report, 'mapper ghost group of identity provider corp').reason!, /no group "\/nowhere"/);
      assert.match(lineOf(report, 'mapper of saml of identity provider saml-idp').reason!, /its identity provider was not imported/);
      const mappers = await ts.store.identityProviders.mappers('moved', 'corp');
      assert.deepEqual(mappers.map((m) => [m.name, m.type, m.config]), [
        ['department', 'oidc-user-attribute-idp-mapper', { claim: 'dept', 'user.attribute': 'department' }],
        ['member', 'oidc-hardcoded-role-idp-mapper', { role: 'member', syncMode: 'FORCE' }],
        ['staff group', 'oidc-hardcoded-group-idp-mapper', { group: '/staff', syncMode: 'INHERIT' }],
      ]);
      assert.match(lineOf(report, 'organization corp-org').reason!, /identity provider ghost left out: the file has no identity provider of this alias/);

      const stored = await ts.store.identityProviders.list('moved');
      assert.deepEqual(stored.map((p) => p.alias), ['corp', 'hidden']);
      const [c, h] = stored as [(typeof stored)[0], (typeof stored)[0]];
      assert.equal(c.displayName, 'Corp SSO', 'the first entry of an alias listed twice');
      assert.equal(c.organizationId, null);
      assert.equal(c.config.guiOrder, '1', 'config Realmgate does not act on is kept');
      assert.equal(await providerSecret(ts.store, c), up.clientSecret);
      assert.equal(h.providerId, 'keycloak-oidc');
      assert.equal(h.hideOnLogin, true);
      assert.equal(h.config.hideOnLoginPage, undefined);
      assert.equal(h.config['kc.org.domain'], undefined);
      assert.equal(h.config['kc.org.excluded.domains'], 'lab.corp.example');
      assert.equal(h.organizationId, (await ts.store.organizations.findByAlias('moved', 'corp-org'))!.id);
    });

    test("users' federated identities become links; those that cannot be made are reported, the users imported", async () => {
      const link = await ts.store.identityProviders.findLink('moved', 'corp', 'kc-sub-dora');
      assert.equal(link?.userId, DORA);
      assert.equal(link?.federatedUsername, 'dora.upstream');
      assert.deepEqual((await ts.store.identityProviders.links(DORA)).map((l) => l.identityProvider), ['corp']);
      // Dora has no password and a link: no "cannot sign in" note.
      assert.equal(lineOf(report, 'user dora').outcome, 'imported');
      assert.match(lineOf(report, 'links to identity provider corp').reason!, /^1 user\(s\) linked/);
      assert.match(lineOf(report, 'links to identity provider hidden').reason!, /^1 user\(s\) linked/);
      assert.equal((await ts.store.identityProviders.findLink('moved', 'hidden', 'h-fay'))?.userId, 'f0f0f0f0-0000-4000-8000-00000000000f');
      assert.match(lineOf(report, 'links to identity provider twitter').reason!, /^1 user\(s\) \(dora\): the identity provider was not imported \(providerId "twitter" is not supported/);
      assert.match(lineOf(report, 'links to identity provider nowhere').reason!, /^1 user\(s\) \(hal\): the file has no identity provider of this alias/);
      assert.match(lineOf(report, 'user eve identity provider link corp').reason!, /the corp account kc-sub-dora is linked to another user of the file already/);
      assert.deepEqual(await ts.store.identityProviders.links('e0e0e0e0-0000-4000-8000-00000000000e'), []);
      assert.match(lineOf(report, 'user fay identity provider link #1').reason!, /no identityProvider/);
      assert.equal(lineOf(report, 'user gus').outcome, 'skipped');
      assert.match(lineOf(report, 'user gus').reason!, /federatedIdentities must be a list/);
      assert.ok(await ts.store.users.get('a1a1a1a1-0000-4000-8000-0000000000a1'), 'hal is imported without the link');
    });

    test('the linked user signs in through the provider as themselves (the link finds them, not the email); the imported FORCE mappers apply', async () => {
      const claims = await signInThrough('corp', { sub: 'kc-sub-dora', email: 'someone.else@corp.example', preferred_username: 'not-dora' });
      assert.equal(claims.sub, DORA);
      assert.equal(await ts.store.users.findByUsername('moved', 'not-dora'), undefined, 'no new user');
      // member is FORCE: granted at this later sign-in; staff group INHERITs the provider's IMPORT: not joined.
      assert.deepEqual((await ts.store.roles.mappedRoles(DORA)).map((r) => r.name), ['member']);
      assert.deepEqual(await ts.store.groups.userGroupPaths(DORA), []);
    });

    test('export: providers (secrets only with secrets), organizations name theirs, users carry their links; imported back, all is kept', async () => {
      const before = await ts.store.identityProviders.list('moved');
      const plain = await exportRealm(ts.store, 'moved', { withSecrets: false });
      const plainProviders = plain.identityProviders as Array<{ alias: string; config: Record<string, string>; organizationId?: string }>;
      assert.deepEqual(plainProviders.map((p) => [p.alias, p.config.clientSecret]), [['corp', '**********'], ['hidden', '**********']]);
      const full = await exportRealm(ts.store, 'moved', { withSecrets: true });
      const providers = full.identityProviders as Array<{ alias: string; providerId: string; displayName?: string; hideOnLogin: boolean; organizationId?: string; config: Record<string, string> }>;
      const corp = providers.find((p) => p.alias === 'corp')!;
      assert.equal(corp.config.clientSecret, up.clientSecret);
      assert.equal(corp.config.tokenUrl, endpoints.tokenUrl);
      assert.equal(corp.displayName, 'Corp SSO');
      const hidden = providers.find((p) => p.alias === 'hidden')!;
      assert.equal(hidden.hideOnLogin, true);
      assert.equal(hidden.providerId, 'keycloak-oidc');
      assert.equal(hidden.organizationId, undefined, "the organization's id does not travel: the organization names it");
      const org = (full.organizations as Array<{ alias: string; identityProviders: Array<{ alias: string }> }>).find((o) => o.alias === 'corp-org')!;
      assert.deepEqual(org.identityProviders, [{ alias: 'hidden' }]);
      const users = full.users as Array<{ username: string; federatedIdentities?: unknown }>;
      assert.deepEqual(users.find((u) => u.username === 'dora')!.federatedIdentities, [{ identityProvider: 'corp', userId: 'kc-sub-dora', userName: 'dora.upstream' }]);
      assert.equal(users.find((u) => u.username === 'eve')!.federatedIdentities, undefined);
      const exportedMappers = full.identityProviderMappers as Array<{ id: string; name: string; identityProviderAlias: string; identityProviderMapper: string; config: Record<string, string> }>;
      assert.deepEqual(
        exportedMappers.map((m) => [m.identityProviderAlias, m.name, m.identityProviderMapper, m.config]),
        [
          ['corp', 'department', 'oidc-user-attribute-idp-mapper', { claim: 'dept', 'user.attribute': 'department' }],
          ['corp', 'member', 'oidc-hardcoded-role-idp-mapper', { role: 'member', syncMode: 'FORCE' }],
          ['corp', 'staff group', 'oidc-hardcoded-group-idp-mapper', { group: '/staff', syncMode: 'INHERIT' }],
        ],
      );
      assert.ok(exportedMappers.every((m) => typeof m.id === 'string' && m.id !== ''));

      // Without secrets, the providers cannot come back (as Keycloak's masked clients).
      const masked = realmOf(await importKeycloakRealms(ts.store, [{ ...plain, realm: 'moved-masked', users: [] }], { ifExists: 'fail' }, actor), 'moved-masked');
      assert.equal(masked.status, 'imported');
      assert.match(lineOf(masked, 'identity provider corp').reason!, /masked/);
      assert.deepEqual(await ts.store.identityProviders.list('moved-masked'), []);

      const back = realmOf(await importKeycloakRealms(ts.store, [full], { ifExists: 'overwrite' }, actor), 'moved');
      assert.equal(back.status, 'overwritten', back.reason);
      assert.equal(lineOf(back, 'identity provider corp').outcome, 'imported');
      assert.match(lineOf(back, 'identity provider hidden').reason!, /^keycloak-oidc, of organization corp-org/);
      const again = await ts.store.identityProviders.list('moved');
      assert.deepEqual(again.map((p) => p.alias), ['corp', 'hidden']);
      assert.equal(await providerSecret(ts.store, again[0]!), up.clientSecret);
      assert.equal(again[1]!.organizationId, (await ts.store.organizations.findByAlias('moved', 'corp-org'))!.id);
      assert.equal(again[1]!.hideOnLogin, true);
      assert.deepEqual(again.map((p) => [p.config, p.displayName, p.enabled, p.trustEmail, p.linkOnly]), before.map((p) => [p.config, p.displayName, p.enabled, p.trustEmail, p.linkOnly]));
      assert.equal((await ts.store.identityProviders.findLink('moved', 'corp', 'kc-sub-dora'))?.userId, DORA);
      assert.equal((await ts.store.identityProviders.findLink('moved', 'hidden', 'h-fay'))?.userId, 'f0f0f0f0-0000-4000-8000-00000000000f');
      assert.match(lineOf(back, 'mappers of identity provider corp').reason!, /^3 mapper\(s\)/);
      assert.deepEqual((await ts.store.identityProviders.mappers('moved', 'corp')).map((m) => m.name), ['department', 'member', 'staff group']);
      // The secret opens for the provider (sealed anew under the realm and alias) and the link still finds dora.
      const claims = await signInThrough('corp', { sub: 'kc-sub-dora', email: 'dora@moved.example' });
      assert.equal(claims.sub, DORA);
    });

    test('partialImport: identity providers FAIL (409), SKIP or OVERWRITE (the masked secret, the links and the organization kept); users linked', async () => {
      const partner = { alias: 'partner', providerId: 'oidc', enabled: true, config: { authorizationUrl: 'https://partner.example/auth', tokenUrl: 'https://partner.example/token', clientId: 'p', clientSecret: 'partner-secret' } };
      const corp = { alias: 'corp', providerId: 'oidc', displayName: 'Corp renamed', enabled: true, config: { ...endpoints, clientId: up.clientId, clientSecret: '**********', pkceEnabled: 'true' } };
      assert.equal(await statusOf(ts.kc.realms.partialImport({ realm: 'moved', rep: { ifResourceExists: 'FAIL', identityProviders: [corp] } as never })), 409);
      const ivy = { id: 'b1b1b1b1-0000-4000-8000-0000000000b1', username: 'ivy', enabled: true, federatedIdentities: [{ identityProvider: 'partner', userId: 'p-ivy', userName: 'ivy' }, { identityProvider: 'corp', userId: 'kc-sub-dora' }, { identityProvider: 'saml-idp', userId: 's-ivy' }] };
      const skip = await ts.kc.realms.partialImport({ realm: 'moved', rep: { ifResourceExists: 'SKIP', identityProviders: [corp, partner, { alias: 'saml-idp', providerId: 'saml' }], users: [ivy] } as never });
      const results = skip.results as Array<{ action: string; resourceType: string; resourceName: string; reason?: string }>;
      assert.deepEqual(
        results.map((r) => [r.resourceType, r.resourceName, r.action]),
        [
          ['USER', 'ivy', 'ADDED'],
          ['IDP', 'corp', 'SKIPPED'],
          ['IDP', 'partner', 'ADDED'],
          ['IDP', 'saml-idp', 'SKIPPED'],
        ],
      );
      assert.match(results.find((r) => r.resourceName === 'ivy')!.reason!, /^left out: link to corp \(the corp account kc-sub-dora is linked to user dora already\); link to saml-idp \(the identity provider was not imported \(a SAML provider/);
      assert.equal((await ts.store.identityProviders.findLink('moved', 'partner', 'p-ivy'))?.userId, ivy.id);
      assert.equal(await providerSecret(ts.store, (await ts.store.identityProviders.get('moved', 'partner'))!), 'partner-secret');
      assert.equal((await ts.store.identityProviders.get('moved', 'corp'))!.displayName, 'Corp SSO', 'SKIP leaves it');

      const hiddenBefore = (await ts.store.identityProviders.get('moved', 'hidden'))!;
      const over = await ts.kc.realms.partialImport({ realm: 'moved', rep: { ifResourceExists: 'OVERWRITE', identityProviders: [corp, { alias: 'hidden', providerId: 'keycloak-oidc', config: { authorizationUrl: 'https://sso.partner.example/auth', tokenUrl: 'https://sso.partner.example/token', clientId: 'hidden-client', clientSecret: 'new-hidden-secret' } }] } as never });
      assert.deepEqual(over.results.map((r) => [r.resourceName, r.action]), [['corp', 'OVERWRITTEN'], ['hidden', 'OVERWRITTEN']]);
      const c = (await ts.store.identityProviders.get('moved', 'corp'))!;
      assert.equal(c.displayName, 'Corp renamed');
      assert.equal(await providerSecret(ts.store, c), up.clientSecret, 'a masked secret keeps the stored one');
      const h = (await ts.store.identityProviders.get('moved', 'hidden'))!;
      assert.equal(h.id, hiddenBefore.id);
      assert.equal(h.organizationId, hiddenBefore.organizationId, 'it stays in its organization');
      assert.equal(h.hideOnLogin, false, 'replaced: what the body leaves out takes its default');
      assert.equal(await providerSecret(ts.store, h), 'new-hidden-secret');
      assert.equal((await ts.store.identityProviders.findLink('moved', 'hidden', 'h-fay'))?.userId, 'f0f0f0f0-0000-4000-8000-00000000000f', "users' links stay");
      // A user replaced gets the body's links, not its old ones.
      const ivyAgain = await ts.kc.realms.partialImport({ realm: 'moved', rep: { ifResourceExists: 'OVERWRITE', users: [{ ...ivy, federatedIdentities: [{ identityProvider: 'partner', userId: 'p-ivy-2' }] }] } as never });
      assert.deepEqual(ivyAgain.results.map((r) => [r.resourceName, r.action, (r as { reason?: string }).reason]), [['ivy', 'OVERWRITTEN', undefined]]);
      assert.equal(await ts.store.identityProviders.findLink('moved', 'partner', 'p-ivy'), undefined);
      assert.equal((await ts.store.identityProviders.findLink('moved', 'partner', 'p-ivy-2'))?.userId, ivy.id);
      const claims = await signInThrough('corp', { sub: 'kc-sub-dora' });
      assert.equal(claims.sub, DORA);
    });
  });
}
