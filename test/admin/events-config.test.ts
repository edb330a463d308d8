import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { dialects } from '../helpers/db.js';
import { runAuthorization, tokenRequest } from '../helpers/flow.js';
import { basic } from '../helpers/server.js';
import { serviceAccountAdmin, startAdminServer, statusOf, type AdminTestServer } from './helpers.js';

/**
 * Keycloak's GET and PUT /{realm}/events/config (RealmAdminResource.getRealmEventsConfig, view-events;
 * updateRealmEventsConfig, manage-events) over Realmgate's per-realm choice of optional event types.
 */
const ALWAYS = ['LOGIN', 'LOGIN_ERROR', 'LOCKOUT', 'GRANT_CONSENT', 'CONSENT_DENIED', 'CODE_TO_TOKEN_ERROR', 'REFRESH_TOKEN_ERROR', 'TOKEN_REUSE', 'REVOKE_GRANT', 'CLIENT_AUTH_ERROR', 'UPDATE_PASSWORD', 'UPDATE_TOTP', 'REMOVE_TOTP', 'UPDATE_CREDENTIAL', 'REMOVE_CREDENTIAL', 'CLIENT_LOGIN', 'CLIENT_LOGIN_ERROR', 'TOKEN_EXCHANGE', 'TOKEN_EXCHANGE_ERROR', 'IDENTITY_PROVIDER_LOGIN', 'IDENTITY_PROVIDER_FIRST_LOGIN', 'IDENTITY_PROVIDER_LOGIN_ERROR', 'FEDERATED_IDENTITY_LINK', 'REMOVE_FEDERATED_IDENTITY', 'SEND_RESET_PASSWORD', 'SEND_RESET_PASSWORD_ERROR', 'RESET_PASSWORD', 'RESET_PASSWORD_ERROR', 'EXECUTE_ACTIONS', 'EXECUTE_ACTIONS_ERROR', 'REGISTER', 'REGISTER_ERROR', 'SEND_VERIFY_EMAIL', 'SEND_VERIFY_EMAIL_ERROR', 'VERIFY_EMAIL', 'VERIFY_EMAIL_ERROR', 'UPDATE_PROFILE', 'UPDATE_PROFILE_ERROR', 'UPDATE_EMAIL', 'CUSTOM_REQUIRED_ACTION', 'CUSTOM_REQUIRED_ACTION_ERROR', 'INVITE_ORG', 'INVITE_ORG_ERROR', 'CLIENT_REGISTER', 'CLIENT_REGISTER_ERROR', 'CLIENT_INFO_ERROR', 'CLIENT_UPDATE', 'CLIENT_UPDATE_ERROR', 'CLIENT_DELETE', 'CLIENT_DELETE_ERROR', 'DELETE_ACCOUNT', 'DELETE_ACCOUNT_ERROR', 'IMPERSONATE'];

for (const dialect of dialects()) {
  describe(`admin API: events config (${dialect})`, () => {
    let ts: AdminTestServer;
    before(async () => {
      ts = await startAdminServer({ dialect, config: { eventsRetentionDays: 30 } });
    });
    after(() => ts.close());

    const refreshes = async (): Promise<number> => (await ts.kc.realms.findEvents({ realm: 'test', type: 'REFRESH_TOKEN' })).length;
    const refreshOnce = async (): Promise<void> => {
      const r = await runAuthorization(ts);
      const auth = { authorization: basic(ts.client.id, ts.client.secret) };
      const t = await tokenRequest(ts, { grant_type: 'authorization_code', code: r.code!, redirect_uri: ts.client.redirectUri }, auth);
      assert.equal(t.statusCode, 200, t.body);
      const rt = await tokenRequest(ts, { grant_type: 'refresh_token', refresh_token: (t.json() as { refresh_token: string }).refresh_token }, auth);
      assert.equal(rt.statusCode, 200, rt.body);
    };

    test("GET answers Keycloak's representation: the types stored, in Keycloak's names, and the server's retention", async () => {
      const c = await ts.kc.realms.getConfigEvents({ realm: 'test' });
      assert.equal(c.eventsEnabled, true);
      assert.equal(c.eventsExpiration, 30 * 86_400);
      assert.deepEqual(c.eventsListeners, []);
      assert.equal(c.adminEventsEnabled, true);
      assert.equal(c.adminEventsDetailsEnabled, true);
      // The defaults: every always-stored type and the optional ones but REFRESH_TOKEN and CLIENT_INFO.
      assert.deepEqual([...c.enabledEventTypes!].sort(), [...ALWAYS, 'CODE_ISSUED', 'CODE_TO_TOKEN', 'OAUTH2_DEVICE_VERIFY_USER_CODE', 'OAUTH2_DEVICE_CODE_TO_TOKEN', 'LOGOUT'].sort());
    });

    test('PUT enabling REFRESH_TOKEN stores refreshes; disabling it stops storing them; omitted fields keep their values', async () => {
      assert.equal(await refreshes(), 0);
      await refreshOnce();
      assert.equal(await refreshes(), 0, 'not stored by default');

      const current = await ts.kc.realms.getConfigEvents({ realm: 'test' });
      await ts.kc.realms.updateConfigEvents({ realm: 'test' }, { ...current, enabledEventTypes: [...current.enabledEventTypes!, 'REFRESH_TOKEN'] });
      assert.ok((await ts.kc.realms.getConfigEvents({ realm: 'test' })).enabledEventTypes!.includes('REFRESH_TOKEN'));
      await refreshOnce();
      assert.equal(await refreshes(), 1);

      // A PUT without enabledEventTypes changes nothing.
      await ts.kc.realms.updateConfigEvents({ realm: 'test' }, { adminEventsEnabled: true });
      assert.ok((await ts.kc.realms.getConfigEvents({ realm: 'test' })).enabledEventTypes!.includes('REFRESH_TOKEN'));

      // Our names are accepted too; always-stored types left out stay stored.
      await ts.kc.realms.updateConfigEvents({ realm: 'test' }, { eventsEnabled: true, enabledEventTypes: ['LOGOUT', 'DEVICE_TO_TOKEN'] });
      const after = await ts.kc.realms.getConfigEvents({ realm: 'test' });
      assert.deepEqual([...after.enabledEventTypes!].sort(), [...ALWAYS, 'OAUTH2_DEVICE_CODE_TO_TOKEN', 'LOGOUT'].sort());
      await refreshOnce();
      assert.equal(await refreshes(), 1, 'no longer stored');
      assert.equal((await ts.store.realms.get('test'))!.storedEventTypes.join(), 'DEVICE_TO_TOKEN,LOGOUT');
    });

    test("a Terraform-like PUT with Keycloak types Realmgate never emits succeeds; eventsEnabled false keeps only the always-stored types", async () => {
      await ts.kc.realms.updateConfigEvents(
        { realm: 'test' },
        { eventsEnabled: true, eventsExpiration: 3600, eventsListeners: ['jboss-logging'], adminEventsEnabled: true, adminEventsDetailsEnabled: false, enabledEventTypes: ['LOGIN', 'LOGIN_ERROR', 'UPDATE_PROFILE', 'SEND_VERIFY_EMAIL', 'REGISTER', 'REFRESH_TOKEN', 'CODE_TO_TOKEN'] },
      );
      assert.deepEqual((await ts.store.realms.get('test'))!.storedEventTypes, ['REFRESH_TOKEN', 'CODE_TO_TOKEN']);
      // eventsExpiration is the realm's own retention now; 0 gives it back the server's.
      assert.equal((await ts.kc.realms.getConfigEvents({ realm: 'test' })).eventsExpiration, 3600);
      assert.equal((await ts.store.realms.get('test'))!.eventsRetention, 3600);
      await ts.kc.realms.updateConfigEvents({ realm: 'test' }, { eventsExpiration: 0 });
      assert.equal((await ts.kc.realms.getConfigEvents({ realm: 'test' })).eventsExpiration, 30 * 86_400);
      assert.equal((await ts.store.realms.get('test'))!.eventsRetention, null);
      await ts.kc.realms.updateConfigEvents({ realm: 'test' }, { eventsEnabled: false });
      const c = await ts.kc.realms.getConfigEvents({ realm: 'test' });
      assert.deepEqual([...c.enabledEventTypes!].sort(), [...ALWAYS].sort());
      // An empty list is Keycloak's "stored by default": Realmgate's defaults.
      await ts.kc.realms.updateConfigEvents({ realm: 'test' }, { eventsEnabled: true, enabledEventTypes: [] });
      assert.deepEqual((await ts.store.realms.get('test'))!.storedEventTypes, ['CODE_ISSUED', 'CODE_TO_TOKEN', 'DEVICE_APPROVED', 'DEVICE_TO_TOKEN', 'LOGOUT']);
    });

    test("a name that is no event type is a 400 in Keycloak's error shape and changes nothing", async () => {
      const before = (await ts.store.realms.get('test'))!.storedEventTypes;
      const r = await fetch(`${ts.baseUrl}/auth/admin/realms/test/events/config`, {
        method: 'PUT',
        headers: { authorization: `Bearer ${ts.kc.accessToken}`, 'content-type': 'application/json' },
        body: JSON.stringify({ enabledEventTypes: ['REFRESH_TOKEN', 'LOGIN_SUCCES'] }),
      });
      assert.equal(r.status, 400);
      const body = (await r.json()) as { error: string; errorMessage: string };
      assert.equal(body.error, 'invalid_request');
      assert.match(body.errorMessage, /"LOGIN_SUCCES" is not an event type/);
      assert.deepEqual((await ts.store.realms.get('test'))!.storedEventTypes, before);
    });

    test('a retention that cannot be one (negative, fractional, a string, over 20 years) is a 400 and changes nothing, the event types given with it neither', async () => {
      await ts.kc.realms.updateConfigEvents({ realm: 'test' }, { eventsExpiration: 7 * 86_400 });
      const before = await ts.store.realms.get('test');
      for (const eventsExpiration of [-1, 1.5, '3600', 7306 * 86_400]) {
        const r = await fetch(`${ts.baseUrl}/auth/admin/realms/test/events/config`, {
          method: 'PUT',
          headers: { authorization: `Bearer ${ts.kc.accessToken}`, 'content-type': 'application/json' },
          body: JSON.stringify({ eventsExpiration, enabledEventTypes: ['REFRESH_TOKEN'] }),
        });
        assert.equal(r.status, 400, String(eventsExpiration));
        assert.match(((await r.json()) as { errorMessage: string }).errorMessage, /eventsExpiration must be a whole number of seconds/);
      }
      assert.deepEqual(await ts.store.realms.get('test'), before);
      await ts.kc.realms.updateConfigEvents({ realm: 'test' }, { eventsExpiration: 0 });
    });

    test("a realm's admin events retention is Keycloak's realm attribute adminEventsExpiration (seconds), kept apart from its events'", async () => {
      await ts.kc.realms.create({ realm: 'audited', eventsExpiration: 86_400, attributes: { adminEventsExpiration: '31536000' } } as never);
      const created = (await ts.store.realms.get('audited'))!;
      assert.equal(created.eventsRetention, 86_400);
      assert.equal(created.adminEventsRetention, 31_536_000);
      const rep = (await ts.kc.realms.findOne({ realm: 'audited' })) as { eventsExpiration?: number; attributes?: Record<string, string> };
      assert.equal(rep.eventsExpiration, 86_400);
      assert.equal(rep.attributes?.adminEventsExpiration, '31536000');
      // The representation read and written back changes nothing; an empty attribute gives back the server's retention.
      await ts.kc.realms.update({ realm: 'audited' }, rep as never);
      assert.deepEqual(await ts.store.realms.get('audited'), created);
      await ts.kc.realms.update({ realm: 'audited' }, { attributes: { ...rep.attributes, adminEventsExpiration: '' } } as never);
      assert.equal((await ts.store.realms.get('audited'))!.adminEventsRetention, null);
      assert.equal((await ts.store.realms.get('audited'))!.eventsRetention, 86_400);
      const plain = (await ts.kc.realms.findOne({ realm: 'audited' })) as { attributes?: Record<string, string> };
      assert.equal(plain.attributes?.adminEventsExpiration, undefined);
      assert.equal(await statusOf(ts.kc.realms.update({ realm: 'audited' }, { attributes: { adminEventsExpiration: 'a year' } } as never)), 400);
      assert.equal(await statusOf(ts.kc.realms.create({ realm: 'forever', eventsExpiration: -5 } as never)), 400);
      assert.equal(await ts.store.realms.get('forever'), undefined);
    });

    test('view-events reads the config but cannot change it (403); the change is an admin event', async () => {
      const { kc: watcher } = await serviceAccountAdmin(ts, 'test', 'watcher', ['view-events']);
      assert.equal((await watcher.realms.getConfigEvents({ realm: 'test' })).eventsEnabled, true);
      assert.equal(await statusOf(watcher.realms.updateConfigEvents({ realm: 'test' }, { enabledEventTypes: ['REFRESH_TOKEN'] })), 403);

      await ts.kc.realms.updateConfigEvents({ realm: 'test' }, { enabledEventTypes: ['LOGOUT'] });
      const [e] = await ts.kc.realms.findAdminEvents({ realm: 'test', resourcePath: 'events/config', max: 1 } as never);
      assert.equal(e?.operationType, 'UPDATE');
      assert.equal(e?.resourceType, 'REALM');
      assert.equal(e?.authDetails?.userId !== undefined, true);
      assert.deepEqual((JSON.parse(e!.representation!) as { storedEventTypes: string[] }).storedEventTypes, ['LOGOUT']);
    });

    test('a realm representation (create, import, export) carries eventsEnabled and enabledEventTypes the same way', async () => {
      await ts.kc.realms.create({ realm: 'quiet', eventsEnabled: false, enabledEventTypes: ['REFRESH_TOKEN'] });
      assert.deepEqual((await ts.store.realms.get('quiet'))!.storedEventTypes, []);
      await ts.kc.realms.create({ realm: 'chatty', eventsEnabled: true, enabledEventTypes: ['LOGIN', 'REFRESH_TOKEN', 'UPDATE_PROFILE'] });
      assert.deepEqual((await ts.store.realms.get('chatty'))!.storedEventTypes, ['REFRESH_TOKEN']);
      const rep = await ts.kc.realms.findOne({ realm: 'chatty' });
      assert.equal(rep!.eventsEnabled, true);
      assert.deepEqual([...rep!.enabledEventTypes!].sort(), [...ALWAYS, 'REFRESH_TOKEN'].sort());
      assert.equal(await statusOf(ts.kc.realms.create({ realm: 'typo', enabledEventTypes: ['LOGIN_SUCCES'] })), 400);
    });
  });
}
