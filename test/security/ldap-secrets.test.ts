import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import pino from 'pino';
import { dialects } from '../helpers/db.js';
import { startTestServer, basic, realmPath, REALM, type TestServer } from '../helpers/server.js';
import { runAuthorization } from '../helpers/flow.js';
import { LDAP_MISSING, PEOPLE, ROOT_DN, startLdap, type LdapServer } from '../helpers/ldap.js';
import { freePort } from '../helpers/smtp.js';
import { createUserStorage, updateUserStorage } from '../../src/admin/operations/user-storage.js';
import { cliActor } from '../../src/admin/operations/common.js';
import { updateRealm } from '../../src/admin/operations.js';
import { buildApp } from '../../src/app.js';

// User federation's secrets: the bind credential and the users' directory passwords are in no table,
// no admin event and no log line (trace level), through sign-ins that succeed, fail and find the
// directory down.
const BIND = 'root-secret';
const USER_PW = 'lena-directory-password-77';

for (const dialect of dialects()) {
  describe(`LDAP secrets at rest and in logs (${dialect})`, { skip: LDAP_MISSING }, () => {
    let ts: TestServer;
    let ldap: LdapServer;
    before(async () => {
      ldap = await startLdap({ people: [{ uid: 'lena', password: USER_PW, mail: 'lena@example.org' }] });
      ts = await startTestServer({ dialect });
      await ts.store.clients.update(REALM, ts.client.id, { directAccessGrantsEnabled: true });
      await updateRealm(ts.store, { realmId: REALM, settings: { organizationRequired: false } });
    });
    after(async () => {
      await ldap?.stop();
      await ts?.close();
    });

    test('neither the bind credential nor a directory password is stored or logged', async () => {
      const lines: string[] = [];
      const sink = new Writable({ write(chunk, _enc, cb) { lines.push(String(chunk)); cb(); } });
      const app = await buildApp({ services: ts.services, logger: pino({ level: 'trace' }, sink) });
      await app.ready();
      const view = { ...ts, app };
      try {
        const p = await createUserStorage(ts.store, cliActor(), REALM, { name: 'corp', config: { connectionUrl: [ldap.url], usersDn: [PEOPLE], bindDn: [ROOT_DN], bindCredential: [BIND], connectionTimeout: ['1000'], readTimeout: ['1000'] } });
        const grant = (password: string) =>
          app.inject({ method: 'POST', url: realmPath('/protocol/openid-connect/token'), headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basic(ts.client.id, ts.client.secret) }, payload: new URLSearchParams({ grant_type: 'password', username: 'lena', password }).toString() });
        assert.equal((await grant(USER_PW)).statusCode, 200);
        assert.equal((await grant(`${USER_PW}-wrong`)).statusCode, 400);
        const r = await runAuthorization(view, { username: 'lena', password: USER_PW });
        assert.ok(r.code, JSON.stringify(r.pages));
        await updateUserStorage(ts.store, cliActor(), REALM, p.id, { config: { connectionUrl: [`ldap://127.0.0.1:${await freePort()}`], bindCredential: [BIND] } });
        assert.equal((await grant(USER_PW)).statusCode, 503);
        const k = ts.store.db.kysely;
        const dump = JSON.stringify([
          await k.selectFrom('user_storage_providers').selectAll().execute(),
          await k.selectFrom('users').selectAll().execute(),
          await k.selectFrom('events').selectAll().execute(),
          await k.selectFrom('admin_events').selectAll().execute(),
          await k.selectFrom('user_attribute_values').selectAll().execute(),
        ]);
        const log = lines.join('');
        assert.ok(lines.length > 0);
        for (const secret of [BIND, USER_PW]) {
          assert.ok(!dump.includes(secret), `stored in clear: ${secret.slice(0, 6)}...`);
          assert.ok(!log.includes(secret), `logged: ${secret.slice(0, 6)}...`);
        }
      } finally {
        await app.close();
      }
    });
  });
}
