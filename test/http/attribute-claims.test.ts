import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createLocalJWKSet, jwtVerify, type JWK } from 'jose';
import { dialects } from '../helpers/db.js';
import { startTestServer, basic, REALM, PASSWORD, type TestServer } from '../helpers/server.js';
import { runAuthorization, tokenRequest } from '../helpers/flow.js';
import { createClient, createClientScope, createUser, updateUser } from '../../src/admin/operations.js';

// The standard claims Keycloak's default client scopes take from user attributes: profile (nickname,
// middle_name, ..., updated_at), phone (phone_number, phone_number_verified) and address (OIDC Core
// 5.1.1), in the access token, the ID token and userinfo; none without its scope.
const ATTRIBUTES = {
  nickname: ['Bobby', 'B'],
  middleName: ['Quincy'],
  picture: ['https://example.com/bob.png'],
  website: ['https://bob.example.com'],
  gender: ['male'],
  birthdate: ['1990-04-01'],
  zoneinfo: ['Europe/Dublin'],
  locale: ['en-IE'],
  profile: ['https://example.com/bob'],
  updatedAt: ['1700000000'],
  phoneNumber: ['+353 1 234 5678'],
  phoneNumberVerified: ['TRUE'],
  formatted: ['1 Main Street\nDublin'],
  street: ['1 Main Street'],
  locality: ['Dublin'],
  postal_code: ['D01'],
  country: ['IE'],
  department: ['sales'],
};
const PROFILE = { nickname: 'Bobby', middle_name: 'Quincy', picture: 'https://example.com/bob.png', website: 'https://bob.example.com', gender: 'male', birthdate: '1990-04-01', zoneinfo: 'Europe/Dublin', locale: 'en-IE', profile: 'https://example.com/bob', updated_at: 1700000000 };
const PHONE = { phone_number: '+353 1 234 5678', phone_number_verified: true };
const ADDRESS = { address: { formatted: '1 Main Street\nDublin', street_address: '1 Main Street', locality: 'Dublin', postal_code: 'D01', country: 'IE' } };

for (const dialect of dialects()) {
  describe(`claims from user attributes (${dialect})`, () => {
    let ts: TestServer;
    let secret: string;
    before(async () => {
      ts = await startTestServer({ dialect });
      await createClientScope(ts.store, { realmId: REALM, name: 'phone' });
      await createClientScope(ts.store, { realmId: REALM, name: 'address' });
      secret = (await createClient(ts.store, { realmId: REALM, clientId: 'attr-app', redirectUris: [ts.client.redirectUri], scopes: 'openid profile email phone address' })).secret!;
      await createUser(ts.store, { realmId: REALM, username: 'bob', password: PASSWORD, firstName: 'Bob', attributes: ATTRIBUTES, orgAliases: ['acme'] });
      await createUser(ts.store, { realmId: REALM, username: 'carol', password: PASSWORD, orgAliases: ['acme'] });
    });
    after(() => ts.close());

    async function claims(username: string, scope: string): Promise<Array<Record<string, unknown>>> {
      const r = await runAuthorization(ts, { username, query: { client_id: 'attr-app', scope } });
      const res = await tokenRequest(ts, { grant_type: 'authorization_code', code: r.code!, redirect_uri: ts.client.redirectUri }, { authorization: basic('attr-app', secret) });
      assert.equal(res.statusCode, 200, res.body);
      const t = res.json() as { access_token: string; id_token: string; refresh_token: string };
      const jwks = createLocalJWKSet((await ts.app.inject({ method: 'GET', url: `/auth/realms/${REALM}/protocol/openid-connect/certs` })).json() as { keys: JWK[] });
      const verify = async (jwt: string): Promise<Record<string, unknown>> => (await jwtVerify(jwt, jwks, { currentDate: new Date(ts.clock.nowMs()) })).payload;
      const refreshed = await tokenRequest(ts, { grant_type: 'refresh_token', refresh_token: t.refresh_token }, { authorization: basic('attr-app', secret) });
      assert.equal(refreshed.statusCode, 200, refreshed.body);
      const access = [await verify(t.access_token), await verify((refreshed.json() as { access_token: string }).access_token)];
      // Without openid there is no ID token, and userinfo refuses the token (OIDC Core 5.3.1).
      if (!scope.split(' ').includes('openid')) return access;
      const info = await ts.app.inject({ method: 'GET', url: `/auth/realms/${REALM}/protocol/openid-connect/userinfo`, headers: { authorization: `Bearer ${t.access_token}` } });
      assert.equal(info.statusCode, 200, info.body);
      return [...access, await verify(t.id_token), info.json()];
    }

    const has = (c: Record<string, unknown>, expected: Record<string, unknown>, where: string): void => {
      for (const [k, v] of Object.entries(expected)) assert.deepEqual(c[k], v, `${k} in ${where}`);
    };
    const lacks = (c: Record<string, unknown>, expected: Record<string, unknown>, where: string): void => {
      for (const k of Object.keys(expected)) assert.equal(c[k], undefined, `${k} in ${where}`);
    };
    const WHERE = ['access token', 'refreshed access token', 'ID token', 'userinfo'];

    test('profile, phone and address release their claims from the attributes, in every token and userinfo', async () => {
      const all = await claims('bob', 'openid profile phone address');
      all.forEach((c, i) => {
        has(c, { ...PROFILE, ...PHONE, ...ADDRESS, given_name: 'Bob' }, WHERE[i]!);
        // An attribute no default mapper names is not a claim.
        assert.equal(c.department, undefined);
      });
    });

    test('no claim of a scope not granted (openid alone implies profile and email only)', async () => {
      const all = await claims('bob', 'openid');
      all.forEach((c, i) => {
        has(c, PROFILE, WHERE[i]!);
        lacks(c, { ...PHONE, ...ADDRESS }, WHERE[i]!);
      });
      const phoneOnly = await claims('bob', 'phone');
      phoneOnly.forEach((c, i) => {
        has(c, PHONE, WHERE[i]!);
        lacks(c, { ...PROFILE, ...ADDRESS }, WHERE[i]!);
      });
    });

    test('a user without those attributes gets none of those claims; values Keycloak would not type are left out or false', async () => {
      for (const [i, c] of (await claims('carol', 'openid profile phone address')).entries()) lacks(c, { ...PROFILE, ...PHONE, ...ADDRESS }, WHERE[i]!);
      await updateUser(ts.store, { realmId: REALM, user: 'carol', attributes: { updatedAt: ['yesterday'], phoneNumberVerified: ['yes'], country: ['FR'] } });
      const [access] = await claims('carol', 'openid profile phone address');
      assert.equal(access!.updated_at, undefined);
      assert.equal(access!.phone_number_verified, false);
      assert.deepEqual(access!.address, { country: 'FR' });
    });

    test('discovery lists the claims', async () => {
      const doc = (await ts.app.inject({ method: 'GET', url: `/auth/realms/${REALM}/.well-known/openid-configuration` })).json() as { claims_supported: string[] };
      for (const c of ['middle_name', 'nickname', 'updated_at', 'phone_number', 'phone_number_verified', 'address']) assert.ok(doc.claims_supported.includes(c), c);
    });
  });
}
