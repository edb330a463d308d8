/**
 * Fuzzing of the other browser pages: the /device page, RP-initiated logout (and its confirmation form),
 * the account page (sign-in, revoke, sign-out) and the code display page. Every response is checked by
 * harness.ts (no 5xx, no redirect or link to an unregistered URI, nothing echoed unescaped); at the end,
 * the tokens issued before the fuzzing must still work.
 */
import { describe, test, before, after } from 'node:test';
import fc from 'fast-check';
import type { HTTPMethods } from 'fastify';
import {
  applyOps,
  clientId,
  headerValue,
  junk,
  paramName,
  pct,
  queryOps,
  rarely,
  redirectUri,
  serialization,
  serialize,
  tokenMutation,
  tokenRef,
  type Pair,
} from './arbitraries.js';
import { assertGenuineTokensSurvive, fuzz, realmPath, reportStats, resolveToken, runs, startFuzzServer, type FuzzServer, type GenuineToken } from './harness.js';
import { METHODS, bodyShape, browser, browserJar, cookieHeader, cookieVariant, credentials, csrfOf, csrfPairs, csrfVariant, unescapeHtml, withBody, type Browser } from './browser.js';

/** The suite for one database; one file per database runs it, so each stays within the runner's per-file time limit on a loaded machine. */
export function fuzzSuite(dialect: 'sqlite' | 'postgres'): void {
  describe(`fuzz: device page, logout, account, code page (${dialect})`, () => {
    let fs: FuzzServer;
    let genuine: GenuineToken[];
    before(async () => {
      ({ fs, genuine } = await startFuzzServer(dialect));
    });
    after(() => fs.ts.close());

    test('/device page: user codes, CSRF and bodies', async (t) => {
      const step = fc.record({
        method: fc.oneof({ weight: 6, arbitrary: fc.constantFrom<HTTPMethods>('GET', 'POST', 'POST') }, { weight: 1, arbitrary: fc.constantFrom(...METHODS) }),
        userCode: fc.oneof(
          // real: 0 is this run's fresh device request, 1-4 those started at setup (soon used up).
          { weight: 3, arbitrary: fc.record({ real: fc.nat({ max: 4 }), form: fc.constantFrom('as-is', 'as-is', 'lower', 'spaces', 'no-dash', 'padded', 'extra-char') }) },
          { weight: 2, arbitrary: fc.record({ junk: fc.oneof(junk, fc.stringMatching(/^[BCDFGHJKLMNPQRSTVWXZ]{4}-[BCDFGHJKLMNPQRSTVWXZ]{4}$/)) }) },
        ),
        inQuery: fc.boolean(),
        csrf: csrfVariant,
        cookie: cookieVariant,
        extra: fc.array(fc.tuple(paramName(['user_code', 'csrf']), junk), { maxLength: 2 }),
        body: bodyShape,
        cookieJunk: headerValue,
        path: fc.constantFrom('/device', '/device', '/device/', '/DEVICE', '/device/x'),
      });
      // A happy step enters this run's fresh user code as a user would; the others are mutated.
      const happy = fc.record({ t: fc.constant('happy' as const), form: fc.constantFrom('as-is', 'lower', 'spaces') });
      const spec = fc.record({ browser, fresh: fc.boolean(), steps: fc.array(fc.oneof({ weight: 1, arbitrary: happy }, { weight: 2, arbitrary: step }), { minLength: 1, maxLength: 3 }) });
      await fuzz(t, fs, 'device-page', spec, async (s, io) => {
        let fresh: string | undefined;
        if (s.fresh) {
          const res = await io.send({
            method: 'POST',
            url: realmPath('/protocol/openid-connect/auth/device'),
            headers: { 'content-type': 'application/x-www-form-urlencoded' },
            payload: 'client_id=native-app&scope=openid%20core_data',
          });
          if (res.statusCode === 200) fresh = (res.json() as { user_code: string }).user_code;
        }
        const jar = await browserJar(fs, s.browser);
        const first = await io.send({ method: 'GET', url: realmPath('/device'), headers: jar.cookies.size > 0 ? { cookie: jar.header() } : {} });
        jar.update(first);
        const csrf = csrfOf(first.body);
        for (const st of s.steps) {
          if ('t' in st) {
            if (!fresh || !csrf) continue;
            const code = st.form === 'lower' ? fresh.toLowerCase() : st.form === 'spaces' ? fresh.replace('-', ' ') : fresh;
            const res = await io.send({ method: 'POST', url: realmPath('/device'), headers: { cookie: jar.header(), 'content-type': 'application/x-www-form-urlencoded' }, payload: new URLSearchParams({ csrf, user_code: code }).toString() });
            jar.update(res);
            const location = res.headers.location;
            if (res.statusCode === 303 && typeof location === 'string' && location.startsWith('/auth/')) await io.send({ method: 'GET', url: location, headers: { cookie: jar.header() } });
            continue;
          }
          let code: string;
          if ('real' in st.userCode) {
            const real = (st.userCode.real === 0 && fresh) || fs.devices[st.userCode.real % fs.devices.length]!.userCode;
            code = { 'as-is': real, lower: real.toLowerCase(), spaces: real.replace('-', ' '), 'no-dash': real.replace('-', ''), padded: `  ${real}  `, 'extra-char': `${real}B` }[st.userCode.form]!;
          } else code = st.userCode.junk;
          const headers = cookieHeader(st.cookie, jar, undefined, st.cookieJunk);
          const query = st.inQuery ? `?user_code=${pct(code)}` : '';
          const url = `${realmPath(st.path)}${query}`;
          if (st.method === 'GET' || st.method === 'HEAD') {
            await io.send({ method: st.method, url, headers });
          } else {
            const b = withBody([...csrfPairs(st.csrf, csrf, undefined), ['user_code', code], ...st.extra], st.body);
            const res = await io.send({ method: st.method, url, headers: { ...headers, ...b.headers }, ...(b.payload !== undefined ? { payload: b.payload } : {}) });
            if (st.cookie === 'own') jar.update(res);
            // The user code was accepted: on to sign-in or consent (the login-actions property fuzzes those).
            const location = res.headers.location;
            if (res.statusCode === 303 && typeof location === 'string' && location.startsWith('/auth/')) await io.send({ method: 'GET', url: location, headers: { cookie: jar.header() } });
          }
        }
      }, runs(600));
    });

    test('logout: hints, post-logout redirect URIs, state, confirmation form', async (t) => {
      const BACK = 'https://rp.example/after-logout';
      const postLogoutUri = fc.oneof(fc.constantFrom(BACK, `${BACK}/`, `${BACK}?x=1`, 'https://RP.example/after-logout', `${BACK}#x`, `${BACK}.evil.example`, `${BACK}%00`, 'https://rp.example/cb?tenant=1'), redirectUri);
      const spec = fc.record({
        method: fc.oneof({ weight: 6, arbitrary: fc.constantFrom<HTTPMethods>('GET', 'POST') }, { weight: 1, arbitrary: fc.constantFrom(...METHODS) }),
        // Requests built from valid ones: the registered post-logout redirect URI with client_id or with
        // an ID token of the rp client as the hint; then mutated.
        base: fc.constantFrom('client-redirect', 'hint-redirect', 'client-only', 'hint-only', 'empty'),
        hint: fc.oneof(
          { weight: 3, arbitrary: fc.record({ ref: fc.constant('decoy' as const), client: fc.constant('rp'), kind: fc.constant('id' as const), mutation: fc.option(tokenMutation, { freq: 3 }) }) },
          { weight: 1, arbitrary: tokenRef },
        ),
        state: junk,
        ops: queryOps(['id_token_hint', 'post_logout_redirect_uri', 'client_id', 'state'], { post_logout_redirect_uri: postLogoutUri, client_id: clientId, state: junk }, 3),
        serial: serialization,
        body: bodyShape,
        browser: fc.constantFrom<Browser | 'none'>('none', 'fresh', 'solo', 'multi', 'loner'),
        confirm: fc.option(fc.record({ csrf: csrfVariant, cookie: cookieVariant, mutate: queryOps(['client_id', 'post_logout_redirect_uri', 'state', 'csrf'], { post_logout_redirect_uri: postLogoutUri }, 3), body: bodyShape, cookieJunk: headerValue })),
      });
      const LOGOUT = realmPath('/protocol/openid-connect/logout');
      await fuzz(t, fs, 'logout', spec, async (s, io) => {
        const jar = s.browser === 'none' ? undefined : await browserJar(fs, s.browser);
        if (s.browser !== 'none' && s.browser !== 'fresh') fs.sessionSpent(s.browser);
        const hint = async (): Promise<string> => (await resolveToken(fs, s.hint)).value;
        const pairs: Pair[] =
          s.base === 'client-redirect'
            ? [['client_id', 'rp'], ['post_logout_redirect_uri', BACK], ['state', s.state]]
            : s.base === 'hint-redirect'
              ? [['id_token_hint', await hint()], ['post_logout_redirect_uri', BACK], ['state', s.state]]
              : s.base === 'client-only'
                ? [['client_id', 'rp']]
                : s.base === 'hint-only'
                  ? [['id_token_hint', await hint()]]
                  : [];
        const params = applyOps(pairs, s.ops);
        const headers: Record<string, string> = jar && jar.cookies.size > 0 ? { cookie: jar.header() } : {};
        const res =
          s.method === 'GET' || s.method === 'HEAD'
            ? await io.send({ method: s.method, url: `${LOGOUT}?${serialize(params, s.serial)}`, headers })
            : await (async () => {
                const b = withBody(params, s.body);
                return io.send({ method: s.method, url: LOGOUT, headers: { ...headers, ...b.headers }, ...(b.payload !== undefined ? { payload: b.payload } : {}) });
              })();
        if (!s.confirm || !jar) return;
        jar.update(res);
        // The confirmation form echoes the request's fields as hidden inputs.
        const hidden: Pair[] = [...res.body.matchAll(/<input type="hidden" name="([^"]*)" value="([^"]*)">/g)].map((m) => [unescapeHtml(m[1]!), unescapeHtml(m[2]!)]);
        const right = hidden.find(([k]) => k === 'csrf')?.[1];
        const fields = applyOps([...csrfPairs(s.confirm.csrf, right, undefined), ...hidden.filter(([k]) => k !== 'csrf')], s.confirm.mutate);
        const b = withBody(fields, s.confirm.body);
        await io.send({ method: 'POST', url: `${LOGOUT}/confirm`, headers: { ...cookieHeader(s.confirm.cookie, jar, undefined, s.confirm.cookieJunk), ...b.headers }, ...(b.payload !== undefined ? { payload: b.payload } : {}) });
      }, runs(500));
    });

    test('account page: sign-in, revoke and sign-out forms with bad CSRF and garbage', async (t) => {
      const orgIds = await Promise.all(['acme', 'beta'].map(async (a) => (await fs.ts.store.organizations.findByAlias('test', a))?.id ?? a));
      const step = fc.record({
        path: fc.constantFrom('', '', '/login', '/revoke', '/sessions/end', '/x', '/', '/login/'),
        method: fc.oneof({ weight: 6, arbitrary: fc.constantFrom<HTTPMethods>('GET', 'POST', 'POST') }, { weight: 1, arbitrary: fc.constantFrom(...METHODS) }),
        csrf: csrfVariant,
        cookie: cookieVariant,
        credentials: fc.option(credentials),
        clientId: fc.option(clientId),
        organizationId: fc.option(fc.oneof(fc.constantFrom(...orgIds), junk)),
        sessionId: fc.option(fc.oneof(fc.uuid(), junk)),
        extra: fc.array(fc.tuple(paramName(['client_id', 'organization_id', 'session_id', 'csrf', 'username', 'password']), junk), { maxLength: 2 }),
        body: bodyShape,
        cookieJunk: headerValue,
        query: rarely(junk, 4),
      });
      // multi's and loner's grants only: the fuzz never signs in as alice (it does not know her password),
      // so it cannot revoke the genuine tokens from this page.
      const spec = fc.record({ browser: fc.constantFrom<Browser>('fresh', 'multi', 'multi', 'loner'), steps: fc.array(step, { minLength: 1, maxLength: 3 }) });
      await fuzz(t, fs, 'account', spec, async (s, io) => {
        const jar = await browserJar(fs, s.browser);
        const first = await io.send({ method: 'GET', url: realmPath('/account'), headers: jar.cookies.size > 0 ? { cookie: jar.header() } : {} });
        jar.update(first);
        const csrf = csrfOf(first.body);
        for (const st of s.steps) {
          if (s.browser !== 'fresh' && st.method === 'POST' && (st.path.startsWith('/login') || st.path === '/sessions/end')) fs.sessionSpent(s.browser);
          const headers = cookieHeader(st.cookie, jar, undefined, st.cookieJunk);
          const url = `${realmPath('/account')}${st.path}${st.query === null ? '' : `?${pct(st.query)}`}`;
          if (st.method === 'GET' || st.method === 'HEAD') {
            await io.send({ method: st.method, url, headers });
            continue;
          }
          const fields: Pair[] = [...csrfPairs(st.csrf, csrf, undefined)];
          if (st.credentials) fields.push(['username', st.credentials.username], ['password', st.credentials.password]);
          if (st.clientId !== null) fields.push(['client_id', st.clientId]);
          if (st.organizationId !== null) fields.push(['organization_id', st.organizationId]);
          if (st.sessionId !== null) fields.push(['session_id', st.sessionId]);
          fields.push(...st.extra);
          const b = withBody(fields, st.body);
          const res = await io.send({ method: st.method, url, headers: { ...headers, ...b.headers }, ...(b.payload !== undefined ? { payload: b.payload } : {}) });
          if (st.cookie === 'own') jar.update(res);
        }
      }, runs(400));
    });

    test('code display page: codes, errors and descriptions', async (t) => {
      const spec = fc.record({
        code: fc.option(tokenRef, { freq: 3 }),
        error: fc.option(fc.oneof(fc.constantFrom('access_denied', 'invalid_scope', 'server_error', 'toString', '__proto__', 'constructor'), junk)),
        description: fc.option(junk),
        ops: queryOps(['code', 'error', 'error_description', 'state', 'iss'], { state: junk, iss: junk }, 3),
        serial: serialization,
        method: fc.oneof({ weight: 8, arbitrary: fc.constant<HTTPMethods>('GET') }, { weight: 1, arbitrary: fc.constantFrom(...METHODS) }),
        path: fc.constantFrom('/authentication_code', '/authentication_code', '/authentication_code/', '/AUTHENTICATION_CODE', '/auth/resources/code-page.js', '/auth/resources/realmgate.css'),
      });
      await fuzz(t, fs, 'code-page', spec, async (s, io) => {
        const pairs: Pair[] = [];
        if (s.code) pairs.push(['code', (await resolveToken(fs, s.code)).value]);
        if (s.error !== null) pairs.push(['error', s.error]);
        if (s.description !== null) pairs.push(['error_description', s.description]);
        await io.send({ method: s.method, url: `${s.path}?${serialize(applyOps(pairs, s.ops), s.serial)}` });
      }, runs(600));
    });

    test('tokens issued before the fuzzing still work', async (t) => {
      reportStats(t, fs);
      await assertGenuineTokensSurvive(fs, genuine);
    });
  });
}

