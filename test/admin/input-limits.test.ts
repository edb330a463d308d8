import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { dialects } from '../helpers/db.js';
import { REALM } from '../helpers/server.js';
import { startAdminServer, type AdminTestServer } from './helpers.js';
import { importKeycloakRealms } from '../../src/admin/operations/realm-import.js';
import { cliActor } from '../../src/admin/operations/common.js';
import { listUsers } from '../../src/admin/operations/users.js';
import type { Store } from '../../src/storage/store.js';

// Values longer than their column (users.id varchar(36), users.email varchar(320)) or than the update's
// limit (a realm's display name, an organization's description) are refused with Keycloak's 400 before
// the database sees them, on SQLite (which would store them) as on PostgreSQL (which would fail).
for (const dialect of dialects()) {
  describe(`admin API: input limits (${dialect})`, () => {
    let ts: AdminTestServer;
    before(async () => {
      ts = await startAdminServer({ dialect });
    });
    after(() => ts.close());

    async function call(method: string, path: string, body?: unknown): Promise<{ status: number; json: Record<string, unknown> | undefined }> {
      const res = await fetch(`${ts.baseUrl}/auth/admin${path}`, {
        method,
        headers: { authorization: `Bearer ${await ts.kc.getAccessToken()}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
        ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
      });
      const text = await res.text();
      return { status: res.status, json: text ? (JSON.parse(text) as Record<string, unknown>) : undefined };
    }

    test('POST users: an email over 320 characters is a 400 naming the limit; 320 is stored', async () => {
      const long = await call('POST', `/realms/${REALM}/users`, { username: 'longmail', email: `${'a'.repeat(400)}@x.y` });
      assert.equal(long.status, 400);
      assert.match(String(long.json?.errorMessage), /email address must have at most 320 characters/);
      assert.equal(await ts.store.users.findByUsername(REALM, 'longmail'), undefined);
      const email = `${'b'.repeat(316)}@x.y`;
      assert.equal(email.length, 320);
      assert.equal((await call('POST', `/realms/${REALM}/users`, { username: 'fullmail', email })).status, 201);
      assert.equal((await ts.store.users.findByUsername(REALM, 'fullmail'))?.email, email);
    });

    test('a redirect URI longer than a request could carry is refused, and the message does not repeat it', async () => {
      const uri = `https://a.example/${'p'.repeat(9000)}`;
      const r = await call('POST', `/realms/${REALM}/clients`, { clientId: 'long-uri', publicClient: true, redirectUris: [uri] });
      assert.equal(r.status, 400);
      const message = String(r.json?.errorMessage);
      assert.match(message, /longer than 8192 characters/);
      assert.ok(message.length < 400, `${message.length} characters`);
      assert.equal(await ts.store.clients.get(REALM, 'long-uri'), undefined);
    });

    test('a user search longer than any username or email matches nothing (no database error)', async () => {
      // The admin API's schema caps the terms at 255; the CLI (user list --search) reaches the operation as it is.
      for (const key of ['search', 'username', 'email'] as const) {
        assert.deepEqual(await listUsers(ts.store, { realmId: REALM, [key]: 'a'.repeat(60_000) }), []);
      }
    });

    test('partialImport: a user id over 36 characters is skipped with the user, not a 500', async () => {
      const r = await call('POST', `/realms/${REALM}/partialImport`, { ifResourceExists: 'SKIP', users: [{ username: 'longid', id: 'a'.repeat(50) }, { username: 'shortid', id: 'b'.repeat(36) }] });
      assert.equal(r.status, 200, JSON.stringify(r.json));
      assert.deepEqual(
        (r.json?.results as Array<{ action: string; resourceName: string }>).map((x) => [x.resourceName, x.action]),
        [['longid', 'SKIPPED'], ['shortid', 'ADDED']],
      );
      assert.equal(await ts.store.users.findByUsername(REALM, 'longid'), undefined);
      assert.equal((await ts.store.users.findByUsername(REALM, 'shortid'))?.id, 'b'.repeat(36));
    });

    test('POST realms with users: a user id over 36 characters is skipped, the realm imported', async () => {
      const r = await call('POST', '/realms', { realm: 'longidrealm', users: [{ username: 'longid', id: 'e'.repeat(50) }, { username: 'fine', id: 'c'.repeat(36) }] });
      assert.equal(r.status, 201, JSON.stringify(r.json));
      assert.ok(await ts.store.realms.get('longidrealm'));
      assert.equal(await ts.store.users.findByUsername('longidrealm', 'longid'), undefined);
      assert.ok(await ts.store.users.findByUsername('longidrealm', 'fine'));
    });

    test('POST realms: a display name over 255 characters is refused as PUT refuses it; an import leaves it out', async () => {
      const plain = await call('POST', '/realms', { realm: 'longname', displayName: 'n'.repeat(300) });
      assert.equal(plain.status, 400);
      assert.match(String(plain.json?.errorMessage), /display name must have at most 255 characters/);
      assert.equal(await ts.store.realms.get('longname'), undefined);
      assert.equal((await call('POST', '/realms', { realm: 'okname', displayName: 'n'.repeat(255) })).status, 201);
      assert.equal((await call('PUT', '/realms/okname', { displayName: 'n'.repeat(256) })).status, 400);
      const imported = await call('POST', '/realms', { realm: 'longnameimport', displayName: 'n'.repeat(300), users: [{ username: 'u1', id: 'd'.repeat(36) }] });
      assert.equal(imported.status, 201, JSON.stringify(imported.json));
      assert.equal((await ts.store.realms.get('longnameimport'))?.displayName, null);
    });

    test('POST organizations: a description over 4000 characters is refused as PUT refuses it; GET then PUT round-trips', async () => {
      const long = await call('POST', `/realms/${REALM}/organizations`, { name: 'Verbose', description: 'd'.repeat(100_000) });
      assert.equal(long.status, 400);
      assert.match(String(long.json?.errorMessage), /description must have at most 4000 characters/);
      assert.equal(await ts.store.organizations.findByAlias(REALM, 'verbose'), undefined);
      const created = await call('POST', `/realms/${REALM}/organizations`, { name: 'Verbose', description: 'd'.repeat(4000) });
      assert.equal(created.status, 201);
      const org = await ts.store.organizations.findByAlias(REALM, 'verbose');
      const got = await call('GET', `/realms/${REALM}/organizations/${org!.id}`);
      assert.equal(got.json?.description, 'd'.repeat(4000));
      assert.equal((await call('PUT', `/realms/${REALM}/organizations/${org!.id}`, got.json)).status, 204);
    });

    test('control characters in a realm display name or an organization name or description are a 400 on create and update', async () => {
      // (A NUL is refused at the door already: "malformed request".)
      assert.equal((await call('POST', '/realms', { realm: 'ctlname', displayName: 'nul\u0000' })).status, 400);
      for (const displayName of ['a\x1b[31mRED', 'line1\nline2', 'del\x7f']) {
        const r = await call('POST', '/realms', { realm: 'ctlname', displayName });
        assert.equal(r.status, 400, displayName);
        assert.match(String(r.json?.errorMessage), /the display name must not contain control characters/);
      }
      assert.equal(await ts.store.realms.get('ctlname'), undefined);
      assert.equal((await call('PUT', `/realms/${REALM}`, { displayName: 'x\x1b[2J' })).status, 400);
      assert.equal((await call('POST', `/realms/${REALM}/organizations`, { name: 'n\x1b[2J\x01' })).status, 400);
      const r = await call('POST', `/realms/${REALM}/organizations`, { name: 'Clean', alias: 'clean', description: 'a\x1bb' });
      assert.equal(r.status, 400);
      assert.match(String(r.json?.errorMessage), /the description must not contain control characters/);
      assert.equal((await call('POST', `/realms/${REALM}/organizations`, { name: 'Clean', alias: 'clean' })).status, 201);
      const org = await ts.store.organizations.findByAlias(REALM, 'clean');
      const put = await call('PUT', `/realms/${REALM}/organizations/${org!.id}`, { name: 'Clean\nForged line', alias: 'clean' });
      assert.equal(put.status, 400);
      assert.match(String(put.json?.errorMessage), /the organization name must not contain control characters/);
      assert.equal((await ts.store.organizationAdmin.get(org!.id))?.name, 'Clean');
    });

    test('a refresh idle lifetime longer than the chain maximum is a 400 on create and update', async () => {
      const r = await call('POST', '/realms', { realm: 'idlemax', offlineSessionIdleTimeout: 100, offlineSessionMaxLifespan: 50 });
      assert.equal(r.status, 400);
      assert.match(String(r.json?.errorMessage), /the refresh idle lifetime \(100 s\) must not be longer than the refresh chain maximum \(50 s\)/);
      assert.equal(await ts.store.realms.get('idlemax'), undefined);
      const put = await call('PUT', `/realms/${REALM}`, { offlineSessionMaxLifespan: 50 });
      assert.equal(put.status, 400);
      assert.match(String(put.json?.errorMessage), /must not be longer than the refresh chain maximum \(50 s\)/);
      assert.equal((await call('PUT', `/realms/${REALM}`, { failureFactor: 0 })).status, 400);
      assert.match(String((await call('PUT', `/realms/${REALM}`, { failureFactor: 0 })).json?.errorMessage), /^the number of login failures must be a whole number from 1 to 1000$/);
    });

    test("an import that fails unexpectedly reports no database message; the error goes to the caller's log", async () => {
      const dbMessage = 'value too long for type character varying(36)';
      const failing = Object.create(ts.store, { transaction: { value: async () => Promise.reject(new Error(dbMessage)) } }) as Store;
      const logged: unknown[] = [];
      const report = await importKeycloakRealms(failing, [{ realm: 'never' }], { ifExists: 'fail', onUnexpectedError: (_realm, err) => logged.push(err) }, cliActor());
      assert.equal(report.realms[0]!.status, 'failed');
      assert.equal(report.realms[0]!.reason, 'nothing of this realm was stored: an unexpected error (logged)');
      assert.equal((logged[0] as Error).message, dbMessage);
    });

    test('a page offset the query schema coerces to Infinity (first=1e400) is a 400 on every paged listing, not a 500', async () => {
      const org = (await call('GET', `/realms/${REALM}/organizations`)).json as unknown as { id: string }[];
      const listings = [
        `/realms/${REALM}/events`,
        `/realms/${REALM}/admin-events`,
        `/realms/${REALM}/users`,
        `/realms/${REALM}/organizations`,
        `/realms/${REALM}/organizations/${org[0]!.id}/members`,
        `/realms/${REALM}/clients/web-app/user-sessions`,
      ];
      for (const path of listings) {
        for (const query of ['first=1e400', 'first=-1e400', 'max=1e400']) {
          const r = await call('GET', `${path}?${query}`);
          // The events listings clamp max to 1000 themselves.
          if (query === 'max=1e400' && path.endsWith('events')) {
            assert.equal(r.status, 200, `${path}?${query}`);
            continue;
          }
          assert.equal(r.status, 400, `${path}?${query}: ${JSON.stringify(r.json)}`);
          assert.match(String(r.json?.errorMessage), /must be a whole number/);
        }
      }
    });
  });
}
