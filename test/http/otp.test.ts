import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { startTestServer, basic, realmPath, PASSWORD, type TestServer } from '../helpers/server.js';
import { CookieJar, authorizeQuery, driveFlow, inject, pageKind, parseForm } from '../helpers/flow.js';
import { dialects } from '../helpers/db.js';
import { createUser } from '../../src/admin/operations.js';
import { enrollOtp } from '../../src/admin/operations/otp.js';
import { base32, hotp, timeStep } from '../../src/crypto/totp.js';
import { OTP_TOOLS_MISSING, oathtoolCode } from '../helpers/otp.js';

// The password grant of a user with an authenticator app (Keycloak's direct grant with its OTP step: the
// code in `otp`, or `totp`), over HTTP; codes computed by Debian's oathtool. And the throttling of code
// guesses: a lock after the realm's threshold that the right code does not lift.
for (const dialect of dialects()) {
  describe(`authenticator codes at the password grant (${dialect})`, { skip: OTP_TOOLS_MISSING }, () => {
    let ts: TestServer;
    let userId: string;
    const key = randomBytes(20);
    const secret = base32(key);
    const now = (): number => Math.floor(ts.clock.nowMs() / 1000);
    before(async () => {
      ts = await startTestServer({ dialect, listen: true });
      await ts.store.clients.update('test', ts.client.id, { directAccessGrantsEnabled: true });
      ts.services.cache.clear();
      ({ id: userId } = await createUser(ts.store, { realmId: 'test', username: 'paula', password: 'paula password 1' }));
      const user = (await ts.store.users.get(userId))!;
      // Set up as the setup page does: the first code proves the key (and is spent).
      assert.equal(await enrollOtp(ts.store, { user, key, code: oathtoolCode(secret, now()), nowSeconds: now() }), undefined);
      ts.clock.advance(30);
    });
    after(() => ts.close());

    async function grant(form: Record<string, string>, ip?: string): Promise<{ status: number; body: Record<string, unknown>; retryAfter: string | null }> {
      const res = await fetch(`${ts.baseUrl}${realmPath('/protocol/openid-connect/token')}`, {
        method: 'POST',
        headers: { authorization: basic(ts.client.id, ts.client.secret), 'content-type': 'application/x-www-form-urlencoded', ...(ip ? { 'x-forwarded-for': ip } : {}) },
        body: new URLSearchParams({ grant_type: 'password', username: 'paula', password: 'paula password 1', scope: 'openid', ...form }),
      });
      return { status: res.status, body: (await res.json()) as Record<string, unknown>, retryAfter: res.headers.get('retry-after') };
    }
    const wrong = (): string => String((Number(oathtoolCode(secret, now())) + 500_000) % 1_000_000).padStart(6, '0');

    test('no code, a wrong one or a spent one is invalid_grant with Keycloak\'s words; the current code (otp or totp) gets tokens', async () => {
      const forms: Array<Record<string, string>> = [{}, { otp: wrong() }, { otp: 'abcdef' }, { otp: '1'.repeat(40) }];
      for (const form of forms) {
        const r = await grant(form);
        assert.equal(r.status, 400, JSON.stringify(form));
        assert.deepEqual(r.body, { error: 'invalid_grant', error_description: 'Invalid user credentials' });
      }
      // Three wrong guesses: the next one waits a little (the slow-down before a lock).
      ts.clock.advance(3);
      const code = oathtoolCode(secret, now());
      const ok = await grant({ otp: code });
      assert.equal(ok.status, 200, JSON.stringify(ok.body));
      assert.ok(ok.body.access_token);
      // The same code again: spent.
      assert.equal((await grant({ otp: code })).body.error, 'invalid_grant');
      ts.clock.advance(30);
      // Keycloak's older parameter name.
      assert.equal((await grant({ totp: oathtoolCode(secret, now()) })).status, 200);
      // The code of the next step is accepted (one step of clock drift), the one after it is not.
      assert.equal((await grant({ otp: oathtoolCode(secret, now() + 60) })).status, 400);
      assert.equal((await grant({ otp: oathtoolCode(secret, now() + 30) })).status, 200);
      ts.clock.advance(60);
    });

    test('guesses are throttled per user: after the threshold even the right code is refused until the lock ends, from any address', async () => {
      // Five wrong codes (the realm's threshold), from five addresses: a lock of the user's codes.
      for (let i = 0; i < 5; i++) {
        assert.equal((await grant({ otp: wrong() }, `10.9.0.${i}`)).status, 400);
        // Past each slow-down, so that every guess is checked.
        ts.clock.advance(10);
      }
      const locked = await grant({ otp: oathtoolCode(secret, now()) }, '10.9.1.1');
      assert.equal(locked.status, 400);
      assert.match(String(locked.body.error_description), /locked/);
      assert.ok(Number(locked.retryAfter) > 0, 'Retry-After');
      // A burst of parallel guesses during the lock checks none of them.
      const burst = await Promise.all(Array.from({ length: 20 }, (_, i) => grant({ otp: hotp(key, timeStep(now(), 30) + 5, 6, 'HmacSHA1') }, `10.9.2.${i}`)));
      assert.ok(burst.every((r) => r.status === 400 && /locked/.test(String(r.body.error_description))));
      // After the lock: the right code signs in, and the count starts over.
      ts.clock.advance(Number(locked.retryAfter) + 1);
      assert.equal((await grant({ otp: oathtoolCode(secret, now()) })).status, 200);
      const events = await ts.store.events.list('test', { userId, types: ['LOCKOUT'] });
      assert.equal(events.length, 1);
      assert.match(events[0]!.reason ?? '', /one-time codes of the user locked/);
    });

    test('a parallel burst of wrong codes checks at most the threshold, and the right code inside it does not get through', async () => {
      ts.clock.advance(3600);
      const subject = `otp:${userId}`;
      const burst = Array.from({ length: 11 }, (_, i) => grant({ otp: wrong() }, `10.8.0.${i}`));
      let done = false;
      void Promise.all(burst).then(() => (done = true));
      // The right code arrives once the burst has used up the threshold (or slowed the user's codes down),
      // while it is still in flight: a deterministic order, not a race the right code may win.
      for (;;) {
        const s = (await ts.store.loginFailures.get('test', [subject])).get(subject);
        if (s && (s.failures >= 5 || s.blockedUntil > now())) break;
        assert.ok(!done, `the burst ended without reaching the threshold: ${JSON.stringify(s)}`);
        await new Promise((r) => setImmediate(r));
      }
      const right = await grant({ otp: oathtoolCode(secret, now()) }, '10.8.1.1');
      assert.equal(right.status, 400, 'the right code inside a throttled burst does not get tokens');
      assert.ok(Number(right.retryAfter) > 0, 'Retry-After');
      const results = await Promise.all(burst);
      // A code that was checked and found wrong says "Invalid user credentials"; one refused unchecked (the
      // lock, or the slow-down before it) says why, with Retry-After.
      const checked = results.filter((r) => r.status === 400 && r.body.error_description === 'Invalid user credentials').length;
      const refused = results.filter((r) => r.status === 400 && Number(r.retryAfter) > 0).length;
      assert.equal(checked + refused, 11, JSON.stringify(results.map((r) => r.body)));
      assert.ok(checked >= 1 && checked <= 5, `${checked} codes were checked`);
      const state = (await ts.store.loginFailures.get('test', [subject])).get(subject);
      assert.ok(state && state.failures <= 5 && (state.lockouts > 0 || state.blockedUntil > now()), JSON.stringify(state));
    });

    test('a user who must still set up an authenticator gets "Account is not fully set up"', async () => {
      await createUser(ts.store, { realmId: 'test', username: 'newbie', password: 'newbie password 1', requiredActions: ['CONFIGURE_TOTP'] });
      const r = await fetch(`${ts.baseUrl}${realmPath('/protocol/openid-connect/token')}`, {
        method: 'POST',
        headers: { authorization: basic(ts.client.id, ts.client.secret), 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ grant_type: 'password', username: 'newbie', password: 'newbie password 1' }),
      });
      assert.equal(r.status, 400);
      assert.deepEqual(await r.json(), { error: 'invalid_grant', error_description: 'Account is not fully set up' });
    });
  });
}

// The sign-in pages with an authenticator, over HTTP with a cookie jar: the order of the steps (password,
// code, new password, setup), no session before the last, and the account page's proofs of each stage.
for (const dialect of dialects()) {
  describe(`authenticator steps of the sign-in pages (${dialect})`, { skip: OTP_TOOLS_MISSING }, () => {
    let ts: TestServer;
    const now = (): number => Math.floor(ts.clock.nowMs() / 1000);
    const hasSession = (jar: CookieJar): boolean => jar.cookies.has('RG_SESSION') || jar.cookies.has('RG_SESSION_STATE');
    const keyOf = (html: string): string => /<code id="otp-key">([^<]*)<\/code>/.exec(html)![1]!.replace(/\s/g, '');
    const proofOf = (html: string): string => /name="proof" value="([^"]*)"/.exec(html)![1]!;
    before(async () => {
      ts = await startTestServer({ dialect });
    });
    after(() => ts.close());

    /** A user with an authenticator (set up a step ago) and the given required actions. */
    async function userWithOtp(username: string, requiredActions: Array<'UPDATE_PASSWORD' | 'CONFIGURE_TOTP'> = []): Promise<{ id: string; secret: string }> {
      const { id } = await createUser(ts.store, { realmId: 'test', username, password: PASSWORD, orgAliases: ['acme'] });
      const key = randomBytes(20);
      const secret = base32(key);
      assert.equal(await enrollOtp(ts.store, { user: (await ts.store.users.get(id))!, key, code: oathtoolCode(secret, now()), nowSeconds: now() }), undefined);
      // Required by an administrator afterwards (a setup ends CONFIGURE_TOTP).
      await ts.store.users.update(id, { requiredActions });
      ts.clock.advance(30);
      return { id, secret };
    }

    test('authorization: password, code, then the new password; the session only after the last; prompt=none says what is missing', async () => {
      const { id, secret } = await userWithOtp('olga', ['UPDATE_PASSWORD']);
      const jar = new CookieJar();
      const start = await inject(ts.app, jar, 'GET', `${realmPath('/protocol/openid-connect/auth')}?${authorizeQuery(ts)}`);
      const login = parseForm((await inject(ts.app, jar, 'GET', start.headers.location as string)).body);
      const afterPassword = await inject(ts.app, jar, 'POST', login.action, { csrf: login.csrf, username: 'olga', password: PASSWORD });
      assert.equal(afterPassword.statusCode, 303);
      const codePage = await inject(ts.app, jar, 'GET', afterPassword.headers.location as string);
      assert.equal(pageKind(codePage.body), 'otp');
      assert.ok(!hasSession(jar) && !jar.cookies.has('RG_DEVICE'));
      const form = parseForm(codePage.body);
      // The update-password form cannot be reached around the code.
      const skipped = await inject(ts.app, jar, 'POST', form.action.replace(/\/otp$/, '/update-password'), { csrf: form.csrf, 'password-new': 'a new password 1', 'password-confirm': 'a new password 1' });
      assert.equal(pageKind((await inject(ts.app, jar, 'GET', (skipped.headers.location as string) ?? start.headers.location)).body), 'otp');
      assert.deepEqual((await ts.store.users.get(id))!.requiredActions, ['UPDATE_PASSWORD']);
      // Without the CSRF token: refused.
      assert.equal((await inject(ts.app, jar, 'POST', form.action, { otp: oathtoolCode(secret, now()) })).statusCode, 403);
      const wrong = await inject(ts.app, jar, 'POST', form.action, { csrf: form.csrf, otp: '000000' === oathtoolCode(secret, now()) ? '111111' : '000000' });
      assert.equal(wrong.statusCode, 400);
      assert.equal(pageKind(wrong.body), 'otp');
      const right = await inject(ts.app, jar, 'POST', form.action, { csrf: form.csrf, otp: oathtoolCode(secret, now()) });
      assert.equal(right.statusCode, 303);
      assert.equal(pageKind((await inject(ts.app, jar, 'GET', right.headers.location as string)).body), 'update-password');
      assert.ok(!hasSession(jar), 'no session before the new password');
      assert.ok(jar.cookies.has('RG_DEVICE'), 'a known device after the code');
      const updated = await inject(ts.app, jar, 'POST', form.action.replace(/\/otp$/, '/update-password'), { csrf: form.csrf, 'password-new': 'a new password 1', 'password-confirm': 'a new password 1' });
      assert.equal(updated.statusCode, 303);
      assert.ok(hasSession(jar));
      assert.equal(pageKind((await inject(ts.app, jar, 'GET', updated.headers.location as string)).body), 'consent');

      // With a session, an administrator requires a setup: prompt=none cannot go on.
      await ts.store.users.update(id, { requiredActions: ['CONFIGURE_TOTP'] });
      const silent = await inject(ts.app, jar, 'GET', `${realmPath('/protocol/openid-connect/auth')}?${authorizeQuery(ts, { prompt: 'none' })}`);
      assert.equal(new URL(silent.headers.location as string).searchParams.get('error'), 'interaction_required');
    });

    test("kc_action (Keycloak's application-initiated actions): an unknown one or with prompt=none is refused; an old session signs in again first; the code says how it ended", async () => {
      const { id } = await createUser(ts.store, { realmId: 'test', username: 'kira', password: PASSWORD, orgAliases: ['acme'] });
      const jar = new CookieJar();
      type Res = Awaited<ReturnType<typeof inject>>;
      const auth = (extra: Record<string, string>) => inject(ts.app, jar, 'GET', `${realmPath('/protocol/openid-connect/auth')}?${authorizeQuery(ts, extra)}`);
      const drive = (res: Res): Promise<Res> => driveFlow(ts.app, jar, res);
      const clientRedirect = (res: Res): URL => {
        assert.equal(res.statusCode, 303, res.body.slice(0, 300));
        return new URL(res.headers.location as string);
      };
      for (const [extra, words] of [[{ kc_action: 'VERIFY_EMAIL' }, /kc_action must be one of CONFIGURE_TOTP, UPDATE_PASSWORD/], [{ kc_action: 'UPDATE_PASSWORD', prompt: 'none' }, /prompt=none/]] as const) {
        const back = clientRedirect(await auth(extra));
        assert.equal(back.searchParams.get('error'), 'invalid_request');
        assert.match(back.searchParams.get('error_description') ?? '', words);
      }
      // Signed in (password only).
      const login = parseForm((await drive(await auth({}))).body);
      const plain = clientRedirect(await drive(await inject(ts.app, jar, 'POST', login.action, { csrf: login.csrf, username: 'kira', password: PASSWORD })));
      assert.ok(plain.searchParams.get('code'));
      assert.equal(plain.searchParams.get('kc_action_status'), null);

      // Within five minutes of the sign-in: straight to the action; done, the code says so.
      ts.clock.advance(60);
      const update = await drive(await auth({ kc_action: 'UPDATE_PASSWORD' }));
      assert.equal(pageKind(update.body), 'update-password');
      assert.match(update.body, /asks you to choose a new password/);
      const form = parseForm(update.body);
      const back = clientRedirect(await drive(await inject(ts.app, jar, 'POST', form.action, { csrf: form.csrf, 'password-new': 'kira password 2', 'password-confirm': 'kira password 2' })));
      assert.equal(back.searchParams.get('kc_action_status'), 'success');
      assert.equal(back.searchParams.get('kc_action'), 'UPDATE_PASSWORD');
      assert.ok(back.searchParams.get('code'));

      // Six minutes later: the sign-in page first, then the action (here cancelled).
      ts.clock.advance(360);
      const again = await drive(await auth({ kc_action: 'CONFIGURE_TOTP' }));
      assert.equal(pageKind(again.body), 'login');
      const relogin = parseForm(again.body);
      const setup = await drive(await inject(ts.app, jar, 'POST', relogin.action, { csrf: relogin.csrf, username: 'kira', password: 'kira password 2' }));
      assert.equal(pageKind(setup.body), 'configure-otp');
      assert.match(setup.body, />Cancel</);
      const cancelled = clientRedirect(await drive(await inject(ts.app, jar, 'POST', parseForm(setup.body).action, { csrf: parseForm(setup.body).csrf, cancel: '1' })));
      assert.equal(cancelled.searchParams.get('kc_action_status'), 'cancelled');
      assert.ok(cancelled.searchParams.get('code'));
      assert.deepEqual(await ts.store.otp.list(id), []);
    });

    test('the account page: code, new password, then a new authenticator, each form with its own proof', async () => {
      const { id, secret } = await userWithOtp('anya', ['UPDATE_PASSWORD', 'CONFIGURE_TOTP']);
      const jar = new CookieJar();
      const login = parseForm((await inject(ts.app, jar, 'GET', realmPath('/account'))).body);
      const codePage = await inject(ts.app, jar, 'POST', login.action, { csrf: login.csrf, username: 'anya', password: PASSWORD });
      assert.equal(pageKind(codePage.body), 'otp');
      assert.ok(!hasSession(jar));
      const passwordProof = proofOf(codePage.body);
      const otpForm = parseForm(codePage.body);
      assert.equal(otpForm.action, realmPath('/account/otp'));
      // The password-stage proof opens neither later form.
      for (const later of ['/account/update-password', '/account/configure-otp']) {
        const r = await inject(ts.app, jar, 'POST', realmPath(later), { csrf: otpForm.csrf, proof: passwordProof, otp: oathtoolCode(secret, now()), 'password-new': 'a new password 1', 'password-confirm': 'a new password 1' });
        assert.equal(r.statusCode, 403, later);
      }
      // A forged stage: refused.
      const forged = passwordProof.replace('.password.', '.all.');
      assert.equal((await inject(ts.app, jar, 'POST', realmPath('/account/update-password'), { csrf: otpForm.csrf, proof: forged, 'password-new': 'a new password 1', 'password-confirm': 'a new password 1' })).statusCode, 403);
      const updatePage = await inject(ts.app, jar, 'POST', otpForm.action, { csrf: otpForm.csrf, proof: passwordProof, otp: oathtoolCode(secret, now()) });
      assert.equal(pageKind(updatePage.body), 'update-password');
      const setupPage = await inject(ts.app, jar, 'POST', realmPath('/account/update-password'), { csrf: otpForm.csrf, proof: proofOf(updatePage.body), 'password-new': 'a new password 1', 'password-confirm': 'a new password 1' });
      assert.equal(pageKind(setupPage.body), 'configure-otp');
      assert.ok(!hasSession(jar));
      const newSecret = keyOf(setupPage.body);
      assert.notEqual(newSecret, secret);
      const done = await inject(ts.app, jar, 'POST', realmPath('/account/configure-otp'), { csrf: otpForm.csrf, proof: proofOf(setupPage.body), otp: oathtoolCode(newSecret, now()), label: 'tablet' });
      assert.equal(done.statusCode, 303);
      assert.equal(done.headers.location, realmPath('/account'));
      assert.ok(hasSession(jar));
      assert.deepEqual((await ts.store.users.get(id))!.requiredActions, []);
      assert.deepEqual((await ts.store.otp.list(id)).map((c) => c.label), [null, 'tablet']);
    });
  });
}

for (const dialect of dialects()) {
  describe(`authenticators on the account page (${dialect})`, { skip: OTP_TOOLS_MISSING }, () => {
    let ts: TestServer;
    const now = (): number => Math.floor(ts.clock.nowMs() / 1000);
    before(async () => {
      ts = await startTestServer({ dialect });
    });
    after(() => ts.close());

    test('a signed-in user sets one up and removes it; each form needs the session and its CSRF token', async () => {
      const { id } = await createUser(ts.store, { realmId: 'test', username: 'selma', password: PASSWORD });
      const jar = new CookieJar();
      const login = parseForm((await inject(ts.app, jar, 'GET', realmPath('/account'))).body);
      // Without a session the setup form leads back to the sign-in page.
      assert.equal((await inject(ts.app, jar, 'POST', realmPath('/account/otp/setup'), { csrf: login.csrf })).headers.location, realmPath('/account'));
      assert.equal((await inject(ts.app, jar, 'POST', login.action, { csrf: login.csrf, username: 'selma', password: PASSWORD })).statusCode, 303);
      const account = await inject(ts.app, jar, 'GET', realmPath('/account'));
      assert.match(account.body, /Set up an authenticator app/);
      const csrf = /name="csrf" value="([^"]*)"/.exec(account.body)![1]!;
      assert.equal((await inject(ts.app, jar, 'POST', realmPath('/account/otp/setup'), {})).statusCode, 303, 'no CSRF token: nothing');
      const setup = await inject(ts.app, jar, 'POST', realmPath('/account/otp/setup'), { csrf });
      assert.equal(pageKind(setup.body), 'configure-otp');
      const secret = /<code id="otp-key">([^<]*)<\/code>/.exec(setup.body)![1]!.replace(/\s/g, '');
      const proof = /name="proof" value="([^"]*)"/.exec(setup.body)![1]!;
      const done = await inject(ts.app, jar, 'POST', realmPath('/account/configure-otp'), { csrf, proof, otp: oathtoolCode(secret, now()), label: 'work phone' });
      assert.equal(done.statusCode, 200);
      assert.match(done.body, /Your authenticator app is set up/);
      assert.match(done.body, /work phone/);
      const [credential] = await ts.store.otp.list(id);
      assert.equal(credential!.label, 'work phone');
      // The next sign-in asks for its code.
      ts.clock.advance(30);
      const other = new CookieJar();
      const f = parseForm((await inject(ts.app, other, 'GET', realmPath('/account'))).body);
      assert.equal(pageKind((await inject(ts.app, other, 'POST', f.action, { csrf: f.csrf, username: 'selma', password: PASSWORD })).body), 'otp');
      // Removing: not without the CSRF token, then with it.
      await inject(ts.app, jar, 'POST', realmPath('/account/otp/remove'), { credential_id: credential!.id });
      assert.equal((await ts.store.otp.list(id)).length, 1);
      const removed = await inject(ts.app, jar, 'POST', realmPath('/account/otp/remove'), { csrf, credential_id: credential!.id });
      assert.match(removed.body, /The authenticator app is removed/);
      assert.deepEqual(await ts.store.otp.list(id), []);
      const events = (await ts.store.events.list('test', { userId: id, types: ['UPDATE_TOTP', 'REMOVE_TOTP'], order: 'asc' })).map((e) => e.type);
      assert.deepEqual(events, ['UPDATE_TOTP', 'REMOVE_TOTP']);
    });
  });
}

for (const dialect of dialects()) {
  describe(`recovery codes (${dialect})`, { skip: OTP_TOOLS_MISSING }, () => {
    let ts: TestServer;
    const now = (): number => Math.floor(ts.clock.nowMs() / 1000);
    before(async () => {
      ts = await startTestServer({ dialect, listen: true });
      await ts.store.clients.update('test', ts.client.id, { directAccessGrantsEnabled: true });
      ts.services.cache.clear();
    });
    after(() => ts.close());

    /** The account page signed in with the password and the app's code (or a recovery code). */
    async function accountSignIn(username: string, code: string): Promise<{ jar: CookieJar; res: Awaited<ReturnType<typeof inject>> }> {
      const jar = new CookieJar();
      const login = parseForm((await inject(ts.app, jar, 'GET', realmPath('/account'))).body);
      const otpPage = await inject(ts.app, jar, 'POST', login.action, { csrf: login.csrf, username, password: PASSWORD });
      assert.equal(pageKind(otpPage.body), 'otp');
      assert.match(otpPage.body, /Lost your phone\? Use a recovery code/);
      const proof = /name="proof" value="([^"]*)"/.exec(otpPage.body)![1]!;
      const res = await inject(ts.app, jar, 'POST', realmPath('/account/otp'), { csrf: login.csrf, proof, otp: code });
      return { jar, res };
    }

    test('created on the account page and shown once; each signs in once, in the page or the password grant; new ones void the old; gone with the last authenticator', async () => {
      const { id } = await createUser(ts.store, { realmId: 'test', username: 'rosa', password: PASSWORD });
      const key = randomBytes(20);
      const secret = base32(key);
      assert.equal(await enrollOtp(ts.store, { user: (await ts.store.users.get(id))!, key, code: oathtoolCode(secret, now()), nowSeconds: now() }), undefined);
      ts.clock.advance(30);
      const { jar, res } = await accountSignIn('rosa', oathtoolCode(secret, now()));
      assert.equal(res.statusCode, 303);
      let account = (await inject(ts.app, jar, 'GET', realmPath('/account'))).body;
      assert.match(account, /Recovery codes, to sign in if you lose your phone: none yet\./);
      const csrf = /name="csrf" value="([^"]*)"/.exec(account)![1]!;
      // Not without the CSRF token.
      await inject(ts.app, jar, 'POST', realmPath('/account/recovery-codes'), {});
      assert.equal(await ts.store.recoveryCodes.remaining(id), 0);
      const shown = await inject(ts.app, jar, 'POST', realmPath('/account/recovery-codes'), { csrf });
      assert.equal(shown.statusCode, 200);
      assert.equal(shown.headers['cache-control'], 'no-store');
      const codes = [...shown.body.matchAll(/<code>([a-z2-9]{4}-[a-z2-9]{4}-[a-z2-9]{4})<\/code>/g)].map((m) => m[1]!);
      assert.equal(codes.length, 10);
      assert.equal(new Set(codes).size, 10);
      // Stored only as keyed hashes.
      const stored = await ts.store.db.kysely.selectFrom('recovery_codes').select('code_hash').where('user_id', '=', id).execute();
      for (const c of codes) assert.ok(!stored.some((r) => r.code_hash.includes(c.replace(/-/g, ''))));
      account = (await inject(ts.app, jar, 'GET', realmPath('/account'))).body;
      assert.match(account, /10 left\./);

      // Another browser: the first code, typed loosely (capitals, spaces), instead of the app's.
      const loose = codes[0]!.toUpperCase().replace(/-/g, ' ');
      const signed = await accountSignIn('rosa', loose);
      assert.equal(signed.res.statusCode, 303, signed.res.body.slice(0, 300));
      assert.equal(await ts.store.recoveryCodes.remaining(id), 9);
      // Used once: refused after.
      assert.equal((await accountSignIn('rosa', codes[0]!)).res.statusCode, 400);
      // The password grant takes one in `otp` too.
      const grant = (otp: string) =>
        fetch(`${ts.baseUrl}${realmPath('/protocol/openid-connect/token')}`, {
          method: 'POST',
          headers: { authorization: basic(ts.client.id, ts.client.secret), 'content-type': 'application/x-www-form-urlencoded' },
          body: new URLSearchParams({ grant_type: 'password', username: 'rosa', password: PASSWORD, otp }),
        });
      ts.clock.advance(10);
      assert.equal((await grant(codes[1]!)).status, 200);
      assert.equal(await ts.store.recoveryCodes.remaining(id), 8);
      // New codes: the old ones stop working.
      const again = await inject(ts.app, jar, 'POST', realmPath('/account/recovery-codes'), { csrf });
      const fresh = [...again.body.matchAll(/<code>([a-z2-9-]{14})<\/code>/g)].map((m) => m[1]!);
      assert.equal(fresh.length, 10);
      ts.clock.advance(10);
      assert.equal((await grant(codes[2]!)).status, 400);
      assert.equal(await ts.store.recoveryCodes.remaining(id), 10);
      const reasons = (await ts.store.events.list('test', { userId: id, types: ['UPDATE_TOTP'], order: 'asc' })).map((e) => e.reason);
      assert.ok(reasons.includes('a recovery code used to sign in (9 left)'), reasons.join(' | '));
      // Removing the last authenticator removes the codes.
      const [credential] = await ts.store.otp.list(id);
      await inject(ts.app, jar, 'POST', realmPath('/account/otp/remove'), { csrf, credential_id: credential!.id });
      assert.equal(await ts.store.recoveryCodes.remaining(id), 0);
    });
  });
}
