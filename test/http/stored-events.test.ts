import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { dialects } from '../helpers/db.js';
import { startTestServer, basic, REALM, type TestServer } from '../helpers/server.js';
import { runAuthorization, tokenRequest } from '../helpers/flow.js';
import { createRealm } from '../../src/admin/operations.js';
import { ValidationError } from '../../src/admin/validation.js';
import { DEFAULT_STORED_EVENT_TYPES } from '../../src/events/stored-types.js';

for (const dialect of dialects()) {
  describe(`stored event types per realm (${dialect})`, () => {
    let ts: TestServer;
    before(async () => {
      ts = await startTestServer({ dialect });
    });
    after(() => ts.close());

    async function chainAndRefreshes(n: number): Promise<{ refresh: string; auth: string }> {
      const auth = basic(ts.client.id, ts.client.secret);
      const r = await runAuthorization(ts);
      const t = await tokenRequest(ts, { grant_type: 'authorization_code', code: r.code!, redirect_uri: ts.client.redirectUri }, { authorization: auth });
      assert.equal(t.statusCode, 200, t.body);
      let refresh = t.json().refresh_token as string;
      for (let i = 0; i < n; i++) {
        const res = await tokenRequest(ts, { grant_type: 'refresh_token', refresh_token: refresh }, { authorization: auth });
        assert.equal(res.statusCode, 200, res.body);
        refresh = res.json().refresh_token as string;
      }
      return { refresh, auth };
    }

    const stored = async (type: string): Promise<number> => (await ts.store.events.list(REALM, { limit: 1000 })).filter((e) => e.type === type).length;

    test('a new realm stores everything but successful refreshes, which are counted', async () => {
      assert.deepEqual((await ts.store.realms.get(REALM))!.storedEventTypes, [...DEFAULT_STORED_EVENT_TYPES]);
      const counted = ts.services.audit.counter.get(REALM, 'REFRESH_TOKEN', 'success');
      const storedBefore = await stored('CODE_TO_TOKEN');
      await chainAndRefreshes(3);
      assert.equal(await stored('REFRESH_TOKEN'), 0);
      assert.equal(ts.services.audit.counter.get(REALM, 'REFRESH_TOKEN', 'success'), counted + 3);
      assert.equal(await stored('CODE_TO_TOKEN'), storedBefore + 1);
      assert.ok(ts.services.audit.counter.snapshot().some((c) => c.realmId === REALM && c.type === 'CODE_TO_TOKEN' && c.count >= 1));
    });

    test('with REFRESH_TOKEN listed, every successful refresh is stored', async () => {
      await ts.store.realms.update(REALM, { storedEventTypes: ['REFRESH_TOKEN'] });
      const before = await stored('REFRESH_TOKEN');
      await chainAndRefreshes(2);
      assert.equal(await stored('REFRESH_TOKEN'), before + 2);
    });

    test('with an empty list, failures and reuse are still stored; routine successes are only counted', async () => {
      await ts.store.realms.update(REALM, { storedEventTypes: [] });
      const codesBefore = await stored('CODE_TO_TOKEN');
      const issuedBefore = await stored('CODE_ISSUED');
      const countedCodes = ts.services.audit.counter.get(REALM, 'CODE_TO_TOKEN', 'success');
      const { auth } = await chainAndRefreshes(0);
      // A second chain whose first token is used twice: reuse, then the chain is revoked.
      const r = await runAuthorization(ts);
      const t = (await tokenRequest(ts, { grant_type: 'authorization_code', code: r.code!, redirect_uri: ts.client.redirectUri }, { authorization: auth })).json();
      assert.equal((await tokenRequest(ts, { grant_type: 'refresh_token', refresh_token: t.refresh_token }, { authorization: auth })).statusCode, 200);
      const reuse = await tokenRequest(ts, { grant_type: 'refresh_token', refresh_token: t.refresh_token }, { authorization: auth });
      assert.equal(reuse.statusCode, 400);
      const bad = await tokenRequest(ts, { grant_type: 'refresh_token', refresh_token: 'not a token' }, { authorization: auth });
      assert.equal(bad.statusCode, 400);

      assert.equal(await stored('CODE_TO_TOKEN'), codesBefore);
      assert.equal(await stored('CODE_ISSUED'), issuedBefore);
      assert.equal(ts.services.audit.counter.get(REALM, 'CODE_TO_TOKEN', 'success'), countedCodes + 2);
      assert.ok((await stored('TOKEN_REUSE')) >= 1);
      assert.ok((await stored('REFRESH_TOKEN_ERROR')) >= 1);
    });

    test('a realm refuses an event type that is not optional', async () => {
      await assert.rejects(createRealm(ts.store, { id: 'bad-events', settings: { storedEventTypes: ['LOGIN'] } }), ValidationError);
      await assert.rejects(createRealm(ts.store, { id: 'bad-events', settings: { storedEventTypes: ['nonsense'] } }), ValidationError);
      const ok = await createRealm(ts.store, { id: 'some-events', settings: { storedEventTypes: ['REFRESH_TOKEN'] } });
      assert.deepEqual(ok.storedEventTypes, ['REFRESH_TOKEN']);
    });
  });
}
