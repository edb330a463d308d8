import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { SignJWT, exportJWK, generateKeyPair, type CryptoKey } from 'jose';
import { dialects } from '../helpers/db.js';
import { PASSWORD, REALM } from '../helpers/server.js';
import { loginStatus as loginAttempt, runAuthorization, tokenRequest } from '../helpers/flow.js';
import { ADMIN_USERNAME, serviceAccountAdmin, startAdminServer, statusOf, type AdminTestServer } from './helpers.js';

const MASK = '**********';
const ASSERTION_TYPE = 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer';

// keycloak-admin-client 26's realm housekeeping calls, against a real server: clearEvents,
// clearAdminEvents, attackDetection.delAll, the cache resource's four clear-*-cache calls, and
// realms.export (Keycloak's partial export). Each effect is checked where it shows: the events
// listings, the login page, the authorization and token endpoints, the exported document.
for (const dialect of dialects()) {
  describe(`admin API: realm maintenance (${dialect})`, () => {
    let ts: AdminTestServer;
    /** A client's JWKS URL, served here: what it answers is `jwks`. */
    let jwksServer: http.Server;
    let jwksUrl: string;
    let jwks = '{"keys":[]}';
    before(async () => {
      // A cache time of an hour: only a clearing makes a change made behind the server's back visible.
      ts = await startAdminServer({ dialect, config: { cacheTtlMs: 3_600_000 } });
      jwksServer = http.createServer((_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end(jwks));
      await new Promise<void>((r) => jwksServer.listen(0, '127.0.0.1', r));
      jwksUrl = `http://127.0.0.1:${(jwksServer.address() as AddressInfo).port}/jwks`;
      await ts.kc.realms.create({ realm: 'keep', enabled: true });
    });
    after(async () => {
      await new Promise<void>((r) => jwksServer.close(() => r()));
      await ts.close();
    });

    /** One attempt at the login page: 303 when the password is accepted, 200 when not, 429 when locked. */
    const loginStatus = (username: string, password: string, ip: string): Promise<number> => loginAttempt(ts, username, password, ip);
    const adminId = async (): Promise<string> => (await ts.kc.users.find({ realm: 'master', username: ADMIN_USERNAME, exact: true }))[0]!.id!;

    test("clearEvents deletes the realm's events (another realm's stay); the clearing is an admin event naming who", async () => {
      await runAuthorization(ts);
      await assert.rejects(runAuthorization(ts, { password: 'not the password' }), /login failed/);
      const types = (await ts.kc.realms.findEvents({ realm: REALM })).map((e) => e.type);
      assert.ok(types.includes('LOGIN') && types.includes('LOGIN_ERROR'), `real sign-ins were recorded: ${types.join(', ')}`);
      await ts.store.events.record({ id: 'keep-ev', time: Math.floor(ts.clock.nowMs() / 1000), realmId: 'keep', type: 'LOGIN', outcome: 'success', clientId: 'app', userId: 'u', username: 'u', ip: '10.0.0.1' });

      await ts.kc.realms.clearEvents({ realm: REALM });
      assert.deepEqual(await ts.kc.realms.findEvents({ realm: REALM }), []);
      assert.deepEqual((await ts.kc.realms.findEvents({ realm: 'keep' })).map((e) => (e as { id: string }).id), ['keep-ev'], "another realm's events stay");
      const [cleared, ...more] = await ts.kc.realms.findAdminEvents({ realm: REALM, resourcePath: 'events' });
      assert.equal(more.length, 0);
      assert.equal(cleared!.operationType, 'DELETE');
      assert.equal(cleared!.authDetails?.userId, await adminId());
      assert.equal(cleared!.authDetails?.realmId, 'master');
      assert.ok((JSON.parse(cleared!.representation!) as { deletedEvents: number }).deletedEvents >= 2);
      // Events after the clearing are recorded as ever.
      await runAuthorization(ts);
      assert.ok((await ts.kc.realms.findEvents({ realm: REALM })).some((e) => e.type === 'LOGIN'));
    });

    test('clearAdminEvents deletes the admin events; the one left is the clearing itself, with who and how many', async () => {
      await ts.kc.users.create({ realm: REALM, username: 'audited', enabled: true });
      await ts.kc.realms.update({ realm: 'keep' }, { displayName: 'Kept' });
      const before = await ts.kc.realms.findAdminEvents({ realm: REALM, max: 1000 });
      assert.ok(before.length >= 2, 'admin changes were recorded');
      const keep = (await ts.kc.realms.findAdminEvents({ realm: 'keep', max: 1000 })).length;
      assert.ok(keep >= 1);

      await ts.kc.realms.clearAdminEvents({ realm: REALM });
      const after = await ts.kc.realms.findAdminEvents({ realm: REALM, max: 1000 });
      assert.equal(after.length, 1, JSON.stringify(after));
      assert.equal(after[0]!.operationType, 'DELETE');
      assert.equal(after[0]!.resourcePath, 'admin-events');
      assert.equal(after[0]!.authDetails?.userId, await adminId());
      assert.equal((JSON.parse(after[0]!.representation!) as { deletedAdminEvents: number }).deletedAdminEvents, before.length);
      assert.equal((await ts.kc.realms.findAdminEvents({ realm: 'keep', max: 1000 })).length, keep, "another realm's admin events stay");
    });

    test('attackDetection.delAll: users locked by real wrong passwords sign in again at once; an admin event; other realms untouched', async () => {
      const users: Array<{ id: string; name: string; ip: string }> = [];
      for (const [name, ip] of [['locked-one', '10.7.0.1'], ['locked-two', '10.7.0.2']] as const) {
        const { id } = await ts.kc.users.create({ realm: REALM, username: name, enabled: true, credentials: [{ type: 'password', value: PASSWORD, temporary: false }] });
        users.push({ id, name, ip });
        for (let i = 0; i < 5; i++) {
          assert.equal(await loginStatus(name, 'wrong password', ip), 200);
          ts.clock.advance(10);
        }
        assert.equal(await loginStatus(name, PASSWORD, ip), 429, 'locked');
        assert.equal((await ts.kc.attackDetection.findOne({ realm: REALM, id }))?.disabled, true);
      }
      const now = Math.floor(ts.clock.nowMs() / 1000);
      await ts.store.loginFailures.reserve('keep', 'user:someone', now, 3600);

      await ts.kc.attackDetection.delAll({ realm: REALM });
      for (const u of users) {
        const status = await ts.kc.attackDetection.findOne({ realm: REALM, id: u.id });
        assert.equal(status?.disabled, false);
        assert.equal(status?.numFailures, 0);
        assert.equal(await loginStatus(u.name, PASSWORD, u.ip), 303, `${u.name} signs in at once`);
      }
      assert.equal((await ts.store.loginFailures.get('keep', ['user:someone'])).get('user:someone')?.failures, 1, "another realm's counters stay");
      const events = await ts.kc.realms.findAdminEvents({ realm: REALM, resourcePath: 'attack-detection/brute-force/users' });
      assert.equal(events.length, 1);
      assert.equal(events[0]!.operationType, 'DELETE');
      assert.equal(events[0]!.resourceType, 'USER_LOGIN_FAILURE');
    });

    test('clearRealmCache: a change made directly in the database shows at once (and not before)', async () => {
      const db = ts.store.db.kysely;
      const setEnabled = (v: number) => db.updateTable('clients').set({ enabled: v }).where('realm_id', '=', REALM).where('client_id', '=', ts.client.id).execute();
      assert.ok((await runAuthorization(ts)).code, 'the client is cached');
      await setEnabled(0);
      assert.ok((await runAuthorization(ts)).code, 'the cached client is still used');
      await ts.kc.cache.clearRealmCache({ realm: REALM });
      await assert.rejects(runAuthorization(ts), 'the disabled client is read from the database');
      await setEnabled(1);
      await assert.rejects(runAuthorization(ts), 'the disabled client is cached in turn');
      await ts.kc.cache.clearRealmCache({ realm: REALM });
      assert.ok((await runAuthorization(ts)).code);
      const events = await ts.kc.realms.findAdminEvents({ realm: REALM, resourcePath: 'clear-realm-cache' });
      assert.equal(events.length, 2);
      assert.deepEqual([...new Set(events.map((e) => `${e.operationType} ${e.resourceType}`))], ['ACTION REALM']);
    });

    test("clearKeysCache: a client's keys replaced at its JWKS URL are fetched again; clearUserCache and clearCrlCache answer 204", async () => {
      const a = await generateKeyPair('RS256', { extractable: true });
      const b = await generateKeyPair('RS256', { extractable: true });
      const publish = async (k: { publicKey: CryptoKey }): Promise<void> => {
        jwks = JSON.stringify({ keys: [{ ...(await exportJWK(k.publicKey)), kid: 'k1', use: 'sig', alg: 'RS256' }] });
      };
      await publish(a);
      await ts.kc.clients.create({
        realm: REALM,
        clientId: 'remote-jwt',
        clientAuthenticatorType: 'client-jwt',
        serviceAccountsEnabled: true,
        standardFlowEnabled: false,
        attributes: { 'use.jwks.url': 'true', 'jwks.url': jwksUrl, 'token.endpoint.auth.signing.alg': 'RS256' },
      });
      const issuer = `${ts.baseUrl}/auth/realms/${REALM}`;
      const grant = async (key: CryptoKey): Promise<number> => {
        const t = Math.floor(ts.clock.nowMs() / 1000);
        const jwt = await new SignJWT({ iss: 'remote-jwt', sub: 'remote-jwt', aud: issuer, iat: t, exp: t + 60, jti: crypto.randomUUID() }).setProtectedHeader({ alg: 'RS256', kid: 'k1' }).sign(key);
        return (await tokenRequest(ts, { grant_type: 'client_credentials', client_assertion_type: ASSERTION_TYPE, client_assertion: jwt })).statusCode;
      };
      assert.equal(await grant(a.privateKey), 200);
      await publish(b);
      assert.equal(await grant(b.privateKey), 401, 'the cached key k1 is the old one');
      await ts.kc.cache.clearKeysCache({ realm: REALM });
      assert.equal(await grant(b.privateKey), 200, 'the keys were fetched again');
      assert.equal(await grant(a.privateKey), 401);

      await ts.kc.cache.clearUserCache({ realm: REALM });
      await ts.kc.cache.clearCrlCache({ realm: REALM });
      const paths = (await ts.kc.realms.findAdminEvents({ realm: REALM, operationTypes: 'ACTION', max: 100 })).map((e) => e.resourcePath);
      for (const p of ['clear-keys-cache', 'clear-user-cache', 'clear-crl-cache']) assert.ok(paths.includes(p), `${p} recorded`);
    });

    test('realms.export: secrets masked, clients and groups/roles only when asked, no users; it imports back with partialImport (masked secrets skipped)', async () => {
      const secrets = { smtp: 's3cret-smtp-pw', idp: 'idp-s3cret-value', ldap: 'ldap-bind-s3cret' };
      await ts.kc.realms.update({ realm: REALM }, { smtpServer: { host: '127.0.0.1', port: '2525', from: 'noreply@example.com', auth: 'true', user: 'mailer', password: secrets.smtp } });
      const base = 'http://127.0.0.1:9';
      await ts.kc.identityProviders.create({
        realm: REALM,
        alias: 'corp',
        providerId: 'oidc',
        enabled: true,
        config: { issuer: base, authorizationUrl: `${base}/auth`, tokenUrl: `${base}/token`, jwksUrl: `${base}/jwks`, validateSignature: 'true', useJwksUrl: 'true', clientId: 'rg', clientSecret: secrets.idp, clientAuthMethod: 'client_secret_post' },
      });
      await ts.kc.components.create({
        realm: REALM,
        name: 'corp-ldap',
        providerId: 'ldap',
        providerType: 'org.keycloak.storage.UserStorageProvider',
        parentId: REALM,
        config: { connectionUrl: ['ldap://127.0.0.1:1'], usersDn: ['ou=people,dc=example,dc=org'], bindDn: ['cn=admin,dc=example,dc=org'], bindCredential: [secrets.ldap], editMode: ['READ_ONLY'], vendor: ['other'], usernameLDAPAttribute: ['uid'], rdnLDAPAttribute: ['uid'], uuidLDAPAttribute: ['entryUUID'], userObjectClasses: ['inetOrgPerson'], searchScope: ['1'] },
      });
      await ts.kc.roles.create({ realm: REALM, name: 'auditor' });
      await ts.kc.groups.create({ realm: REALM, name: 'staff' });
      const { value: clientSecret } = await ts.kc.clients.generateNewClientSecret({ realm: REALM, id: ts.client.id });
      ts.client.secret = clientSecret!;

      const noSecretIn = (rep: object, what: string): void => {
        const text = JSON.stringify(rep);
        for (const s of [...Object.values(secrets), clientSecret!]) assert.ok(!text.includes(s), `${what}: a secret in clear`);
        assert.ok(!/"d":"/.test(text), `${what}: no private key`);
      };
      const plain = (await ts.kc.realms.export({ realm: REALM })) as Record<string, unknown>;
      noSecretIn(plain, 'no flags');
      assert.equal(plain.realm, REALM);
      for (const k of ['clients', 'roles', 'groups', 'users']) assert.equal(plain[k], undefined, `no ${k} unless asked`);
      assert.equal((plain.smtpServer as Record<string, string>).password, MASK);
      assert.equal((plain.identityProviders as Array<{ alias: string; config: Record<string, string> }>).find((p) => p.alias === 'corp')!.config.clientSecret, MASK);
      const ldap = (plain.components as Record<string, Array<{ name: string; config: Record<string, string[]> }>>)['org.keycloak.storage.UserStorageProvider']!.find((c) => c.name === 'corp-ldap')!;
      assert.deepEqual(ldap.config.bindCredential, [MASK]);
      assert.ok(Array.isArray(plain.clientScopes) && plain.clientScopes.length > 0, 'client scopes always come');

      const full = (await ts.kc.realms.export({ realm: REALM, exportClients: true, exportGroupsAndRoles: true })) as Record<string, unknown>;
      noSecretIn(full, 'both flags');
      const clients = full.clients as Array<{ clientId: string; secret?: string; publicClient: boolean }>;
      assert.equal(clients.find((c) => c.clientId === ts.client.id)!.secret, MASK);
      assert.ok(clients.some((c) => c.clientId === 'native-app'));
      assert.ok((full.roles as { realm: Array<{ name: string }> }).realm.some((r) => r.name === 'auditor'));
      assert.ok((full.groups as Array<{ name: string }>).some((g) => g.name === 'staff'));
      const users = (full.users ?? []) as Array<{ username: string; serviceAccountClientId?: string }>;
      assert.ok(users.every((u) => u.serviceAccountClientId !== undefined), `only service accounts: ${users.map((u) => u.username).join(', ')}`);
      assert.ok(users.some((u) => u.serviceAccountClientId === 'remote-jwt'), "the clients' service accounts come with them");

      const clientsOnly = (await ts.kc.realms.export({ realm: REALM, exportClients: true, exportGroupsAndRoles: false })) as Record<string, unknown>;
      assert.ok(Array.isArray(clientsOnly.clients));
      assert.equal(clientsOnly.roles, undefined);
      assert.equal(clientsOnly.groups, undefined);
      const rolesOnly = (await ts.kc.realms.export({ realm: REALM, exportClients: false, exportGroupsAndRoles: true })) as Record<string, unknown>;
      assert.equal(rolesOnly.clients, undefined);
      assert.ok((rolesOnly.groups as Array<{ name: string }>).some((g) => g.name === 'staff'));

      // Back in through partialImport, into a realm of its own: the public client comes; the confidential
      // one's secret is masked, so it is skipped, saying why.
      await ts.kc.realms.create({ realm: 'copy', enabled: true });
      const result = await ts.kc.realms.partialImport({ realm: 'copy', rep: { ...full, ifResourceExists: 'FAIL' } as never });
      const byName = new Map(result.results!.map((r) => [`${r.resourceType} ${r.resourceName}`, r as { action?: string; reason?: string }]));
      assert.equal(byName.get('CLIENT native-app')?.action, 'ADDED');
      assert.equal(byName.get(`CLIENT ${ts.client.id}`)?.action, 'SKIPPED');
      assert.match(byName.get(`CLIENT ${ts.client.id}`)?.reason ?? '', /masked/);
      assert.equal(byName.get('IDP corp')?.action, 'SKIPPED', 'the identity provider with the masked client secret');
      assert.match(byName.get('IDP corp')?.reason ?? '', /masked/);
      assert.ok(await ts.kc.clients.findOne({ realm: 'copy', id: 'native-app' }));
      // And as a whole realm (POST /admin/realms with the representation, the CLI's realm import): the same.
      await ts.kc.realms.create({ ...full, realm: 'copy-whole', id: 'copy-whole' } as never);
      assert.ok(await ts.kc.clients.findOne({ realm: 'copy-whole', id: 'native-app' }));
      assert.equal(await ts.kc.clients.findOne({ realm: 'copy-whole', id: ts.client.id }), null, 'the client with the masked secret is not made');
      assert.ok((await ts.kc.groups.find({ realm: 'copy-whole' })).some((g) => g.name === 'staff'));
    });

    test('odd input is a 4xx, never a 500; a missing realm is 404', async () => {
      const token = await ts.kc.getAccessToken();
      const call = async (method: string, path: string, body?: string): Promise<number> =>
        (await fetch(`${ts.baseUrl}/auth/admin/realms/${path}`, { method, headers: { authorization: `Bearer ${token}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) }, ...(body !== undefined ? { body } : {}) })).status;
      assert.equal(await call('POST', `${REALM}/partial-export?exportClients=${'x'.repeat(100)}`), 400);
      assert.equal(await call('POST', `${REALM}/partial-export?exportClients=true&exportClients=false`), 400);
      assert.equal(await call('POST', `${REALM}/partial-export?exportClients=YES`), 200, 'anything but true is false, as Keycloak reads a Boolean');
      assert.equal(await call('DELETE', `${REALM}/events`, '{not json'), 400);
      assert.equal(await call('POST', `${REALM}/clear-realm-cache`, '[1,2]'), 204, 'the body is not read');
      for (const [method, path] of [['DELETE', 'events'], ['DELETE', 'admin-events'], ['DELETE', 'attack-detection/brute-force/users'], ['POST', 'clear-keys-cache'], ['POST', 'partial-export']] as const) {
        assert.equal(await call(method, `no-such-realm/${path}`), 404, path);
        assert.equal(await call(method, `bad%00realm/${path}`), 400, path);
      }
    });

    test('403 without the role each call needs; a refused call changes nothing', async () => {
      const viewer = await serviceAccountAdmin(ts, REALM, 'maintenance-viewer', ['view-realm', 'view-events', 'view-users', 'view-clients']);
      await runAuthorization(ts);
      const eventsBefore = (await ts.kc.realms.findEvents({ realm: REALM })).length;
      assert.ok(eventsBefore > 0);
      const refused: Array<[string, () => Promise<unknown>]> = [
        ['clearEvents', () => viewer.kc.realms.clearEvents({ realm: REALM })],
        ['clearAdminEvents', () => viewer.kc.realms.clearAdminEvents({ realm: REALM })],
        ['delAll', () => viewer.kc.attackDetection.delAll({ realm: REALM })],
        ['clearRealmCache', () => viewer.kc.cache.clearRealmCache({ realm: REALM })],
        ['clearUserCache', () => viewer.kc.cache.clearUserCache({ realm: REALM })],
        ['clearKeysCache', () => viewer.kc.cache.clearKeysCache({ realm: REALM })],
        ['clearCrlCache', () => viewer.kc.cache.clearCrlCache({ realm: REALM })],
        ['export', () => viewer.kc.realms.export({ realm: REALM })],
      ];
      for (const [name, call] of refused) assert.equal(await statusOf(call()), 403, name);
      assert.equal((await ts.kc.realms.findEvents({ realm: REALM })).length, eventsBefore, 'no event was deleted');
      assert.ok((await ts.kc.realms.findAdminEvents({ realm: REALM, max: 1000 })).length > 1, 'no admin event was deleted');
      // Another realm's admin is refused in this one whatever its roles.
      assert.equal(await statusOf(viewer.kc.realms.clearEvents({ realm: 'keep' })), 403);

      // manage-realm exports; clients need view-clients too, groups and roles query-groups (Keycloak 26).
      const exporter = await serviceAccountAdmin(ts, REALM, 'maintenance-exporter', ['manage-realm']);
      assert.equal(await statusOf(exporter.kc.realms.export({ realm: REALM })), 200);
      assert.equal(await statusOf(exporter.kc.realms.export({ realm: REALM, exportClients: true })), 403);
      assert.equal(await statusOf(exporter.kc.realms.export({ realm: REALM, exportGroupsAndRoles: true })), 403);
      await exporter.grant('view-clients');
      await exporter.grant('query-groups');
      assert.equal(await statusOf(exporter.kc.realms.export({ realm: REALM, exportClients: true, exportGroupsAndRoles: true })), 200);
      assert.equal(await statusOf(exporter.kc.cache.clearRealmCache({ realm: REALM })), 200, 'manage-realm clears caches');
    });
  });
}
