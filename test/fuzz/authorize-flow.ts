/**
 * Fuzzing of the authorization endpoint (GET and POST, requests mutated from valid ones, with and without
 * a session) and of the login-actions pages and forms that follow it (sign-in, consent, organization).
 * Every response is checked by harness.ts (no 5xx, no redirect or link to an unregistered URI, the
 * authorization endpoint redirecting only to the request's registered redirect_uri, nothing echoed
 * unescaped); at the end, the tokens issued before the fuzzing must still work.
 */
import { describe, test, before, after } from 'node:test';
import fc from 'fast-check';
import type { HTTPMethods } from 'fastify';
import { CookieJar, pageKind } from '../helpers/flow.js';
import {
  AUTHORIZE_PARAMS,
  applyOps,
  authorizeSetters,
  headerValue,
  junk,
  paramName,
  pct,
  queryOps,
  rarely,
  serialization,
  serialize,
  tokenMutation,
  mutateToken,
  validAuthorizePairs,
  type Pair,
} from './arbitraries.js';
import { FUZZ_PASSWORD } from './constants.js';
import { assertGenuineTokensSurvive, fuzz, realmPath, reportStats, runs, startFuzzServer, type FuzzServer, type GenuineToken, type PoolUser } from './harness.js';
import { AUTH, CLIENTS, METHODS, PKCE_CHALLENGE, bodyShape, browser, browserJar, cookieHeader, cookieVariant, credentials, csrfOf, csrfPairs, csrfVariant, withBody, type Browser } from './browser.js';

/**
 * One part of the suite for one database; one file per part and database runs it, so that each stays
 * within the runner's per-file time limit on a loaded machine: under `stress --cpu 2` on PostgreSQL the
 * whole suite took over 120 s, and so did the login-actions property alone (its sign-ins hash passwords
 * with argon2id), which therefore runs as two halves of 350 runs, each with its own seed.
 */
export type FuzzPart = 'authorize' | 'login-actions-1' | 'login-actions-2';
export function fuzzSuite(dialect: 'sqlite' | 'postgres', part: FuzzPart): void {
  // The other parts' tests are not registered at all (their own files run them).
  const only = (name: 'authorize' | 'login-actions') => (title: string, fn: (t: import('node:test').TestContext) => Promise<void>): void => {
    if (part === name || part.startsWith(`${name}-`)) test(title, fn);
  };
  const half = part === 'login-actions-1' ? 1 : 2;
  describe(`fuzz: ${part === 'authorize' ? 'authorization endpoint' : `login-actions, half ${half} of 2`} (${dialect})`, () => {
    let fs: FuzzServer;
    let genuine: GenuineToken[];
    before(async () => {
      ({ fs, genuine } = await startFuzzServer(dialect));
    });
    after(() => fs.ts.close());

    only('authorize')('authorization endpoint: mutated requests, GET and POST, with and without a session', async (t) => {
      const spec = fc.record({
        client: fc.constantFrom(...CLIENTS),
        redirect: fc.nat(),
        ops: queryOps(AUTHORIZE_PARAMS, authorizeSetters, 5),
        serial: serialization,
        method: fc.constantFrom<HTTPMethods>('GET', 'GET', 'GET', 'POST', 'POST', 'HEAD', 'PUT'),
        body: bodyShape,
        browser: fc.constantFrom<Browser | 'junk-cookie'>('fresh', 'fresh', 'solo', 'multi', 'loner', 'junk-cookie'),
        cookieJunk: headerValue,
        fragment: rarely(junk, 8),
      });
      await fuzz(t, fs, 'authorize', spec, async (s, io) => {
        const c = fs.clients.get(s.client)!;
        const pairs = applyOps(validAuthorizePairs(c.id, c.redirectUris[s.redirect % c.redirectUris.length]!, c.public ? PKCE_CHALLENGE : undefined), s.ops);
        const jar = s.browser === 'junk-cookie' ? undefined : await browserJar(fs, s.browser);
        const headers: Record<string, string> = s.browser === 'junk-cookie' ? { cookie: s.cookieJunk } : jar && jar.cookies.size > 0 ? { cookie: jar.header() } : {};
        const fragment = s.fragment === null ? '' : `#${s.fragment}`;
        if (s.method === 'GET' || s.method === 'HEAD') {
          await io.send({ method: s.method, url: `${AUTH}?${serialize(pairs, s.serial)}${fragment}`, headers });
        } else {
          const b = withBody(pairs, s.body);
          await io.send({ method: s.method, url: AUTH, headers: { ...headers, ...b.headers }, ...(b.payload !== undefined ? { payload: b.payload } : {}) });
        }
      }, runs(3000));
    });

    only('authorize')('pushed authorization requests: mutated pushes, then the request_uri with mutated parameters beside it', async (t) => {
      // RFC 9126: a push answers in JSON (never a redirect); the request_uri it gives is then used at the
      // authorization endpoint with junk beside it, which must change nothing (the harness's oracle
      // checks any redirect against the pushed client and redirect_uri, recorded in fs.pushed).
      const spec = fc.record({
        client: fc.constantFrom(...CLIENTS),
        redirect: fc.nat(),
        ops: fc.option(queryOps(AUTHORIZE_PARAMS, authorizeSetters, 3), { freq: 2 }),
        auth: fc.constantFrom('own', 'own', 'own', 'none', 'wrong'),
        body: fc.option(bodyShape, { freq: 4 }),
        use: fc.constantFrom('plain', 'junk-beside', 'other-client', 'twice'),
        beside: queryOps(AUTHORIZE_PARAMS, authorizeSetters, 3),
        browser: fc.constantFrom<Browser>('fresh', 'solo', 'multi'),
      });
      await fuzz(t, fs, 'pushed authorization requests', spec, async (s, io) => {
        const c = fs.clients.get(s.client)!;
        const redirectUri = c.redirectUris[s.redirect % c.redirectUris.length]!;
        const pairs = applyOps(validAuthorizePairs(c.id, redirectUri, PKCE_CHALLENGE), s.ops ?? []).filter(([k]) => c.public || k !== 'client_id');
        const basicOf = (id: string, secret: string): string => `Basic ${Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`).toString('base64')}`;
        const secret = s.auth === 'wrong' ? 'wrong-secret' : c.secret!;
        const viaBasic = !c.public && s.auth !== 'none' && c.authMethod !== 'client_secret_post';
        const authHeader: Record<string, string> = viaBasic ? { authorization: basicOf(c.id, secret) } : {};
        if (!c.public && s.auth !== 'none' && !viaBasic) pairs.push(['client_id', c.id], ['client_secret', secret]);
        const b = s.body === null ? { headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: new URLSearchParams(pairs).toString() } : withBody(pairs, s.body);
        const res = await io.send({ method: 'POST', url: realmPath('/protocol/openid-connect/ext/par/request'), headers: { ...authHeader, ...b.headers }, ...(b.payload !== undefined ? { payload: b.payload } : {}) });
        if (res.statusCode !== 201) return;
        const requestUri = String(JSON.parse(res.body).request_uri);
        // What was pushed, as the server read it: the oracle's truth for the redirect that may follow.
        const pushedRedirect = pairs.filter(([k]) => k === 'redirect_uri');
        if (pushedRedirect.length === 1) fs.pushed.set(requestUri, { clientId: c.id, redirectUri: pushedRedirect[0]![1] });
        const jar = await browserJar(fs, s.browser);
        const other = CLIENTS.find((x) => x !== c.id)!;
        const beside = s.use === 'junk-beside' ? applyOps(validAuthorizePairs(c.id, c.redirectUris[(s.redirect + 1) % c.redirectUris.length]!), s.beside).filter(([k]) => k !== 'client_id' && k !== 'request_uri') : [];
        const query: Pair[] = [['client_id', s.use === 'other-client' ? other : c.id], ['request_uri', requestUri], ...beside];
        for (let i = 0; i < (s.use === 'twice' ? 2 : 1); i++) {
          const r = await io.send({ method: 'GET', url: `${AUTH}?${new URLSearchParams(query).toString()}`, headers: jar.cookies.size > 0 ? { cookie: jar.header() } : {} });
          if (i === 1 && r.statusCode !== 400) throw new Error(`a request_uri used twice was accepted: ${r.statusCode}`);
          if (s.use === 'other-client' && r.statusCode !== 400) throw new Error(`another client's request_uri was accepted: ${r.statusCode}`);
        }
      }, runs(600));
    });

    only('login-actions')('login-actions: pages and forms with bad ids, missing or forged CSRF, garbage bodies', async (t) => {
      // A step either takes the flow one step further as a user would (so that the later steps reach
      // the consent and organization forms, and the end of the flow), or sends a mutated request.
      const mutant = fc.record({
        t: fc.constant('mutant' as const),
        target: fc.oneof(
          { weight: 6, arbitrary: fc.constant({ t: 'own' as const }) },
          { weight: 1, arbitrary: fc.constant({ t: 'other' as const }) },
          { weight: 2, arbitrary: fc.record({ t: fc.constant('mutated' as const), m: tokenMutation }) },
          { weight: 2, arbitrary: fc.record({ t: fc.constant('junk' as const), id: junk, raw: fc.boolean() }) },
        ),
        action: fc.oneof({ weight: 4, arbitrary: fc.constant('$page') }, { weight: 3, arbitrary: fc.constantFrom('', '/login', '/consent', '/organization', '/login/', '/LOGIN', '/registration', '/verify-email', '/x', '/login/extra', '/..', '/%2e%2e/login') }),
        method: fc.oneof({ weight: 8, arbitrary: fc.constantFrom<HTTPMethods>('GET', 'POST', 'POST') }, { weight: 1, arbitrary: fc.constantFrom(...METHODS) }),
        cookie: cookieVariant,
        csrf: csrfVariant,
        credentials: fc.option(credentials, { freq: 2 }),
        decision: fc.option(fc.oneof(fc.constantFrom('allow', 'deny', 'ALLOW', '', ' allow', 'allow\u0000'), junk)),
        organization: fc.option(fc.oneof(fc.constantFrom('acme', 'beta', 'ACME', 'nope', ''), junk)),
        extra: fc.array(fc.tuple(paramName(['username', 'password', 'decision', 'organization', 'csrf']), junk), { maxLength: 3 }),
        body: bodyShape,
        cookieJunk: headerValue,
      });
      const happy = fc.record({ t: fc.constant('happy' as const), decision: fc.constantFrom('allow', 'allow', 'deny'), organization: fc.constantFrom('acme', 'beta') });
      const spec = fc.record({
        client: fc.constantFrom(...CLIENTS),
        browser,
        as: fc.constantFrom<PoolUser>('solo', 'multi', 'loner'),
        prompt: fc.option(fc.constantFrom('login', 'consent', 'select_account')),
        scope: fc.option(fc.constantFrom('openid', 'openid exports', 'core_data offline_access', 'openid profile email core_data exports offline_access')),
        steps: fc.array(fc.oneof({ weight: 2, arbitrary: happy }, { weight: 3, arbitrary: mutant }), { minLength: 1, maxLength: 5 }),
      });
      await fuzz(t, fs, `login-actions (${half} of 2)`, spec, async (s, io) => {
        const c = fs.clients.get(s.client)!;
        const jar = await browserJar(fs, s.browser);
        // Where the browser is: the pending request, its CSRF token and the page it shows.
        interface Place {
          id?: string;
          csrf?: string;
          page?: string;
        }
        const show = async (j: CookieJar, location: string, place: Place): Promise<void> => {
          const m = /\/login-actions\/([^/?#]+)$/.exec(location);
          if (!m) return;
          const page = await io.send({ method: 'GET', url: location, headers: { cookie: j.header() } });
          j.update(page);
          place.id = decodeURIComponent(m[1]!);
          place.csrf = csrfOf(page.body) ?? place.csrf;
          place.page = pageKind(page.body);
        };
        const open = async (j: CookieJar): Promise<Place> => {
          const extra: Pair[] = [...(s.prompt ? [['prompt', s.prompt] as Pair] : []), ...(s.scope ? [['scope', s.scope] as Pair] : [])];
          const pairs = applyOps(validAuthorizePairs(c.id, c.redirectUris[0]!, c.public ? PKCE_CHALLENGE : undefined), extra.map(([key, value]) => ({ op: 'set' as const, key, value })));
          const res = await io.send({ method: 'GET', url: `${AUTH}?${serialize(pairs, { modes: ['enc'], garbage: null, garbageAt: 0 })}`, headers: j.cookies.size > 0 ? { cookie: j.header() } : {} });
          j.update(res);
          const place: Place = {};
          await show(j, String(res.headers.location ?? ''), place);
          return place;
        };
        const own = await open(jar);
        let other: (Place & { jar: CookieJar }) | undefined;
        for (const st of s.steps) {
          if (st.t === 'happy') {
            if (!own.id || !own.csrf) continue;
            const base = `${realmPath('/login-actions/')}${encodeURIComponent(own.id)}`;
            const form: Record<string, string> | undefined =
              own.page === 'login'
                ? { csrf: own.csrf, username: s.as, password: FUZZ_PASSWORD }
                : own.page === 'consent'
                  ? { csrf: own.csrf, decision: st.decision }
                  : own.page === 'organization'
                    ? { csrf: own.csrf, organization: st.organization }
                    : undefined;
            if (!form) continue;
            if (own.page === 'login' && s.browser !== 'fresh') fs.sessionSpent(s.browser);
            const action = own.page === 'login' ? '/login' : own.page === 'consent' ? '/consent' : '/organization';
            const res = await io.send({ method: 'POST', url: base + action, headers: { cookie: jar.header(), 'content-type': 'application/x-www-form-urlencoded' }, payload: new URLSearchParams(form).toString() });
            jar.update(res);
            own.page = undefined;
            await show(jar, String(res.headers.location ?? ''), own);
            continue;
          }
          if ((st.target.t === 'other' || st.cookie === 'other') && !other) {
            const j = new CookieJar();
            other = { jar: j, ...(await open(j)) };
          }
          const id = own.id ?? 'no-interaction';
          let segment: string;
          switch (st.target.t) {
            case 'own':
              segment = encodeURIComponent(id);
              break;
            case 'other':
              segment = encodeURIComponent(other?.id ?? id);
              break;
            case 'mutated':
              segment = pct(mutateToken(id, st.target.m).value);
              break;
            case 'junk':
              segment = st.target.raw ? st.target.id : pct(st.target.id);
              break;
          }
          // '$page': the form of the page the browser shows (login, consent or organization).
          const action = st.action !== '$page' ? st.action : own.page === 'consent' ? '/consent' : own.page === 'organization' ? '/organization' : '/login';
          const fields: Pair[] = [...csrfPairs(st.csrf, own.csrf, other?.csrf)];
          if (st.credentials) fields.push(['username', st.credentials.username], ['password', st.credentials.password]);
          if (st.decision !== null) fields.push(['decision', st.decision]);
          if (st.organization !== null) fields.push(['organization', st.organization]);
          fields.push(...st.extra);
          const headers = cookieHeader(st.cookie, jar, other?.jar, st.cookieJunk);
          const url = `${realmPath('/login-actions/')}${segment}${action}`;
          if (st.method === 'POST' && action.toLowerCase().startsWith('/login') && s.browser !== 'fresh') fs.sessionSpent(s.browser);
          const res =
            st.method === 'GET' || st.method === 'HEAD'
              ? await io.send({ method: st.method, url, headers })
              : await (async () => {
                  const b = withBody(fields, st.body);
                  return io.send({ method: st.method, url, headers: { ...headers, ...b.headers }, ...(b.payload !== undefined ? { payload: b.payload } : {}) });
                })();
          if (st.cookie === 'own') {
            jar.update(res);
            if (st.target.t === 'own' && res.statusCode === 303) await show(jar, String(res.headers.location ?? ''), own);
          }
        }
      }, runs(350));
    });

    test('tokens issued before the fuzzing still work', async (t) => {
      reportStats(t, fs);
      await assertGenuineTokensSurvive(fs, genuine);
    });
  });
}

