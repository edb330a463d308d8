import { test } from 'node:test';
import assert from 'node:assert/strict';
import { dialects } from '../helpers/db.js';
import { REALM } from '../helpers/server.js';
import { inject } from '../helpers/flow.js';
import { ADMIN, CONSOLE, csrfOf, setup, signIn } from '../helpers/console.js';

type Console = { ts: Awaited<ReturnType<typeof setup>>; jar: Awaited<ReturnType<typeof signIn>>; clientUrl: string; csrf: string };

/** A test on each database with the admin signed in to the console and the test client's page open. */
function clientPageTest(title: string, fn: (c: Console) => Promise<void>): void {
  for (const dialect of dialects()) {
    test(`${title} (${dialect})`, async () => {
      const ts = await setup(dialect);
      try {
        const jar = await signIn(ts, ADMIN);
        const clientUrl = `${CONSOLE}/realms/${REALM}/clients/${ts.client.id}`;
        await fn({ ts, jar, clientUrl, csrf: await csrfOf(ts, jar, clientUrl) });
      } finally {
        await ts.close();
      }
    });
  }
}

// The console client page's "Pushed authorization requests" form (Keycloak's require.pushed.authorization.requests).
clientPageTest('console: the client page requires pushed authorization requests or not; CSRF checked', async ({ ts, jar, clientUrl, csrf }) => {
  let page = await inject(ts.app, jar, 'GET', clientUrl);
  assert.match(page.body, /<h2>Pushed authorization requests<\/h2>/);
  assert.match(page.body, /<input type="checkbox" id="require-par" name="required" value="on" >/);

  let res = await inject(ts.app, jar, 'POST', `${clientUrl}/pushed-requests`, { csrf, required: 'on' });
  assert.equal(res.statusCode, 303);
  assert.match(String(res.headers.location), /done=par-saved/);
  assert.equal((await ts.store.clients.get(REALM, ts.client.id))!.requirePushedAuthorizationRequests, true);
  page = await inject(ts.app, jar, 'GET', `${clientUrl}?done=par-saved`);
  assert.match(page.body, /name="required" value="on" checked/);
  assert.match(page.body, /The pushed authorization request setting was saved/);

  // Without the form's CSRF token nothing changes.
  res = await inject(ts.app, jar, 'POST', `${clientUrl}/pushed-requests`, { csrf: 'forged' });
  assert.equal(res.statusCode, 403);
  assert.equal((await ts.store.clients.get(REALM, ts.client.id))!.requirePushedAuthorizationRequests, true);

  // An unticked box sends nothing: off.
  res = await inject(ts.app, jar, 'POST', `${clientUrl}/pushed-requests`, { csrf });
  assert.equal(res.statusCode, 303);
  assert.equal((await ts.store.clients.get(REALM, ts.client.id))!.requirePushedAuthorizationRequests, false);
});

// The console client page's "Token exchange" form (Keycloak's standard.token.exchange.enabled and
// standard.token.exchange.enableRefreshRequestedTokenType).
clientPageTest('console: the client page turns standard token exchange and its refresh tokens on and off; CSRF checked', async ({ ts, jar, clientUrl, csrf }) => {
  let page = await inject(ts.app, jar, 'GET', clientUrl);
  assert.match(page.body, /<h2>Token exchange<\/h2>/);
  assert.match(page.body, /<input type="checkbox" id="token-exchange" name="enabled" value="on" >/);

  let res = await inject(ts.app, jar, 'POST', `${clientUrl}/token-exchange`, { csrf, enabled: 'on', refresh: 'on' });
  assert.equal(res.statusCode, 303);
  assert.match(String(res.headers.location), /done=token-exchange-saved/);
  let c = (await ts.store.clients.get(REALM, ts.client.id))!;
  assert.deepEqual([c.standardTokenExchange, c.tokenExchangeRefresh], [true, 'SAME_SESSION']);
  page = await inject(ts.app, jar, 'GET', `${clientUrl}?done=token-exchange-saved`);
  assert.match(page.body, /id="token-exchange" name="enabled" value="on" checked/);
  assert.match(page.body, /id="token-exchange-refresh" name="refresh" value="on" checked/);
  assert.match(page.body, /The token exchange settings were saved/);

  res = await inject(ts.app, jar, 'POST', `${clientUrl}/token-exchange`, { csrf: 'forged' });
  assert.equal(res.statusCode, 403);
  assert.equal((await ts.store.clients.get(REALM, ts.client.id))!.standardTokenExchange, true);

  // Unticked boxes send nothing: off, and NO.
  res = await inject(ts.app, jar, 'POST', `${clientUrl}/token-exchange`, { csrf, enabled: 'on' });
  assert.equal(res.statusCode, 303);
  c = (await ts.store.clients.get(REALM, ts.client.id))!;
  assert.deepEqual([c.standardTokenExchange, c.tokenExchangeRefresh], [true, 'NO']);
  res = await inject(ts.app, jar, 'POST', `${clientUrl}/token-exchange`, { csrf });
  assert.equal((await ts.store.clients.get(REALM, ts.client.id))!.standardTokenExchange, false);
});

// The same page's "DPoP-bound tokens" form (Keycloak's dpop.bound.access.tokens, RFC 9449).
clientPageTest('console: the client page requires DPoP-bound tokens or not; CSRF checked', async ({ ts, jar, clientUrl, csrf }) => {
  let page = await inject(ts.app, jar, 'GET', clientUrl);
  assert.match(page.body, /<h2>DPoP-bound tokens<\/h2>/);
  assert.match(page.body, /<input type="checkbox" id="dpop-bound" name="required" value="on" >/);

  let res = await inject(ts.app, jar, 'POST', `${clientUrl}/dpop`, { csrf, required: 'on' });
  assert.equal(res.statusCode, 303);
  assert.match(String(res.headers.location), /done=dpop-saved/);
  assert.equal((await ts.store.clients.get(REALM, ts.client.id))!.dpopBoundAccessTokens, true);
  assert.equal((await ts.store.clients.get(REALM, ts.client.id))!.requirePushedAuthorizationRequests, false, 'only its own switch');
  page = await inject(ts.app, jar, 'GET', `${clientUrl}?done=dpop-saved`);
  assert.match(page.body, /id="dpop-bound" name="required" value="on" checked/);
  assert.match(page.body, /The DPoP setting was saved/);

  res = await inject(ts.app, jar, 'POST', `${clientUrl}/dpop`, { csrf: 'forged' });
  assert.equal(res.statusCode, 403);
  assert.equal((await ts.store.clients.get(REALM, ts.client.id))!.dpopBoundAccessTokens, true);

  res = await inject(ts.app, jar, 'POST', `${clientUrl}/dpop`, { csrf });
  assert.equal(res.statusCode, 303);
  assert.equal((await ts.store.clients.get(REALM, ts.client.id))!.dpopBoundAccessTokens, false);
});

// The console client page's "Request objects" form (Keycloak's request.object.required and
// request.object.signature.alg, RFC 9101).
clientPageTest('console: the client page sets whether request objects are required and their algorithm; a wrong value is refused; CSRF checked', async ({ ts, jar, clientUrl, csrf }) => {
  let page = await inject(ts.app, jar, 'GET', clientUrl);
  assert.match(page.body, /<h2>Request objects<\/h2>/);
  assert.match(page.body, /<option value="not required" selected>not required<\/option>/);
  assert.match(page.body, /<option value="any" selected>Any asymmetric algorithm<\/option>/);

  let res = await inject(ts.app, jar, 'POST', `${clientUrl}/request-objects`, { csrf, required: 'request only', alg: 'PS256' });
  assert.equal(res.statusCode, 303);
  assert.match(String(res.headers.location), /done=request-objects-saved/);
  let c = (await ts.store.clients.get(REALM, ts.client.id))!;
  assert.deepEqual([c.requestObjectRequired, c.requestObjectSignatureAlg], ['request only', 'PS256']);
  page = await inject(ts.app, jar, 'GET', `${clientUrl}?done=request-objects-saved`);
  assert.match(page.body, /<option value="request only" selected>/);
  assert.match(page.body, /<option value="PS256" selected>/);
  assert.match(page.body, /The request object settings were saved/);

  // Without the form's CSRF token nothing changes; a value Keycloak does not have is refused.
  res = await inject(ts.app, jar, 'POST', `${clientUrl}/request-objects`, { csrf: 'forged', required: 'not required', alg: 'any' });
  assert.equal(res.statusCode, 403);
  res = await inject(ts.app, jar, 'POST', `${clientUrl}/request-objects`, { csrf, required: 'always', alg: 'any' });
  assert.equal(res.statusCode, 400);
  assert.match(res.body, /request.object.required must be one of/);
  res = await inject(ts.app, jar, 'POST', `${clientUrl}/request-objects`, { csrf, required: 'not required', alg: 'HS256' });
  assert.equal(res.statusCode, 400);
  c = (await ts.store.clients.get(REALM, ts.client.id))!;
  assert.deepEqual([c.requestObjectRequired, c.requestObjectSignatureAlg], ['request only', 'PS256']);

  res = await inject(ts.app, jar, 'POST', `${clientUrl}/request-objects`, { csrf, required: 'not required', alg: 'any' });
  assert.equal(res.statusCode, 303);
  c = (await ts.store.clients.get(REALM, ts.client.id))!;
  assert.deepEqual([c.requestObjectRequired, c.requestObjectSignatureAlg], ['not required', null]);
});

// The same page's "Full scope" switch (Keycloak's fullScopeAllowed) and the roles in the client's scope.
clientPageTest('console: the client page turns full scope off and on and lists the roles in its scope, escaped; CSRF checked', async ({ ts, jar, clientUrl, csrf }) => {
  let page = await inject(ts.app, jar, 'GET', clientUrl);
  assert.match(page.body, /<h2>Full scope<\/h2>/);
  // On by default: the box is ticked.
  assert.match(page.body, /<input type="checkbox" id="full-scope" name="required" value="on" checked> Full scope allowed/);
  assert.match(page.body, /No role is mapped to its scope\./);

  // An unticked box sends nothing: off.
  let res = await inject(ts.app, jar, 'POST', `${clientUrl}/full-scope`, { csrf });
  assert.equal(res.statusCode, 303);
  assert.match(String(res.headers.location), /done=full-scope-saved/);
  assert.equal((await ts.store.clients.get(REALM, ts.client.id))!.fullScopeAllowed, false);
  assert.equal((await ts.store.clients.get(REALM, ts.client.id))!.dpopBoundAccessTokens, false, 'only its own switch');
  const role = { id: 'r-scope-1', realmId: REALM, clientId: '', name: '<i>a&b</i>', description: null };
  await ts.store.roles.create(role, 0);
  await ts.store.roleScopes.add(REALM, { kind: 'client', id: ts.client.id }, [role.id]);
  page = await inject(ts.app, jar, 'GET', `${clientUrl}?done=full-scope-saved`);
  assert.match(page.body, /id="full-scope" name="required" value="on" >/);
  assert.match(page.body, /The full scope setting was saved/);
  assert.match(page.body, /Roles in its scope: <code>&lt;i&gt;a&amp;b&lt;\/i&gt;<\/code>\./);
  assert.doesNotMatch(page.body, /<i>a&b<\/i>/);

  res = await inject(ts.app, jar, 'POST', `${clientUrl}/full-scope`, { csrf: 'forged', required: 'on' });
  assert.equal(res.statusCode, 403);
  assert.equal((await ts.store.clients.get(REALM, ts.client.id))!.fullScopeAllowed, false);

  res = await inject(ts.app, jar, 'POST', `${clientUrl}/full-scope`, { csrf, required: 'on' });
  assert.equal(res.statusCode, 303);
  assert.equal((await ts.store.clients.get(REALM, ts.client.id))!.fullScopeAllowed, true);
});
