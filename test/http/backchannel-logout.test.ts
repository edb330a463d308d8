// OpenID Connect Back-Channel Logout 1.0 over real HTTP: a receiving server in the test gets each logout
// token, which is verified against the realm's JWKS with jose (signature, header, every claim), for each
// way a session ends: the end-session endpoint (with a hint, and through the confirmation form), the
// account page's Sign out, and the admin API (keycloak-admin-client: logout, session deletion, disable,
// delete, reset password, consent revocation). A client not used in the session gets nothing; a dead,
// slow or redirecting receiver neither delays nor breaks the logout.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createLocalJWKSet, decodeJwt, jwtVerify, type JSONWebKeySet, type JWTPayload } from 'jose';
import { dialects } from '../helpers/db.js';
import { basic, realmPath, REALM } from '../helpers/server.js';
import { CookieJar, inject, parseForm, runAuthorization, tokenRequest } from '../helpers/flow.js';
import { startAdminServer, type AdminTestServer } from '../admin/helpers.js';
import { ADMIN, CONSOLE, csrfOf, setup, signIn as consoleSignIn } from '../helpers/console.js';
import { userSessions } from '../../src/admin/operations/users.js';
import { createClient, updateClient } from '../../src/admin/operations.js';
import { createUser } from '../../src/admin/operations/users.js';
import { BACKCHANNEL_LOGOUT_EVENT, REVOKE_OFFLINE_TOKENS_EVENT } from '../../src/oidc/backchannel-logout.js';
import { metrics } from '../../src/metrics.js';

const LOGOUT = realmPath('/protocol/openid-connect/logout');
const ACCOUNT = realmPath('/account');
const REDIRECT = 'https://rp.example/cb';

interface Received {
  path: string;
  method: string;
  contentType: string | undefined;
  form: URLSearchParams;
}

/** A relying party's back-channel endpoint: records every request; `answer` decides each response. */
class Receiver {
  readonly got: Received[] = [];
  private waiters: Array<() => void> = [];
  answer: (req: http.IncomingMessage, res: http.ServerResponse) => void = (_req, res) => res.writeHead(204).end();
  private readonly server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (d: Buffer) => (body += d.toString()));
    req.on('end', () => {
      this.got.push({ path: req.url ?? '', method: req.method ?? '', contentType: req.headers['content-type'], form: new URLSearchParams(body) });
      for (const w of this.waiters.splice(0)) w();
      this.answer(req, res);
    });
  });
  private readonly sockets = new Set<import('node:net').Socket>();

  async start(): Promise<void> {
    this.server.on('connection', (s) => {
      this.sockets.add(s);
      s.on('close', () => this.sockets.delete(s));
    });
    await new Promise<void>((r) => this.server.listen(0, '127.0.0.1', r));
  }
  url(path: string): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}${path}`;
  }
  /** The requests to `path`. */
  to(path: string): Received[] {
    return this.got.filter((g) => g.path === path);
  }
  /** Waits (at most 5 s) until `path` has had `n` requests. */
  async waitFor(path: string, n = 1): Promise<Received[]> {
    const deadline = Date.now() + 5000;
    while (this.to(path).length < n) {
      if (Date.now() > deadline) throw new Error(`no back-channel logout reached ${path} (got ${this.got.map((g) => g.path).join(', ')})`);
      await new Promise<void>((r) => {
        this.waiters.push(r);
        setTimeout(r, 100);
      });
    }
    return this.to(path);
  }
  async stop(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((r) => this.server.close(() => r()));
  }
}

for (const dialect of dialects()) {
  describe(`back-channel logout (${dialect})`, () => {
    let ts: AdminTestServer;
    const rp = new Receiver();
    let jwks: ReturnType<typeof createLocalJWKSet>;
    let issuer: string;

    before(async () => {
      ts = await startAdminServer({ dialect });
      await rp.start();
      issuer = `${ts.baseUrl}/auth/realms/${REALM}`;
      // rp: back-channel logout with sid (the defaults). other: a URL too, but never used in the tests' sessions.
      // quiet: used, without a URL. es: ES256 ID tokens, no sid wanted, offline tokens revoked at logout.
      await createClient(ts.store, { realmId: REALM, clientId: 'rp', redirectUris: [REDIRECT], secret: 'rp-secret', backchannelLogout: { url: rp.url('/rp/logout?x=1') } });
      await createClient(ts.store, { realmId: REALM, clientId: 'other', redirectUris: [REDIRECT], secret: 'other-secret', backchannelLogout: { url: rp.url('/other/logout') } });
      await createClient(ts.store, { realmId: REALM, clientId: 'quiet', redirectUris: [REDIRECT], secret: 'quiet-secret' });
      await createClient(ts.store, {
        realmId: REALM,
        clientId: 'es',
        redirectUris: [REDIRECT],
        secret: 'es-secret',
        idTokenAlg: 'ES256',
        backchannelLogout: { url: rp.url('/es/logout'), sessionRequired: false, revokeOfflineTokens: true },
      });
    });
    after(async () => {
      await ts.close();
      await rp.stop();
    });

    async function keys(): Promise<ReturnType<typeof createLocalJWKSet>> {
      const res = await fetch(`${issuer}/protocol/openid-connect/certs`);
      jwks = createLocalJWKSet((await res.json()) as JSONWebKeySet);
      return jwks;
    }

    /** Signs in through `clientId` (in `jar`'s session when given) and redeems the code. */
    async function signIn(clientId: string, opts: { jar?: CookieJar; scope?: string; username?: string; password?: string } = {}): Promise<{ jar: CookieJar; idToken: string; refresh: string; sid: string }> {
      const r = await runAuthorization(ts, {
        ...(opts.jar ? { jar: opts.jar } : {}),
        ...(opts.username ? { username: opts.username, password: opts.password! } : {}),
        // Online chains unless offline_access is asked for (the helper's default asks for it).
        query: { client_id: clientId, redirect_uri: REDIRECT, scope: opts.scope ?? 'openid core_data' },
      });
      const res = await tokenRequest(ts, { grant_type: 'authorization_code', code: r.code!, redirect_uri: REDIRECT }, { authorization: basic(clientId, `${clientId}-secret`) });
      assert.equal(res.statusCode, 200, res.body);
      const body = res.json();
      return { jar: r.jar, idToken: body.id_token, refresh: body.refresh_token, sid: decodeJwt(body.id_token).sid as string };
    }

    const refreshStatus = async (clientId: string, refresh: string): Promise<number> =>
      (await tokenRequest(ts, { grant_type: 'refresh_token', refresh_token: refresh }, { authorization: basic(clientId, `${clientId}-secret`) })).statusCode;

    /** The logout token of a request, verified as a relying party must (Back-Channel Logout 2.6). */
    async function verified(r: Received, audience: string, alg = 'RS256'): Promise<{ claims: JWTPayload; header: Record<string, unknown> }> {
      assert.equal(r.method, 'POST');
      assert.equal(r.contentType, 'application/x-www-form-urlencoded');
      assert.deepEqual([...r.form.keys()], ['logout_token']);
      const token = r.form.get('logout_token')!;
      const { payload, protectedHeader } = await jwtVerify(token, jwks ?? (await keys()), { issuer, audience, typ: 'logout+jwt', algorithms: [alg], currentDate: new Date(ts.clock.nowMs()) });
      assert.equal(protectedHeader.alg, alg);
      assert.ok(protectedHeader.kid, 'the key is named');
      const now = Math.floor(ts.clock.nowMs() / 1000);
      assert.ok(typeof payload.iat === 'number' && Math.abs(payload.iat - now) <= 5, 'iat is now');
      assert.equal(payload.exp! - payload.iat!, 120, 'two minutes');
      assert.ok(typeof payload.jti === 'string' && payload.jti.length >= 16);
      assert.equal(payload.aud, audience);
      assert.ok(payload.events && typeof payload.events === 'object');
      assert.deepEqual((payload.events as Record<string, unknown>)[BACKCHANNEL_LOGOUT_EVENT], {});
      assert.equal(payload.nonce, undefined, '2.4: a logout token never has a nonce');
      assert.equal(payload.typ, undefined, 'not to be taken for an ID token (typ claim ID)');
      return { claims: payload, header: protectedHeader as Record<string, unknown> };
    }

    test('discovery advertises back-channel logout with sid', async () => {
      const d = (await (await fetch(`${issuer}/.well-known/openid-configuration`)).json()) as Record<string, unknown>;
      assert.equal(d.backchannel_logout_supported, true);
      assert.equal(d.backchannel_logout_session_supported, true);
      assert.equal(d.frontchannel_logout_supported, true, 'front-channel logout too (test/http/frontchannel-logout.test.ts)');
    });

    test('the end-session endpoint with id_token_hint: a verified logout token to the client used in the session, nothing to another', async () => {
      await keys();
      const n = rp.to('/rp/logout?x=1').length;
      // The user's session in another browser, with another client: not this logout's business.
      const elsewhere = await signIn('other');
      const s = await signIn('rp');
      // The same session signs in to a client without a URL: it gets nothing, and changes nothing.
      await signIn('quiet', { jar: s.jar });
      const started = Date.now();
      const res = await inject(ts.app, s.jar, 'GET', `${LOGOUT}?id_token_hint=${s.idToken}`);
      assert.equal(res.statusCode, 200);
      assert.match(res.body, /You are signed out/);
      assert.ok(Date.now() - started < 2000);
      const got = await rp.waitFor('/rp/logout?x=1', n + 1);
      const { claims } = await verified(got.at(-1)!, 'rp');
      assert.equal(claims.sid, s.sid, 'the sid of the ID token');
      assert.equal(claims.sub, ts.user.id);
      assert.deepEqual(Object.keys(claims.events as object), [BACKCHANNEL_LOGOUT_EVENT]);
      await ts.services.backchannel.settled();
      assert.equal(rp.to('/other/logout').length, 0, 'a client not used in the session gets nothing');
      // The session's (online) refresh chains ended with it; the other browser's did not.
      assert.equal(await refreshStatus('rp', s.refresh), 400);
      assert.equal(await refreshStatus('other', elsewhere.refresh), 200);
      await inject(ts.app, elsewhere.jar, 'GET', `${LOGOUT}?id_token_hint=${elsewhere.idToken}`);
      await rp.waitFor('/other/logout');
    });

    test('the confirmation form, an ES256 client without sid that revokes offline tokens, and an offline chain of a client that does not', async () => {
      await keys();
      const esBefore = rp.to('/es/logout').length;
      const rpBefore = rp.to('/rp/logout?x=1').length;
      const keptOffline = await signIn('rp', { scope: 'openid offline_access' });
      const s = await signIn('es', { jar: keptOffline.jar, scope: 'openid offline_access' });
      // Another session's offline chain of es: revoked by this logout too (revoke.offline.tokens).
      const elsewhere = await signIn('es', { scope: 'openid offline_access' });
      const page = await inject(ts.app, s.jar, 'GET', `${LOGOUT}?client_id=es`);
      assert.match(page.body, /Do you want to sign out/);
      const form = parseForm(page.body);
      const done = await inject(ts.app, s.jar, 'POST', form.action, { csrf: form.csrf, client_id: 'es' });
      assert.equal(done.statusCode, 200);
      const got = await rp.waitFor('/es/logout', esBefore + 1);
      const { claims, header } = await verified(got.at(-1)!, 'es', 'ES256');
      assert.equal(header.typ, 'logout+jwt');
      assert.equal(claims.sid, undefined, 'backchannel.logout.session.required false: no sid');
      assert.equal(claims.sub, ts.user.id);
      assert.equal((claims.events as Record<string, unknown>)[REVOKE_OFFLINE_TOKENS_EVENT], true);
      await rp.waitFor('/rp/logout?x=1', rpBefore + 1);
      assert.equal(await refreshStatus('es', s.refresh), 400, "es's offline chain of this session is revoked");
      assert.equal(await refreshStatus('es', elsewhere.refresh), 400, "and es's offline chain of another session");
      assert.equal(await refreshStatus('rp', keptOffline.refresh), 200, "rp's offline chain outlives the logout, as in Keycloak");
    });

    test("the account page's Sign out tells the clients of the session it ends", async () => {
      await keys();
      const n = rp.to('/rp/logout?x=1').length;
      const s = await signIn('rp');
      const page = await inject(ts.app, s.jar, 'GET', ACCOUNT);
      const form = [...page.body.matchAll(/<form method="post" action="([^"]*sessions\/end)">([\s\S]*?)<\/form>/g)]
        .map((m) => ({ action: m[1]!, fields: Object.fromEntries([...m[2]!.matchAll(/name="([^"]*)" value="([^"]*)"/g)].map((f) => [f[1]!, f[2]!])) }))
        .find((f) => f.fields.session_id === s.sid)!;
      assert.ok(form, 'this browser can be signed out');
      assert.equal((await inject(ts.app, s.jar, 'POST', form.action, form.fields)).statusCode, 303);
      const got = await rp.waitFor('/rp/logout?x=1', n + 1);
      assert.equal((await verified(got.at(-1)!, 'rp')).claims.sid, s.sid);
      assert.equal(await refreshStatus('rp', s.refresh), 400);
    });

    test('keycloak-admin-client: the attributes, then logout, session deletion, password reset, consent revocation, disable and delete each tell the client', async () => {
      await keys();
      const kc = ts.kc;
      await kc.clients.create({
        realm: REALM,
        clientId: 'kc-rp',
        secret: 'kc-rp-secret',
        redirectUris: [REDIRECT],
        attributes: { 'backchannel.logout.url': rp.url('/kc/logout'), 'backchannel.logout.session.required': 'true', 'backchannel.logout.revoke.offline.tokens': 'false' },
      });
      const rep = (await kc.clients.find({ realm: REALM, clientId: 'kc-rp' }))[0]!;
      assert.equal(rep.attributes?.['backchannel.logout.url'], rp.url('/kc/logout'));
      assert.equal(rep.attributes?.['backchannel.logout.session.required'], 'true');
      assert.equal(rep.attributes?.['backchannel.logout.revoke.offline.tokens'], 'false');
      assert.equal(rep.frontchannelLogout, false);
      // A URL that may not be one is refused (400), as a fragment is.
      for (const bad of ['ftp://rp.example/logout', 'https://rp.example/logout#frag', 'not a url', 'https://user:pw@rp.example/']) {
        await assert.rejects(kc.clients.update({ realm: REALM, id: rep.id! }, { ...rep, attributes: { ...rep.attributes, 'backchannel.logout.url': bad } }), (e: { response?: { status: number } }) => e.response?.status === 400, bad);
      }
      await kc.clients.update({ realm: REALM, id: rep.id! }, { ...rep, attributes: { ...rep.attributes, 'backchannel.logout.session.required': 'false' } });
      assert.equal((await ts.store.clients.get(REALM, 'kc-rp'))!.backchannelLogout.sessionRequired, false);
      await kc.clients.update({ realm: REALM, id: rep.id! }, { ...rep, attributes: { ...rep.attributes, 'backchannel.logout.session.required': 'true' } });

      const path = '/kc/logout';
      const expectOne = async (what: string, userId: string, sid: string, act: () => Promise<unknown>): Promise<void> => {
        const n = rp.to(path).length;
        await act();
        await rp.waitFor(path, n + 1);
        await ts.services.backchannel.settled();
        const got = rp.to(path).slice(n);
        assert.equal(got.length, 1, `${what}: one logout token`);
        const { claims } = await verified(got[0]!, 'kc-rp');
        assert.equal(claims.sub, userId, what);
        assert.equal(claims.sid, sid, what);
      };
      const { id: bobId } = await createUser(ts.store, { realmId: REALM, username: 'bob', password: 'bob password 42', orgAliases: ['acme'] });
      const bob = { username: 'bob', password: 'bob password 42' };
      let s = await signIn('kc-rp', bob);
      await expectOne('users/{id}/logout', bobId, s.sid, () => kc.users.logout({ realm: REALM, id: bobId }));
      assert.equal(await refreshStatus('kc-rp', s.refresh), 400);
      s = await signIn('kc-rp', bob);
      await expectOne('DELETE sessions/{id}', bobId, s.sid, () => kc.realms.deleteSession({ realm: REALM, session: s.sid, isOffline: false }));
      s = await signIn('kc-rp', bob);
      await expectOne('reset-password', bobId, s.sid, () => kc.users.resetPassword({ realm: REALM, id: bobId, credential: { type: 'password', value: 'bob password 43', temporary: false } }));
      bob.password = 'bob password 43';
      s = await signIn('kc-rp', bob);
      await expectOne('consent revoked', bobId, s.sid, () => kc.users.revokeConsent({ realm: REALM, id: bobId, clientId: 'kc-rp' }));
      // The consent's revocation ends no session (it tells the client, as Keycloak does): this one ends now.
      await expectOne('users/{id}/logout', bobId, s.sid, () => kc.users.logout({ realm: REALM, id: bobId }));
      s = await signIn('kc-rp', bob);
      await expectOne('disabled', bobId, s.sid, () => kc.users.update({ realm: REALM, id: bobId }, { enabled: false }));
      await kc.users.update({ realm: REALM, id: bobId }, { enabled: true });
      s = await signIn('kc-rp', bob);
      await expectOne('deleted', bobId, s.sid, () => kc.users.del({ realm: REALM, id: bobId }));
      await ts.services.backchannel.settled();
      assert.equal(rp.to('/other/logout').length, 1);
    });

    test('a dead, a silent and a redirecting receiver: the logout is answered at once, each failure counted and recorded, the redirect not followed', async () => {
      const silent = new Receiver();
      silent.answer = () => undefined; // never answers
      await silent.start();
      const bouncer = new Receiver();
      bouncer.answer = (_req, res) => res.writeHead(307, { location: rp.url('/followed') }).end();
      await bouncer.start();
      const dead = new Receiver();
      await dead.start();
      const deadUrl = dead.url('/gone');
      await dead.stop();
      const bc = ts.services.backchannel;
      const timeout = bc.options.timeoutMs;
      bc.options.timeoutMs = 1500;
      try {
        await createClient(ts.store, { realmId: REALM, clientId: 'silent', redirectUris: [REDIRECT], secret: 'silent-secret', backchannelLogout: { url: silent.url('/s') } });
        await createClient(ts.store, { realmId: REALM, clientId: 'dead', redirectUris: [REDIRECT], secret: 'dead-secret', backchannelLogout: { url: deadUrl } });
        await createClient(ts.store, { realmId: REALM, clientId: 'bouncer', redirectUris: [REDIRECT], secret: 'bouncer-secret', backchannelLogout: { url: bouncer.url('/b') } });
        const count = async (): Promise<Record<string, number>> =>
          Object.fromEntries((await metrics.backchannelLogouts.get()).values.map((v) => [String(v.labels.outcome), v.value]));
        const was = await count();
        const s = await signIn('silent');
        await signIn('dead', { jar: s.jar });
        await signIn('bouncer', { jar: s.jar });
        const n = rp.to('/rp/logout?x=1').length;
        await signIn('rp', { jar: s.jar });
        const started = Date.now();
        const res = await inject(ts.app, s.jar, 'GET', `${LOGOUT}?id_token_hint=${s.idToken}`);
        const took = Date.now() - started;
        assert.equal(res.statusCode, 200);
        assert.ok(took < 1000, `the logout waited ${took} ms for its clients`);
        // The working client is told all the same, before the silent one times out.
        await rp.waitFor('/rp/logout?x=1', n + 1);
        await silent.waitFor('/s');
        await bc.settled();
        const now = await count();
        const delta = (k: string): number => (now[k] ?? 0) - (was[k] ?? 0);
        assert.equal(delta('timeout'), 1);
        assert.equal(delta('network_error'), 1);
        assert.equal(delta('redirect'), 1);
        assert.ok(delta('success') >= 1);
        assert.equal(rp.to('/followed').length, 0, 'no redirect followed');
        const events = (await ts.store.events.list(REALM, { types: ['LOGOUT'] })).filter((e) => e.outcome === 'failure');
        for (const c of ['silent', 'dead', 'bouncer']) {
          const e = events.find((x) => x.clientId === c);
          assert.ok(e, `a LOGOUT failure event for ${c}`);
          assert.match(e.reason ?? '', /^back-channel logout not delivered: /);
        }
      } finally {
        bc.options.timeoutMs = timeout;
        await silent.stop();
        await bouncer.stop();
      }
    });

    test('at shutdown a delivery still waiting is dropped within the drain time, with its count', async () => {
      const silent = new Receiver();
      silent.answer = () => undefined;
      await silent.start();
      try {
        await createClient(ts.store, { realmId: REALM, clientId: 'late', redirectUris: [REDIRECT], secret: 'late-secret', backchannelLogout: { url: silent.url('/late') } });
        const s = await signIn('late');
        // Another sender over the same server's parts: draining it does not close the test's server.
        const { BackchannelLogout } = await import('../../src/oidc/backchannel-logout.js');
        const sender = new BackchannelLogout(ts.services, { timeoutMs: 30_000 });
        const was = (await metrics.backchannelLogouts.get()).values.find((v) => v.labels.outcome === 'dropped')?.value ?? 0;
        sender.notify(REALM, [{ sessionId: s.sid, userId: ts.user.id, clientId: 'late' }]);
        await silent.waitFor('/late');
        const started = Date.now();
        await sender.drain(300);
        assert.ok(Date.now() - started < 2000);
        assert.equal(sender.pending, 0);
        const dropped = (await metrics.backchannelLogouts.get()).values.find((v) => v.labels.outcome === 'dropped')?.value ?? 0;
        assert.equal(dropped - was, 1);
        // Closed: a later logout is dropped at once.
        sender.notify(REALM, [{ sessionId: s.sid, userId: ts.user.id, clientId: 'late' }]);
        await sender.settled();
        assert.equal(silent.to('/late').length, 1);
      } finally {
        await silent.stop();
      }
    });

    test('a client disabled or without a URL gets nothing; updateClient sets and clears the URL', async () => {
      const n = rp.to('/rp/logout?x=1').length;
      const s = await signIn('rp');
      const q = await signIn('quiet', { jar: s.jar });
      await updateClient(ts.store, { realmId: REALM, clientId: 'rp', enabled: false });
      // rp is disabled now; quiet has no URL.
      const res = await inject(ts.app, s.jar, 'GET', `${LOGOUT}?id_token_hint=${q.idToken}`);
      assert.match(res.body, /You are signed out/);
      await ts.services.backchannel.settled();
      assert.equal(rp.to('/rp/logout?x=1').length, n);
      await updateClient(ts.store, { realmId: REALM, clientId: 'rp', enabled: true, backchannelLogout: { url: '' } });
      assert.equal((await ts.store.clients.get(REALM, 'rp'))!.backchannelLogout.url, null);
      await updateClient(ts.store, { realmId: REALM, clientId: 'rp', backchannelLogout: { url: rp.url('/rp/logout?x=1') } });
      assert.equal((await ts.store.clients.get(REALM, 'rp'))!.backchannelLogout.url, rp.url('/rp/logout?x=1'));
    });
  });
}

for (const dialect of dialects()) {
  test(`back-channel logout: the console's client form sets it, its session and user sign-outs tell the client (${dialect})`, async () => {
    const ts = await setup(dialect);
    const rp = new Receiver();
    await rp.start();
    try {
      await createClient(ts.store, { realmId: REALM, clientId: 'rp', redirectUris: [REDIRECT], secret: 'rp-secret' });
      const jar = await consoleSignIn(ts, ADMIN);
      const clientUrl = `${CONSOLE}/realms/${REALM}/clients/rp`;
      const csrf = await csrfOf(ts, jar, clientUrl);
      const page = await inject(ts.app, jar, 'GET', clientUrl);
      assert.match(page.body, /<h2>Back-channel logout<\/h2>/);
      assert.match(page.body, /name="sessionRequired" value="on" checked/);
      let res = await inject(ts.app, jar, 'POST', `${clientUrl}/backchannel-logout`, { csrf, url: 'https://rp.example/logout#x', sessionRequired: 'on' });
      assert.equal(res.statusCode, 400);
      assert.match(res.body, /fragment/);
      res = await inject(ts.app, jar, 'POST', `${clientUrl}/backchannel-logout`, { csrf, url: rp.url('/console'), sessionRequired: 'on' });
      assert.equal(res.statusCode, 303);
      assert.deepEqual((await ts.store.clients.get(REALM, 'rp'))!.backchannelLogout, { url: rp.url('/console'), sessionRequired: true, revokeOfflineTokens: false });
      assert.ok((await inject(ts.app, jar, 'GET', clientUrl)).body.includes(`value="${rp.url('/console')}"`));

      const aliceSignsIn = async (): Promise<string> => {
        const r = await runAuthorization(ts, { query: { client_id: 'rp', redirect_uri: REDIRECT, scope: 'openid' } });
        const t = await tokenRequest(ts, { grant_type: 'authorization_code', code: r.code!, redirect_uri: REDIRECT }, { authorization: basic('rp', 'rp-secret') });
        return decodeJwt(t.json().id_token).sid as string;
      };
      const userUrl = `${CONSOLE}/realms/${REALM}/users/${ts.user.id}`;
      let sid = await aliceSignsIn();
      assert.equal((await inject(ts.app, jar, 'POST', `${userUrl}/sessions/end`, { csrf, session: sid })).statusCode, 303);
      let got = await rp.waitFor('/console', 1);
      assert.equal(decodeJwt(got[0]!.form.get('logout_token')!).sid, sid);
      sid = await aliceSignsIn();
      assert.equal((await inject(ts.app, jar, 'POST', `${userUrl}/logout`, { csrf })).statusCode, 303);
      got = await rp.waitFor('/console', 2);
      const claims = decodeJwt(got[1]!.form.get('logout_token')!);
      assert.equal(claims.sid, sid);
      assert.equal(claims.sub, ts.user.id);
      assert.equal((await userSessions(ts.store, { realmId: REALM, user: ts.user.id })).length, 0);
    } finally {
      await ts.close();
      await rp.stop();
    }
  });
}
