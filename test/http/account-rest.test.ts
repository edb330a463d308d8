import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { dialects } from '../helpers/db.js';
import { startTestServer, basic, realmPath, REALM, type TestServer } from '../helpers/server.js';
import { runAuthorization, tokenRequest } from '../helpers/flow.js';
import { createClient, createUser, updateRealm } from '../../src/admin/operations.js';
import { createRole, grantRolesByName } from '../../src/admin/operations/roles.js';
import { cliActor } from '../../src/admin/operations/common.js';

/**
 * Keycloak's account REST API update: POST /realms/{realm}/account with the user's bearer token and a
 * UserRepresentation, over the real port (as an application's fetch would send it).
 */
for (const dialect of dialects()) {
  describe(`account REST API: the user updates their own profile (${dialect})`, () => {
    let ts: TestServer;
    before(async () => {
      ts = await startTestServer({ dialect, listen: true });
    });
    after(() => ts.close());

    async function accessToken(): Promise<string> {
      const r = await runAuthorization(ts);
      const res = await tokenRequest(ts, { grant_type: 'authorization_code', code: r.code!, redirect_uri: ts.client.redirectUri }, { authorization: basic(ts.client.id, ts.client.secret) });
      return res.json().access_token as string;
    }
    const url = (): string => `${ts.baseUrl}${realmPath('/account')}`;
    const post = (token: string | undefined, body: unknown): Promise<Response> =>
      fetch(url(), { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) }, body: JSON.stringify(body) });
    const profile = async (token: string): Promise<Record<string, unknown>> =>
      (await (await fetch(url(), { headers: { authorization: `Bearer ${token}`, accept: 'application/json' } })).json()) as Record<string, unknown>;

    test('names and email are saved with the rules of the account page; a field left out stays; each change is an event', async () => {
      const token = await accessToken();
      let r = await post(token, { firstName: ' Alice ', lastName: 'Liddell' });
      assert.equal(r.status, 204, await r.text());
      assert.equal(r.headers.get('cache-control'), 'no-store');
      let p = await profile(token);
      assert.equal(p.firstName, 'Alice');
      assert.equal(p.lastName, 'Liddell');
      assert.equal(p.email, 'alice@example.com', 'left out: unchanged');

      // The whole representation back, as Keycloak's account console sends it, with a new email.
      r = await post(token, { ...p, email: 'Alice.L@Example.com' });
      assert.equal(r.status, 204, await r.text());
      p = await profile(token);
      assert.equal(p.email, 'alice.l@example.com');
      assert.equal(p.emailVerified, false);
      const types = (await ts.store.events.list(REALM, { userId: ts.user.id })).map((e) => e.type);
      assert.ok(types.includes('UPDATE_EMAIL') && types.includes('UPDATE_PROFILE'), types.join(', '));
      const user = await ts.store.users.get(ts.user.id);
      assert.deepEqual(user!.requiredActions, []);
    });

    test("refused values answer Keycloak's ErrorRepresentation (one error, or several as errors) and change nothing", async () => {
      const token = await accessToken();
      const before = await profile(token);
      const cases: Array<[unknown, number, unknown]> = [
        [{ email: 'not-an-email' }, 400, { field: 'email', errorMessage: 'Invalid email address.', params: [] }],
        [{ firstName: '', lastName: '' }, 400, { errors: [{ field: 'firstName', errorMessage: 'Please specify first name.', params: [] }, { field: 'lastName', errorMessage: 'Please specify last name.', params: [] }] }],
        [{ firstName: 42 }, 400, { field: 'firstName', errorMessage: 'firstName must be a string', params: [] }],
        [{ username: 'mallory' }, 400, { field: 'username', errorMessage: 'the username cannot be changed', params: [] }],
        [{ attributes: { department: ['sales'] } }, 400, { field: 'attributes', errorMessage: 'attributes are not changed through the account API', params: [] }],
        [['not', 'an', 'object'], 400, { errorMessage: 'the body must be a JSON user representation', params: [] }],
      ];
      for (const [body, status, expected] of cases) {
        const r = await post(token, body);
        assert.equal(r.status, status, JSON.stringify(body));
        assert.deepEqual(await r.json(), expected, JSON.stringify(body));
      }
      // A body that is not JSON at all: the same form, not the HTML error page.
      const malformed = await fetch(url(), { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` }, body: '{"firstName": ' });
      assert.equal(malformed.status, 400);
      assert.match(String(malformed.headers.get('content-type')), /^application\/json/);
      assert.match(((await malformed.json()) as { errorMessage: string }).errorMessage, /JSON user representation/);
      // The username as it is (any case) and empty attributes are accepted, as Keycloak's console sends them.
      assert.equal((await post(token, { username: String(before.username).toUpperCase(), attributes: {} })).status, 204);
      assert.deepEqual(await profile(token), before);
      // Another user's email (ignoring case).
      await createUser(ts.store, { realmId: REALM, username: 'bob', password: undefined, email: 'bob@example.com' });
      const taken = await post(token, { email: 'BOB@example.com' });
      assert.equal(taken.status, 400);
      assert.deepEqual(await taken.json(), { field: 'email', errorMessage: 'Email already exists.', params: [] });
    });

    test('a new email needs a sign-in of the last five minutes; names do not', async () => {
      const token = await accessToken();
      ts.clock.advance(301);
      let r = await post(token, { email: 'late@example.com' });
      assert.equal(r.status, 403);
      assert.equal(((await r.json()) as { field: string }).field, 'email');
      assert.notEqual((await profile(token)).email, 'late@example.com');
      r = await post(token, { lastName: 'Later' });
      assert.equal(r.status, 204);
      // A new sign-in (prompt=login) gives a token that may.
      const again = await runAuthorization(ts, { query: { prompt: 'login' } });
      const fresh = (await tokenRequest(ts, { grant_type: 'authorization_code', code: again.code!, redirect_uri: ts.client.redirectUri }, { authorization: basic(ts.client.id, ts.client.secret) })).json().access_token as string;
      assert.equal((await post(fresh, { email: 'late@example.com' })).status, 204);
      assert.equal((await profile(fresh)).email, 'late@example.com');
    });

    test("editUsernameAllowed: a new username is taken (lower case, checked, free: 409 when taken); off: refused", async () => {
      const token = await accessToken();
      const refused = await post(token, { username: 'alicia' });
      assert.equal(refused.status, 400);
      assert.equal(((await refused.json()) as { errorMessage: string }).errorMessage, 'the username cannot be changed');
      await updateRealm(ts.store, { realmId: REALM, settings: { editUsernameAllowed: true } });
      ts.services.cache.clear();
      try {
        await createUser(ts.store, { realmId: REALM, username: 'carol', password: undefined });
        const taken = await post(token, { username: 'Carol' });
        assert.equal(taken.status, 409);
        assert.deepEqual(await taken.json(), { field: 'username', errorMessage: 'Username already exists.', params: [] });
        const bad = await post(token, { username: 'no spaces please' });
        assert.equal(bad.status, 400);
        assert.equal(((await bad.json()) as { field: string }).field, 'username');
        // Refused with a bad name too: nothing of the rest is saved.
        const mixed = await post(token, { username: 'no spaces please', firstName: 'Changed' });
        assert.equal(mixed.status, 400);
        assert.notEqual((await profile(token)).firstName, 'Changed');
        const r = await post(token, { username: 'Alicia', lastName: 'Renamed' });
        assert.equal(r.status, 204, await r.text());
        const p = await profile(token);
        assert.equal(p.username, 'alicia');
        assert.equal(p.lastName, 'Renamed');
        const events = await ts.store.events.list(REALM, { userId: ts.user.id, types: ['UPDATE_PROFILE'] });
        assert.ok(events.some((e) => e.reason === `username ${ts.user.username} -> alicia`));
        // Back, so that the other tests' sign-ins find the user by their name.
        assert.equal((await post(token, { username: ts.user.username })).status, 204);
      } finally {
        await updateRealm(ts.store, { realmId: REALM, settings: { editUsernameAllowed: false } });
        ts.services.cache.clear();
      }
    });

    test('userProfileMetadata=true: the profile with what the user may change (the username only under editUsernameAllowed, nothing of a directory user)', async () => {
      const token = await accessToken();
      type Meta = { attributes: Array<{ name: string; readOnly: boolean; required: boolean; validators: Record<string, unknown> }>; groups: unknown[] };
      const meta = async (): Promise<Meta> =>
        ((await (await fetch(`${url()}?userProfileMetadata=true`, { headers: { authorization: `Bearer ${token}`, accept: 'application/json' } })).json()) as { userProfileMetadata: Meta }).userProfileMetadata;
      assert.equal((await profile(token)).userProfileMetadata, undefined, 'only when asked');
      const readOnly = (m: Meta): Record<string, boolean> => Object.fromEntries(m.attributes.map((a) => [a.name, a.readOnly]));
      let m = await meta();
      assert.deepEqual(readOnly(m), { username: true, email: false, firstName: false, lastName: false });
      assert.ok(m.attributes.find((a) => a.name === 'email')!.validators.email);
      // What it says is what the update does: a new username is refused now, taken under editUsernameAllowed.
      assert.equal((await post(token, { username: 'metadata-name' })).status, 400);
      await updateRealm(ts.store, { realmId: REALM, settings: { editUsernameAllowed: true } });
      ts.services.cache.clear();
      try {
        m = await meta();
        assert.equal(readOnly(m).username, false);
        // A user whose profile comes from a directory changes nothing here.
        await ts.store.users.update(ts.user.id, { federationLink: 'some-provider' });
        assert.deepEqual(Object.values(readOnly(await meta())), [true, true, true, true]);
        assert.equal((await post(token, { firstName: 'Directory' })).status, 400);
      } finally {
        await ts.store.users.update(ts.user.id, { federationLink: null });
        await updateRealm(ts.store, { realmId: REALM, settings: { editUsernameAllowed: false } });
        ts.services.cache.clear();
      }
    });

    test('no token, a bad token: 401 with WWW-Authenticate; without manage-account where the realm has the role: 403', async () => {
      const none = await post(undefined, { firstName: 'X' });
      assert.equal(none.status, 401);
      assert.match(String(none.headers.get('www-authenticate')), /^Bearer realm=/);
      const bad = await post('abc.def.ghi', { firstName: 'X' });
      assert.equal(bad.status, 401);
      assert.equal(((await bad.json()) as { error: string }).error, 'invalid_token');

      const token = await accessToken();
      await createClient(ts.store, { realmId: REALM, clientId: 'account', redirectUris: ['https://account.example.com/cb'] });
      await createRole(ts.store, { realmId: REALM, clientId: 'account', name: 'manage-account' }, cliActor());
      const refused = await post(token, { firstName: 'Nope' });
      assert.equal(refused.status, 403);
      assert.notEqual((await profile(token)).firstName, 'Nope');
      await grantRolesByName(ts.store, { realmId: REALM, userId: ts.user.id, clientId: 'account', names: ['manage-account'] }, cliActor());
      assert.equal((await post(token, { firstName: 'Granted' })).status, 204);
      assert.equal((await profile(token)).firstName, 'Granted');
    });
  });
}
