// OpenID Connect Front-Channel Logout 1.0 over HTTP: the client settings through keycloak-admin-client
// (create, read, update; hostile URLs refused), discovery, and the logout page a browser gets when it
// ends its session: which clients it frames (with iss and sid, or not), the CSP that allows exactly
// those frames and the page's one inline script, the Continue link, and the account page's Sign out.
// The page in a real browser: test/browser/frontchannel-logout.test.ts.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { decodeJwt } from 'jose';
import { dialects } from '../helpers/db.js';
import { basic, realmPath, REALM } from '../helpers/server.js';
import { CookieJar, inject, runAuthorization, tokenRequest } from '../helpers/flow.js';
import { startAdminServer, errorOf, type AdminTestServer } from '../admin/helpers.js';
import { ADMIN, CONSOLE, csrfOf, setup, signIn as consoleSignIn } from '../helpers/console.js';
import { createClient, updateClient } from '../../src/admin/operations.js';
import { nowSeconds } from '../../src/clock.js';

const LOGOUT = realmPath('/protocol/openid-connect/logout');
const ACCOUNT = realmPath('/account');
const REDIRECT = 'https://rp.example/cb';
const AFTER = 'https://rp.example/after-logout';
const PAGE_CSP = "default-src 'none'; style-src 'self'; img-src 'self' data:; script-src 'self'; base-uri 'none'; frame-ancestors 'none'";

const unescape = (s: string): string => s.replace(/&amp;/g, '&').replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&#96;/g, '`');

/** The page's frames (their src, unescaped), its Continue link and its inline script. */
function readPage(body: string): { frames: string[]; next: string | undefined; script: string | undefined } {
  return {
    frames: [...body.matchAll(/<iframe class="logout-frame" src="([^"]*)"/g)].map((m) => unescape(m[1]!)),
    next: ((href) => (href !== undefined ? unescape(href) : undefined))(/<a class="button" id="continue" href="([^"]*)"/.exec(body)?.[1]),
    script: /<script>([\s\S]*?)<\/script>/.exec(body)?.[1],
  };
}

/** The CSP as directive -> value. */
function csp(header: unknown): Map<string, string> {
  return new Map(
    String(header)
      .split(';')
      .map((d) => d.trim())
      .filter(Boolean)
      .map((d) => [d.split(' ')[0]!, d.slice(d.indexOf(' ') + 1)] as [string, string]),
  );
}

for (const dialect of dialects()) {
  describe(`front-channel logout (${dialect})`, () => {
    let ts: AdminTestServer;
    let issuer: string;

    before(async () => {
      ts = await startAdminServer({ dialect });
      issuer = `${ts.baseUrl}/auth/realms/${REALM}`;
      // one and two: front-channel logout with iss and sid (two's URL has its own query). bare: without
      // iss and sid. back: only back-channel settings. off: a URL but the switch off. unused: never signed in to.
      const fc = (url: string, extra: { sessionRequired?: boolean; enabled?: boolean } = {}) => ({ frontchannelLogout: { enabled: extra.enabled ?? true, url, ...(extra.sessionRequired !== undefined ? { sessionRequired: extra.sessionRequired } : {}) } });
      await createClient(ts.store, { realmId: REALM, clientId: 'one', name: 'App One', redirectUris: [REDIRECT], postLogoutRedirectUris: [AFTER], secret: 'one-secret', ...fc('https://one.example/fc-logout') });
      await createClient(ts.store, { realmId: REALM, clientId: 'two', redirectUris: [REDIRECT], secret: 'two-secret', ...fc('http://two.example:8081/logout?app=two') });
      await createClient(ts.store, { realmId: REALM, clientId: 'bare', redirectUris: [REDIRECT], secret: 'bare-secret', ...fc('https://bare.example/logout', { sessionRequired: false }) });
      await createClient(ts.store, { realmId: REALM, clientId: 'back', redirectUris: [REDIRECT], secret: 'back-secret' });
      await createClient(ts.store, { realmId: REALM, clientId: 'off', redirectUris: [REDIRECT], secret: 'off-secret', ...fc('https://off.example/logout', { enabled: false }) });
      await createClient(ts.store, { realmId: REALM, clientId: 'unused', redirectUris: [REDIRECT], secret: 'unused-secret', ...fc('https://unused.example/logout') });
    });
    after(async () => {
      await ts.close();
    });

    /** Signs in through `clientId` (in `jar`'s session when given) and redeems the code. */
    async function signIn(clientId: string, jar?: CookieJar): Promise<{ jar: CookieJar; idToken: string; sid: string }> {
      const r = await runAuthorization(ts, { ...(jar ? { jar } : {}), query: { client_id: clientId, redirect_uri: REDIRECT, scope: 'openid core_data' } });
      const res = await tokenRequest(ts, { grant_type: 'authorization_code', code: r.code!, redirect_uri: REDIRECT }, { authorization: basic(clientId, `${clientId}-secret`) });
      assert.equal(res.statusCode, 200, res.body);
      const idToken = res.json().id_token as string;
      return { jar: r.jar, idToken, sid: decodeJwt(idToken).sid as string };
    }

    test('discovery advertises front-channel logout with iss and sid', async () => {
      const d = (await (await fetch(`${issuer}/.well-known/openid-configuration`)).json()) as Record<string, unknown>;
      assert.equal(d.frontchannel_logout_supported, true);
      assert.equal(d.frontchannel_logout_session_supported, true);
    });

    test('the end-session endpoint frames each front-channel client of the session, with iss and sid as asked, under a CSP naming exactly their origins', async () => {
      const a = await signIn('one');
      const b = await signIn('two', a.jar);
      const c = await signIn('bare', a.jar);
      await signIn('back', a.jar);
      await signIn('off', a.jar);
      assert.equal(b.sid, a.sid, 'one browser session');
      assert.equal(c.sid, a.sid);
      const q = new URLSearchParams({ id_token_hint: a.idToken, post_logout_redirect_uri: AFTER, state: 's t&ate' });
      const res = await inject(ts.app, a.jar, 'GET', `${LOGOUT}?${q.toString()}`);
      assert.equal(res.statusCode, 200, res.body);
      const page = readPage(res.body);
      const sid = encodeURIComponent(a.sid);
      const iss = encodeURIComponent(issuer);
      // Section 2: iss and sid as query parameters; two's own query is kept; bare asked for neither.
      assert.deepEqual(page.frames, [`https://bare.example/logout`, `https://one.example/fc-logout?iss=${iss}&sid=${sid}`, `http://two.example:8081/logout?app=two&iss=${iss}&sid=${sid}`]);
      assert.equal(page.next, `${AFTER}?state=s%20t%26ate`, 'then on to the post-logout redirect URI with its state');
      assert.match(res.body, /<li>App One<\/li>/);
      assert.match(res.body, /<li>two<\/li>/);
      // The session is gone already, whatever the frames do.
      const active = await ts.store.sessions.listActive(REALM, ts.user.id, nowSeconds(ts.services.clock));
      assert.ok(!active.some((s) => s.id === a.sid));

      const policy = csp(res.headers['content-security-policy']);
      assert.deepEqual([...policy.keys()].sort(), ['base-uri', 'default-src', 'frame-ancestors', 'frame-src', 'img-src', 'script-src', 'style-src']);
      assert.equal(policy.get('frame-src'), 'https://bare.example https://one.example http://two.example:8081');
      const hash = `'sha256-${createHash('sha256').update(page.script!, 'utf8').digest('base64')}'`;
      assert.equal(policy.get('script-src'), `'self' ${hash}`, 'the inline script by its hash, nothing else inline');
      for (const [k, v] of csp(PAGE_CSP)) if (k !== 'script-src') assert.equal(policy.get(k), v, `${k} as strict as on every page`);
      assert.equal(res.headers['x-frame-options'], 'DENY');
      assert.equal(res.headers['cache-control'], 'no-store');
      assert.equal(res.headers['referrer-policy'], 'no-referrer');
    });

    test('without a post-logout redirect URI the page is the signed-out page: frames, no script; a session without front-channel clients is answered as before', async () => {
      const a = await signIn('one');
      const res = await inject(ts.app, a.jar, 'GET', `${LOGOUT}?${new URLSearchParams({ id_token_hint: a.idToken }).toString()}`);
      assert.equal(res.statusCode, 200);
      const page = readPage(res.body);
      assert.equal(page.frames.length, 1);
      assert.equal(page.next, undefined);
      assert.equal(page.script, undefined);
      assert.match(res.body, /You are signed out/);
      const policy = csp(res.headers['content-security-policy']);
      assert.equal(policy.get('script-src'), "'self'");
      assert.equal(policy.get('frame-src'), 'https://one.example');

      const b = await signIn('back');
      const plain = await inject(ts.app, b.jar, 'GET', `${LOGOUT}?${new URLSearchParams({ id_token_hint: b.idToken }).toString()}`);
      assert.equal(plain.statusCode, 200);
      assert.equal(readPage(plain.body).frames.length, 0);
      assert.equal(plain.headers['content-security-policy'], PAGE_CSP, 'no frame-src at all');
    });

    test('a disabled client, a client of another session and one without the switch are not framed', async () => {
      const other = await signIn('unused');
      const a = await signIn('one');
      await signIn('two', a.jar);
      await updateClient(ts.store, { realmId: REALM, clientId: 'two', enabled: false });
      try {
        const res = await inject(ts.app, a.jar, 'GET', `${LOGOUT}?${new URLSearchParams({ id_token_hint: a.idToken }).toString()}`);
        assert.deepEqual(readPage(res.body).frames.map((f) => new URL(f).host), ['one.example']);
        assert.ok(!res.body.includes('unused.example') && !res.body.includes('off.example'));
      } finally {
        await updateClient(ts.store, { realmId: REALM, clientId: 'two', enabled: true });
      }
      assert.ok(other.sid);
    });

    test("the account page's Sign out frames the session's clients, then goes back to the account page", async () => {
      const a = await signIn('one');
      const page = await inject(ts.app, a.jar, 'GET', ACCOUNT);
      const form = [...page.body.matchAll(/<form method="post" action="([^"]*sessions\/end)">([\s\S]*?)<\/form>/g)]
        .map((m) => ({ action: m[1]!, fields: Object.fromEntries([...m[2]!.matchAll(/name="([^"]*)" value="([^"]*)"/g)].map((f) => [f[1]!, f[2]!])) }))
        .find((f) => f.fields.session_id === a.sid)!;
      assert.ok(form, 'this browser can be signed out');
      const res = await inject(ts.app, a.jar, 'POST', form.action, form.fields);
      assert.equal(res.statusCode, 200);
      const p = readPage(res.body);
      assert.deepEqual(p.frames, [`https://one.example/fc-logout?iss=${encodeURIComponent(issuer)}&sid=${encodeURIComponent(a.sid)}`]);
      assert.equal(p.next, ACCOUNT);
      assert.equal(csp(res.headers['content-security-policy']).get('frame-src'), 'https://one.example');
    });

    test('keycloak-admin-client: frontchannelLogout and the attributes are created, read and updated; hostile URLs are refused; a URL is escaped on the page', async () => {
      const kc = ts.kc;
      await kc.clients.create({
        realm: REALM,
        clientId: 'kc-fc',
        secret: 'kc-fc-secret',
        redirectUris: [REDIRECT],
        frontchannelLogout: true,
        attributes: { 'frontchannel.logout.url': 'https://kc.example/logout', 'frontchannel.logout.session.required': 'false' },
      });
      let rep = (await kc.clients.find({ realm: REALM, clientId: 'kc-fc' }))[0]!;
      assert.equal(rep.frontchannelLogout, true);
      assert.equal(rep.attributes?.['frontchannel.logout.url'], 'https://kc.example/logout');
      assert.equal(rep.attributes?.['frontchannel.logout.session.required'], 'false');
      assert.deepEqual((await ts.store.clients.get(REALM, 'kc-fc'))!.frontchannelLogout, { enabled: true, url: 'https://kc.example/logout', sessionRequired: false });
      // A client created without them: off, session required on (Keycloak's default), no URL attribute.
      await kc.clients.create({ realm: REALM, clientId: 'kc-plain', secret: 'kc-plain-secret', redirectUris: [REDIRECT] });
      const plain = (await kc.clients.find({ realm: REALM, clientId: 'kc-plain' }))[0]!;
      assert.equal(plain.frontchannelLogout, false);
      assert.equal(plain.attributes?.['frontchannel.logout.url'], undefined);
      assert.equal(plain.attributes?.['frontchannel.logout.session.required'], 'true');

      await kc.clients.update({ realm: REALM, id: rep.id! }, { ...rep, attributes: { ...rep.attributes, 'frontchannel.logout.session.required': 'true', 'frontchannel.logout.url': 'https://kc.example/logout2' } });
      rep = (await kc.clients.find({ realm: REALM, clientId: 'kc-fc' }))[0]!;
      assert.equal(rep.attributes?.['frontchannel.logout.session.required'], 'true');
      assert.equal(rep.attributes?.['frontchannel.logout.url'], 'https://kc.example/logout2');
      await kc.clients.update({ realm: REALM, id: rep.id! }, { ...rep, frontchannelLogout: false });
      assert.equal((await ts.store.clients.get(REALM, 'kc-fc'))!.frontchannelLogout.enabled, false);

      const hostile = [
        'javascript:alert(1)',
        'data:text/html,<script>alert(1)</script>',
        'ftp://kc.example/logout',
        'https://kc.example/logout#frag',
        'https://user:pw@kc.example/logout',
        'not a url',
        '/relative/logout',
        'https://kc.example/log out',
        'https://kc.example/\nlogout',
        'http://${application.session.host}/logout',
        `https://kc.example/${'x'.repeat(2100)}`,
      ];
      for (const bad of hostile) {
        const e = await errorOf(kc.clients.update({ realm: REALM, id: rep.id! }, { ...rep, attributes: { ...rep.attributes, 'frontchannel.logout.url': bad } }));
        assert.equal(e.status, 400, bad);
        assert.match(JSON.stringify(e.body), /front-channel logout URL/, bad);
      }
      assert.equal((await ts.store.clients.get(REALM, 'kc-fc'))!.frontchannelLogout.url, 'https://kc.example/logout2', 'left as it was');
      for (const [body, what] of [
        [{ frontchannelLogout: 'yes' }, 'frontchannelLogout must be true or false'],
        [{ attributes: { 'frontchannel.logout.session.required': 'yes' } }, 'frontchannel.logout.session.required must be'],
      ] as const) {
        const e = await errorOf(kc.clients.update({ realm: REALM, id: rep.id! }, { ...rep, ...(body as object) }));
        assert.equal(e.status, 400);
        assert.match(JSON.stringify(e.body), new RegExp(what.replace(/\./g, '\\.')));
      }

      // A URL with markup in its path is stored as given and escaped where the page writes it.
      const odd = `https://kc.example/"><script>alert(1)</script>'`;
      await kc.clients.update({ realm: REALM, id: rep.id! }, { ...rep, frontchannelLogout: true, attributes: { ...rep.attributes, 'frontchannel.logout.url': odd } });
      const a = await signIn('kc-fc');
      const res = await inject(ts.app, a.jar, 'GET', `${LOGOUT}?${new URLSearchParams({ id_token_hint: a.idToken }).toString()}`);
      assert.equal(res.statusCode, 200);
      assert.ok(!res.body.includes('"><script>alert(1)'), 'escaped');
      assert.deepEqual(readPage(res.body).frames, [`${odd}?iss=${encodeURIComponent(issuer)}&sid=${encodeURIComponent(a.sid)}`]);
      assert.equal(csp(res.headers['content-security-policy']).get('frame-src'), 'https://kc.example');
      await kc.clients.del({ realm: REALM, id: rep.id! });
      await kc.clients.del({ realm: REALM, id: 'kc-plain' });
    });
  });
}

for (const dialect of dialects()) {
  test(`front-channel logout: the console's client form sets it, shows it, refuses a bad URL; CSRF checked (${dialect})`, async () => {
    const ts = await setup(dialect);
    try {
      await createClient(ts.store, { realmId: REALM, clientId: 'rp', redirectUris: [REDIRECT], secret: 'rp-secret' });
      const jar = await consoleSignIn(ts, ADMIN);
      const clientUrl = `${CONSOLE}/realms/${REALM}/clients/rp`;
      const csrf = await csrfOf(ts, jar, clientUrl);
      const page = await inject(ts.app, jar, 'GET', clientUrl);
      assert.match(page.body, /<h2>Front-channel logout<\/h2>/);
      assert.match(page.body, /id="frontchannel-on" name="enabled" value="on" >/, 'off by default');
      assert.match(page.body, /id="frontchannel-sid" name="sessionRequired" value="on" checked/, 'iss and sid by default');
      let res = await inject(ts.app, jar, 'POST', `${clientUrl}/frontchannel-logout`, { csrf, enabled: 'on', url: 'https://rp.example/logout#x', sessionRequired: 'on' });
      assert.equal(res.statusCode, 400);
      assert.match(res.body, /front-channel logout URL .* fragment/);
      res = await inject(ts.app, jar, 'POST', `${clientUrl}/frontchannel-logout`, { csrf, enabled: 'on', url: ' https://rp.example/fc?a=1&b=2 ' });
      assert.equal(res.statusCode, 303);
      assert.deepEqual((await ts.store.clients.get(REALM, 'rp'))!.frontchannelLogout, { enabled: true, url: 'https://rp.example/fc?a=1&b=2', sessionRequired: false });
      const shown = (await inject(ts.app, jar, 'GET', clientUrl)).body;
      assert.ok(shown.includes('value="https://rp.example/fc?a=1&amp;b=2"'), 'the URL, escaped');
      assert.match(shown, /id="frontchannel-on" name="enabled" value="on" checked/);
      res = await inject(ts.app, jar, 'POST', `${clientUrl}/frontchannel-logout`, { csrf, url: '', sessionRequired: 'on' });
      assert.equal(res.statusCode, 303);
      assert.deepEqual((await ts.store.clients.get(REALM, 'rp'))!.frontchannelLogout, { enabled: false, url: null, sessionRequired: true });
      // Without the CSRF token nothing changes.
      res = await inject(ts.app, jar, 'POST', `${clientUrl}/frontchannel-logout`, { csrf: 'wrong', enabled: 'on', url: 'https://rp.example/fc' });
      assert.notEqual(res.statusCode, 303);
      assert.equal((await ts.store.clients.get(REALM, 'rp'))!.frontchannelLogout.url, null);
    } finally {
      await ts.close();
    }
  });
}
