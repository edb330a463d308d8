import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { decodeJwt } from 'jose';
import { dialects } from '../helpers/db.js';
import { SKIP, available, startApache, type Apache } from '../helpers/mod-auth-openidc.js';
import { startTestServer, REALM, type TestServer } from '../helpers/server.js';
import { freePort } from '../helpers/built.js';
import { FetchCookieJar, authorizeInBrowser, browse } from '../helpers/fetch-browser.js';
import { parseForm } from '../helpers/flow.js';
import { createClient, createClientScope, createGroup, joinGroup, revokeConsent } from '../../src/admin/operations.js';
import { cliActor } from '../../src/admin/operations/common.js';
import { addMappers } from '../../src/admin/operations/protocol-mappers.js';
import { createUser, updateUser } from '../../src/admin/operations/users.js';
import { createRole, grantRolesByName } from '../../src/admin/operations/roles.js';

// Debian's libapache2-mod-auth-openidc as an independent relying party: Apache protects a page, sends the
// browser to Realmgate, exchanges the code with its defaults (client_secret_basic, discovery, the id
// token checked against the JWKS), keeps the session, and refreshes the access token when asked.
// The guide's group restriction (docs/guide-web-app.md), included after it in the group test.
const GROUPS_EXAMPLE = path.resolve('examples/apache/auth-openidc-groups.conf');
const TENANT_EXAMPLE = path.resolve('examples/apache/auth-openidc-tenant.conf');
const ROLES_EXAMPLE = path.resolve('examples/apache/auth-openidc-roles.conf');

/**
 * A fresh browser signs in through Apache (login, consent, organization at Realmgate), then asks for
 * `page`: its status, 401 when Apache's `Require claim` refuses the user. `scopes`: what Apache must ask for.
 */
async function signInAndOpen(ts: TestServer, apache: Apache, page: string, scopes?: string[]): Promise<number> {
  const jar = new FetchCookieJar();
  const first = await browse(jar, new URL(`${apache.base}/protected/index.html`));
  assert.equal(first.status, 302, apache.log());
  const authUrl = new URL(first.headers.get('location')!);
  if (scopes) assert.deepEqual(authUrl.searchParams.get('scope')?.split(' ').sort(), scopes);
  const landed = await browse(jar, await authorizeInBrowser(ts, authUrl, jar));
  assert.equal(landed.status, 302, apache.log());
  assert.equal((await browse(jar, new URL(`${apache.base}/protected/index.html`))).status, 200, apache.log());
  return (await browse(jar, new URL(`${apache.base}${page}`))).status;
}

for (const dialect of dialects()) {
  test(`mod_auth_openidc: Apache signs the user in through Realmgate, keeps the session and refreshes (${dialect})`, { skip: available ? false : SKIP }, async () => {
    const ts = await startTestServer({ dialect, listen: true });
    const port = await freePort();
    const redirectUri = `http://127.0.0.1:${port}/protected/redirect_uri`;
    const { secret } = await createClient(ts.store, { realmId: REALM, clientId: 'apache-rp', redirectUris: [redirectUri] });
    const apache = await startApache(ts, { id: 'apache-rp', secret: secret! }, port);
    try {
      const jar = new FetchCookieJar();
      const page = new URL(`${apache.base}/protected/index.html`);
      // Apache sends the browser to the authorization endpoint (a 302 with its state cookie).
      const first = await browse(jar, page);
      assert.equal(first.status, 302, apache.log());
      const authUrl = new URL(first.headers.get('location')!);
      assert.equal(`${authUrl.origin}${authUrl.pathname}`, `${ts.baseUrl}/auth/realms/${REALM}/protocol/openid-connect/auth`);
      assert.equal(authUrl.searchParams.get('client_id'), 'apache-rp');
      assert.equal(authUrl.searchParams.get('redirect_uri'), redirectUri);

      // The user signs in, consents and picks the organization; Realmgate sends the browser back with a code.
      const back = await authorizeInBrowser(ts, authUrl, jar);
      assert.equal(`${back.origin}${back.pathname}`, redirectUri);
      assert.ok(back.searchParams.get('code'));
      // Apache exchanges the code (HTTP Basic), checks the id token, starts its session, returns to the page.
      const landed = await browse(jar, back);
      assert.equal(landed.status, 302, `${landed.status} ${await landed.text()}\n${apache.log()}`);
      assert.equal(new URL(landed.headers.get('location')!, apache.base).pathname, '/protected/index.html');
      const content = await browse(jar, page);
      assert.equal(content.status, 200, apache.log());
      assert.equal(await content.text(), 'the protected page\n');

      // What Apache holds: our tokens, issued to it, for this user.
      const info = async (query: string): Promise<Record<string, unknown>> => {
        const res = await browse(jar, new URL(`${apache.base}/protected/redirect_uri?info=json${query}`));
        assert.equal(res.status, 200, apache.log());
        return (await res.json()) as Record<string, unknown>;
      };
      const held = await info('');
      const access = decodeJwt(held.access_token as string);
      assert.equal(access.azp, 'apache-rp');
      assert.equal(access.sub, ts.user.id);
      // The info hook gives the id token's claims, as mod_auth_openidc verified them.
      assert.equal((held.id_token as Record<string, unknown>).aud, 'apache-rp');
      assert.equal((held.id_token as Record<string, unknown>).sub, ts.user.id);
      assert.equal((held.userinfo as Record<string, unknown>).sub, ts.user.id);
      const firstRefresh = held.refresh_token as string;
      assert.ok(firstRefresh);

      // A refresh through mod_auth_openidc's own code (the token is refreshed when older than 0 s). The
      // server's clock is left alone: Apache checks the new id token against the real one.
      const refreshed = await info('&access_token_refresh_interval=0');
      assert.notEqual(refreshed.access_token, held.access_token, apache.log());
      assert.notEqual(refreshed.refresh_token, firstRefresh);
      assert.equal(decodeJwt(refreshed.access_token as string).sub, ts.user.id);
      // The first refresh token was rotated: presented again, it is a reuse.
      const reuse = await fetch(`${ts.baseUrl}/auth/realms/${REALM}/protocol/openid-connect/token`, {
        method: 'POST',
        headers: { authorization: `Basic ${Buffer.from(`apache-rp:${secret}`).toString('base64')}`, 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: firstRefresh }).toString(),
      });
      assert.equal(reuse.status, 400);
      assert.equal(((await reuse.json()) as { error: string }).error, 'invalid_grant');
    } finally {
      await apache.stop();
      await ts.close();
    }
  });
}

for (const dialect of dialects()) {
  test(`mod_auth_openidc: "Require claim groups:" lets in the members of a Realmgate group only (${dialect})`, { skip: available ? false : SKIP }, async () => {
    const ts = await startTestServer({ dialect, listen: true });
    const port = await freePort();
    const redirectUri = `http://127.0.0.1:${port}/protected/redirect_uri`;
    await createClientScope(ts.store, { realmId: REALM, name: 'groups', consentText: 'See the groups you belong to' });
    const { secret } = await createClient(ts.store, { realmId: REALM, clientId: 'apache-rp', redirectUris: [redirectUri], scopes: 'openid profile email core_data groups' });
    const { group: staff } = await createGroup(ts.store, { realmId: REALM, name: 'staff' }, cliActor());
    const { group: admins } = await createGroup(ts.store, { realmId: REALM, name: 'admins' }, cliActor());
    await joinGroup(ts.store, { realmId: REALM, userId: ts.user.id, groupId: staff.id }, cliActor());
    const apache = await startApache(ts, { id: 'apache-rp', secret: secret! }, port, `Include ${GROUPS_EXAMPLE}
`);
    try {
      const signInAndOpenAdmins = (): Promise<number> => signInAndOpen(ts, apache, '/protected/admins/', ['core_data', 'groups', 'openid']);
      // In /staff only: Apache refuses the admins' page (its claim check, on our ID token and UserInfo).
      assert.equal(await signInAndOpenAdmins(), 401, apache.log());
      await joinGroup(ts.store, { realmId: REALM, userId: ts.user.id, groupId: admins.id }, cliActor());
      // The next sign-in asks for consent again, as the browser helper expects.
      await revokeConsent(ts.store, { realmId: REALM, user: ts.user.id, clientId: 'apache-rp' }, cliActor());
      // Now a member: the claim check passes (the page does not exist: 404, past authorization).
      assert.equal(await signInAndOpenAdmins(), 404, apache.log());
    } finally {
      await apache.stop();
      await ts.close();
    }
  });
}

for (const dialect of dialects()) {
  test(`mod_auth_openidc: "Require claim tenant:" and "roles:" read protocol mappers' claims, a user attribute and the realm roles (${dialect})`, { skip: available ? false : SKIP }, async () => {
    const ts = await startTestServer({ dialect, listen: true });
    const port = await freePort();
    const redirectUri = `http://127.0.0.1:${port}/protected/redirect_uri`;
    const { secret } = await createClient(ts.store, { realmId: REALM, clientId: 'apache-rp', redirectUris: [redirectUri] });
    // The guide's mapper: the tenant attribute in the tenant claim (ID token and UserInfo among the defaults).
    await addMappers(ts.store, { realmId: REALM, ownerType: 'client', owner: 'apache-rp' }, [
      { name: 'tenant', protocolMapper: 'oidc-usermodel-attribute-mapper', config: { 'user.attribute': 'tenant', 'claim.name': 'tenant', 'id.token.claim': 'true', 'access.token.claim': 'true', 'userinfo.token.claim': 'true' } },
      // The guide's realm role mapper (realmgate client mapper add ... --type realm-roles --claim roles --multivalued).
      { name: 'roles', protocolMapper: 'oidc-usermodel-realm-role-mapper', config: { 'claim.name': 'roles', multivalued: 'true', 'id.token.claim': 'true', 'access.token.claim': 'true', 'userinfo.token.claim': 'true' } },
    ]);
    await createRole(ts.store, { realmId: REALM, clientId: '', name: 'editor' }, cliActor());
    await updateUser(ts.store, { realmId: REALM, user: ts.user.id, setAttributes: { tenant: ['globex'] } });
    const apache = await startApache(ts, { id: 'apache-rp', secret: secret! }, port, `Include ${TENANT_EXAMPLE}
Include ${ROLES_EXAMPLE}
`);
    try {
      const openEditors = (): Promise<number> => signInAndOpen(ts, apache, '/protected/editors/');
      // Not an editor: Apache refuses the page; an editor passes the claim check (404: no such page).
      assert.equal(await openEditors(), 401, apache.log());
      await grantRolesByName(ts.store, { realmId: REALM, userId: ts.user.id, clientId: '', names: ['editor'] }, cliActor());
      await revokeConsent(ts.store, { realmId: REALM, user: ts.user.id, clientId: 'apache-rp' }, cliActor());
      assert.equal(await openEditors(), 404, apache.log());
      await revokeConsent(ts.store, { realmId: REALM, user: ts.user.id, clientId: 'apache-rp' }, cliActor());
      const openAcme = (): Promise<number> => signInAndOpen(ts, apache, '/protected/acme/');
      // Of the tenant globex: Apache refuses acme's page.
      assert.equal(await openAcme(), 401, apache.log());
      await updateUser(ts.store, { realmId: REALM, user: ts.user.id, setAttributes: { tenant: ['acme'] } });
      await revokeConsent(ts.store, { realmId: REALM, user: ts.user.id, clientId: 'apache-rp' }, cliActor());
      // Of acme now: past the claim check (the page does not exist: 404).
      assert.equal(await openAcme(), 404, apache.log());
    } finally {
      await apache.stop();
      await ts.close();
    }
  });
}

for (const dialect of dialects()) {
  test(`mod_auth_openidc: a logout at Realmgate ends Apache's session by back-channel logout (${dialect})`, { skip: available ? false : SKIP }, async () => {
    const ts = await startTestServer({ dialect, listen: true });
    const port = await freePort();
    const redirectUri = `http://127.0.0.1:${port}/protected/redirect_uri`;
    // mod_auth_openidc takes back-channel logout at its redirect URI with ?logout=backchannel.
    const { secret } = await createClient(ts.store, { realmId: REALM, clientId: 'apache-rp', redirectUris: [redirectUri], backchannelLogout: { url: `${redirectUri}?logout=backchannel` } });
    const apache = await startApache(ts, { id: 'apache-rp', secret: secret! }, port);
    try {
      const page = new URL(`${apache.base}/protected/index.html`);
      const signIn = async (user: TestServer['user']): Promise<FetchCookieJar> => {
        const jar = new FetchCookieJar();
        const first = await browse(jar, page);
        assert.equal(first.status, 302, apache.log());
        assert.equal((await browse(jar, await authorizeInBrowser({ ...ts, user }, new URL(first.headers.get('location')!), jar))).status, 302, apache.log());
        assert.equal((await browse(jar, page)).status, 200, apache.log());
        return jar;
      };
      // Another user, in another browser, signed in to Apache too.
      const bob = { username: 'bob', password: 'bob password 42', id: '' };
      bob.id = (await createUser(ts.store, { realmId: REALM, username: bob.username, password: bob.password, orgAliases: ['acme'] })).id;
      const bystander = await signIn(bob);
      const jar = await signIn(ts.user);
      // The user logs out at Realmgate (the end-session endpoint, confirmed on its page): Apache is not involved.
      const logout = new URL(`${ts.baseUrl}/auth/realms/${REALM}/protocol/openid-connect/logout`);
      const confirm = await browse(jar, logout);
      assert.equal(confirm.status, 200);
      const form = parseForm(await confirm.text());
      const done = await browse(jar, new URL(form.action, ts.baseUrl), { csrf: form.csrf });
      assert.equal(done.status, 200);
      assert.match(await done.text(), /You are signed out/);
      await ts.services.backchannel.settled();
      // mod_auth_openidc accepted the logout token (200), else the LOGOUT failure event says why.
      const failures = (await ts.store.events.list(REALM, { types: ['LOGOUT'] })).filter((e) => e.outcome === 'failure');
      assert.deepEqual(failures.map((e) => e.reason), [], apache.log());
      // Apache's session is gone: the protected page sends the browser to sign in again.
      const after = await browse(jar, page);
      assert.equal(after.status, 302, apache.log());
      assert.equal(new URL(after.headers.get('location')!).pathname, `/auth/realms/${REALM}/protocol/openid-connect/auth`);
      // The user's other browser (another Realmgate session, another sid) keeps its Apache session.
      assert.equal((await browse(bystander, page)).status, 200, apache.log());
    } finally {
      await apache.stop();
      await ts.close();
    }
  });
}
