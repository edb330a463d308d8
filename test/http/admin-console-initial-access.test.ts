// The admin console's client initial access tokens over real HTTP (inject) on both databases: the page
// lists the realm's tokens (id, created, expires or never, count, remaining) with the registration
// endpoint; a create answers the page itself (201, no-store, no redirect) with the token shown once, whose
// SHA-256 alone is stored and which registers a client at the RFC 7591 endpoint; delete; bad values said
// on the page with nothing made; view-only admins see no forms and forged POSTs are refused; CSRF; escaping.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { LightMyRequestResponse } from 'fastify';
import { REALM, type TestServer } from '../helpers/server.js';
import { dialects } from '../helpers/db.js';
import { inject } from '../helpers/flow.js';
import { ADMIN, CONSOLE, VIEWER, csrfOf, setup, signIn, consoleEvents } from '../helpers/console.js';
import { createUser } from '../../src/admin/operations/users.js';
import { grantRolesByName } from '../../src/admin/operations/roles.js';
import { BOOTSTRAP_ACTOR } from '../../src/admin/operations/common.js';
import { createInitialAccess } from '../../src/admin/operations/initial-access.js';
import { tokenHash } from '../../src/crypto/random.js';

const pageOf = (realmId: string): string => `${CONSOLE}/realms/${realmId}/clients-initial-access`;
const PAGE = pageOf(REALM);
const registration = (realmId: string): string => `/auth/realms/${realmId}/clients-registrations/openid-connect`;

/** RFC 7591: a client registered with the bearer token, as a developer's script would. */
function register(ts: TestServer, token: string, realmId = REALM): Promise<LightMyRequestResponse> {
  return ts.app.inject({
    method: 'POST',
    url: registration(realmId),
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
    payload: JSON.stringify({ redirect_uris: ['https://app.example/cb'] }),
  });
}

/** The realm's stored rows, hashes included (what must not change when a change is refused). */
async function rowsOf(ts: TestServer, realmId = REALM): Promise<Array<{ id: string; token_hash: string; count: number; remaining: number }>> {
  const rows = await ts.db.db.kysely.selectFrom('client_initial_access').select(['id', 'token_hash', 'count', 'remaining']).where('realm_id', '=', realmId).orderBy('id').execute();
  return rows.map((r) => ({ id: r.id, token_hash: r.token_hash, count: Number(r.count), remaining: Number(r.remaining) }));
}

/** The token a create page shows. */
function shownToken(body: string): string {
  const m = /<code class="secret" id="initial-access-token">([^<]+)<\/code>/.exec(body);
  assert.ok(m, 'the token is shown');
  return m[1]!;
}

const FORMS = /<form method="post" action="[^"]*\/clients-initial-access[^"]*"|>(Create initial access token|Delete)</;

for (const dialect of dialects()) {
  test(`[${dialect}] console initial access tokens: listed, created (shown once, hash stored, registers a client), deleted`, async () => {
    const ts = await setup(dialect);
    try {
      const jar = await signIn(ts, ADMIN);
      // Linked from the clients list; under Clients in the navigation.
      const clients = await inject(ts.app, jar, 'GET', `${CONSOLE}/realms/${REALM}/clients`);
      assert.ok(clients.body.includes(`<a href="${PAGE}">Initial access tokens</a>`), 'the clients page links the page');
      const list = await inject(ts.app, jar, 'GET', PAGE);
      assert.equal(list.statusCode, 200);
      assert.equal(list.headers['cache-control'], 'no-store');
      assert.match(list.body, /<h1>Initial access tokens<\/h1>/);
      assert.match(list.body, /No initial access tokens that can still register a client\./);
      assert.deepEqual([...list.body.matchAll(/<a href="([^"]+)" aria-current="page">([^<]+)<\/a>/g)].map((m) => m[2]), ['Clients']);
      const endpoint = `${ts.config.authUrl}/auth/realms/${REALM}/clients-registrations/openid-connect`;
      assert.ok(list.body.includes(`<dt>Registration endpoint</dt><dd><code>${endpoint}</code></dd>`), 'the endpoint is shown');
      assert.match(list.body, /id="expiration" name="expiration" required autocomplete="off" value="86400"/);
      const csrf = /name="csrf" value="([^"]*)"/.exec(list.body)![1]!;

      // Created: the page itself answers (201, no redirect, no-store), with the token once and the endpoint.
      let res = await inject(ts.app, jar, 'POST', PAGE, { csrf, expiration: '3600', count: '2' });
      assert.equal(res.statusCode, 201, res.body.slice(0, 500));
      assert.equal(res.headers.location, undefined);
      assert.equal(res.headers['cache-control'], 'no-store');
      assert.match(res.body, /class="notice" role="status">The initial access token was created\.</);
      assert.match(res.body, /copy it now; it will not be shown again/);
      assert.match(res.body, /Hand it over with the registration endpoint above/);
      assert.ok(res.body.includes(`<dt>Registration endpoint</dt><dd><code>${endpoint}</code></dd>`), 'the endpoint on the same page');
      const token = shownToken(res.body);
      assert.match(token, /^[A-Za-z0-9_-]{40,}$/);
      // Only its hash is stored.
      let rows = await rowsOf(ts);
      assert.equal(rows.length, 1);
      const id = rows[0]!.id;
      assert.equal(rows[0]!.token_hash, tokenHash(token));
      assert.notEqual(rows[0]!.token_hash, token);
      assert.deepEqual([rows[0]!.count, rows[0]!.remaining], [2, 2]);

      // Listed again without the token: id, created, expires, count, remaining.
      let page = (await inject(ts.app, jar, 'GET', PAGE)).body;
      assert.ok(!page.includes(token), 'never shown again');
      assert.ok(page.includes(`<td data-label="ID"><code>${id}</code></td>`));
      assert.match(page, /<td data-label="Created">\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC<\/td><td data-label="Expires">\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC<\/td><td data-label="Count">2<\/td><td data-label="Remaining">2<\/td>/);

      // The token registers a client at the realm's endpoint (RFC 7591), as many as its count.
      res = await register(ts, token);
      assert.equal(res.statusCode, 201, res.body);
      const clientId = (res.json() as { client_id: string }).client_id;
      assert.ok(await ts.store.clients.get(REALM, clientId), 'the client exists');
      assert.match((await inject(ts.app, jar, 'GET', PAGE)).body, /<td data-label="Count">2<\/td><td data-label="Remaining">1<\/td>/);
      assert.equal((await register(ts, token)).statusCode, 201);
      assert.equal((await register(ts, token)).statusCode, 401, 'used up');
      assert.match((await inject(ts.app, jar, 'GET', PAGE)).body, /No initial access tokens that can still register a client\./);

      // One that never expires; then deleted, and refused from then on.
      res = await inject(ts.app, jar, 'POST', PAGE, { csrf, expiration: '0', count: '1' });
      assert.equal(res.statusCode, 201);
      const forever = shownToken(res.body);
      assert.match(res.body, /does not expire/);
      const foreverId = (await rowsOf(ts)).find((r) => r.token_hash === tokenHash(forever))!.id;
      page = (await inject(ts.app, jar, 'GET', PAGE)).body;
      assert.match(page, /<td data-label="Expires">never<\/td><td data-label="Count">1<\/td><td data-label="Remaining">1<\/td>/);
      assert.ok(page.includes(`<form method="post" action="${PAGE}/${foreverId}/delete" class="inline-form"><input type="hidden" name="csrf" value="${csrf}">`), 'a delete button with the CSRF token');
      res = await inject(ts.app, jar, 'POST', `${PAGE}/${foreverId}/delete`, { csrf });
      assert.equal(res.statusCode, 303);
      assert.equal(res.headers.location, `${PAGE}?done=initial-access-deleted`);
      page = (await inject(ts.app, jar, 'GET', res.headers.location as string)).body;
      assert.match(page, /class="notice" role="status">The initial access token was deleted/);
      assert.equal((await register(ts, forever)).statusCode, 401);
      // Gone already (another tab): said on the page.
      res = await inject(ts.app, jar, 'POST', `${PAGE}/${foreverId}/delete`, { csrf });
      assert.equal(res.statusCode, 404);
      assert.match(res.body, /class="error" role="alert">That initial access token does not exist any more\./);
      assert.match(res.body, /<h1>Initial access tokens<\/h1>/);

      // Each change an admin event via the console, never with the token.
      const events = await consoleEvents(ts);
      assert.ok(events.includes(`CREATE CLIENT_INITIAL_ACCESS_MODEL clients-initial-access/${id}`), events.join('\n'));
      assert.ok(events.includes(`DELETE CLIENT_INITIAL_ACCESS_MODEL clients-initial-access/${foreverId}`), events.join('\n'));
      const stored = JSON.stringify(await ts.store.adminEvents.list(REALM, {}));
      assert.ok(!stored.includes(token) && !stored.includes(forever), 'no event holds a token');
    } finally {
      await ts.close();
    }
  });

  test(`[${dialect}] console initial access tokens: bad values are said on the page, nothing is made; hostile values escaped`, async () => {
    const ts = await setup(dialect);
    try {
      const jar = await signIn(ts, ADMIN);
      const csrf = await csrfOf(ts, jar, PAGE);
      const refusals: Array<[string, string, RegExp]> = [
        ['abc', '1', /Expiration: enter a whole number of seconds/],
        ['-1', '1', /Expiration: enter a whole number of seconds/],
        ['1.5', '1', /Expiration: enter a whole number of seconds/],
        ['', '1', /Expiration: enter a whole number of seconds/],
        ['1e3', '1', /Expiration: enter a whole number of seconds/],
        ['99999999999', '1', /Expiration: enter a whole number of seconds/],
        ['315360001', '1', /expiration must be a whole number of seconds from 0 \(never\) to 315360000/],
        ['3600', '0', /count must be a whole number of clients from 1 to 1000000/],
        ['3600', '1000001', /count must be a whole number of clients from 1 to 1000000/],
        ['3600', '-3', /Count: enter a whole number of clients/],
        ['3600', '', /Count: enter a whole number of clients/],
        ['3600', '0x10', /Count: enter a whole number of clients/],
      ];
      for (const [expiration, count, why] of refusals) {
        const res = await inject(ts.app, jar, 'POST', PAGE, { csrf, expiration, count });
        const label = `${expiration}/${count}`;
        assert.equal(res.statusCode, 400, label);
        assert.match(res.body, /class="error" role="alert"/, label);
        assert.match(res.body, why, label);
        assert.doesNotMatch(res.body, /id="initial-access-token"/, label);
        assert.ok(res.body.includes(`name="expiration" required autocomplete="off" value="${expiration}"`), `${label}: the form keeps what was typed`);
        assert.ok(res.body.includes(`name="count" required autocomplete="off" value="${count}"`), label);
      }
      assert.deepEqual(await rowsOf(ts), []);
      assert.deepEqual(await consoleEvents(ts), []);

      // Hostile values come back escaped; an unknown id in the path is no way in either.
      const script = '"><script>alert(1)</script>';
      const res = await inject(ts.app, jar, 'POST', PAGE, { csrf, expiration: script, count: '<img src=x onerror=alert(2)>' });
      assert.equal(res.statusCode, 400);
      assert.doesNotMatch(res.body, /<script>alert|<img src=x/);
      assert.ok(res.body.includes('value="&quot;&gt;&lt;script&gt;alert(1)&lt;/script&gt;"'));
      const odd = await inject(ts.app, jar, 'POST', `${PAGE}/${encodeURIComponent('<script>x')}/delete`, { csrf });
      assert.equal(odd.statusCode, 404);
      assert.doesNotMatch(odd.body, /<script>x/);
      assert.deepEqual(await rowsOf(ts), []);
    } finally {
      await ts.close();
    }
  });

  test(`[${dialect}] console initial access tokens: view-only admins see no forms, forged POSTs are refused; CSRF; signed out`, async () => {
    const ts = await setup(dialect);
    try {
      // master: a token made elsewhere (CLI), and an admin who may only view its clients.
      const M = pageOf('master');
      const { access } = await createInitialAccess(ts.store, { realmId: 'master', count: 3 }, BOOTSTRAP_ACTOR);
      const clientViewer = { username: 'clientviewer', password: 'clientviewer password 42' };
      const { id } = await createUser(ts.store, { realmId: 'master', ...clientViewer });
      await grantRolesByName(ts.store, { realmId: 'master', userId: id, clientId: 'realm-management', names: ['view-clients'] }, BOOTSTRAP_ACTOR);
      const before = await rowsOf(ts, 'master');

      const viewer = await signIn(ts, clientViewer);
      const list = await inject(ts.app, viewer, 'GET', M);
      assert.equal(list.statusCode, 200);
      assert.ok(list.body.includes(`<code>${access.id}</code>`), 'the token is listed');
      assert.match(list.body, /<td data-label="Expires">never<\/td><td data-label="Count">3<\/td><td data-label="Remaining">3<\/td><\/tr>/);
      assert.doesNotMatch(list.body, FORMS);
      const viewerCsrf = await csrfOf(ts, viewer, M);
      const forged: Array<[string, Record<string, string>]> = [
        [M, { expiration: '0', count: '5' }],
        [`${M}/${access.id}/delete`, {}],
      ];
      for (const [url, form] of forged) {
        const res = await inject(ts.app, viewer, 'POST', url, { csrf: viewerCsrf, ...form });
        assert.equal(res.statusCode, 403, url);
        assert.match(res.body, /manage-clients/, url);
        assert.doesNotMatch(res.body, /id="initial-access-token"/, url);
      }
      // Nor may it see another realm's; an admin without view-clients sees none.
      assert.equal((await inject(ts.app, viewer, 'GET', PAGE)).statusCode, 403);
      const usersOnly = await signIn(ts, VIEWER);
      const denied = await inject(ts.app, usersOnly, 'GET', M);
      assert.equal(denied.statusCode, 403);
      assert.match(denied.body, /view-clients/);
      assert.deepEqual(await rowsOf(ts, 'master'), before);

      // The full admin, without the right CSRF token: refused, nothing changes.
      const admin = await signIn(ts, ADMIN);
      assert.match((await inject(ts.app, admin, 'GET', M)).body, FORMS);
      const other = await csrfOf(ts, await signIn(ts, ADMIN), M);
      const eventsBefore = (await consoleEvents(ts, 'master')).length;
      for (const token of [undefined, '', 'forged', other, viewerCsrf]) {
        const form: Record<string, string> = token === undefined ? {} : { csrf: token };
        for (const [url, fields] of forged) {
          const res = await inject(ts.app, admin, 'POST', url, { ...form, ...fields });
          assert.equal(res.statusCode, 403, `${url} ${String(token)}`);
          assert.match(res.body, /Form expired/);
        }
      }
      // Signed out: 401, the form is not replayed.
      const csrf = await csrfOf(ts, admin, M);
      const anonymous = await ts.app.inject({ method: 'POST', url: M, headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: new URLSearchParams({ csrf, expiration: '0', count: '1' }).toString() });
      assert.equal(anonymous.statusCode, 401);
      assert.deepEqual(await rowsOf(ts, 'master'), before);
      assert.equal((await consoleEvents(ts, 'master')).length, eventsBefore);

      // With the right one, the same forms work.
      const made = await inject(ts.app, admin, 'POST', M, { csrf, expiration: '60', count: '1' });
      assert.equal(made.statusCode, 201);
      assert.equal((await register(ts, shownToken(made.body), 'master')).statusCode, 201);
      assert.equal((await inject(ts.app, admin, 'POST', `${M}/${access.id}/delete`, { csrf })).statusCode, 303);
      assert.deepEqual(await rowsOf(ts, 'master'), []);
    } finally {
      await ts.close();
    }
  });
}
