import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, realmPath, basic, PASSWORD, type TestServer } from '../helpers/server.js';
import { CookieJar, authorizeQuery, inject, pageKind, parseForm, tokenRequest } from '../helpers/flow.js';
import { dialects } from '../helpers/db.js';
import { createUser } from '../../src/admin/operations.js';
import { enrollTestOtp } from '../helpers/otp.js';
import { hotp, timeStep } from '../../src/crypto/totp.js';
import { SoftKey, assertWith, attest, pageOptions, registerTestKey, type AssertionOptions, type AttestationOptions } from '../helpers/webauthn.js';
import type { RequiredAction, WebAuthnPolicy } from '../../src/storage/types.js';
import { WEBAUTHN_POLICY_DEFAULTS } from '../../src/admin/webauthn-policy.js';
import { issueChallenge } from '../../src/admin/operations/webauthn.js';
import { Collector } from '../../src/collector.js';
import { tokenHash } from '../../src/crypto/random.js';

// Security keys (W3C WebAuthn Level 2) as a second factor over HTTP: registration through Keycloak's
// webauthn-register required action and sign-in after the password, with attestations and assertions
// made by a software authenticator (node:crypto keys, the helper's own CBOR encoder). Each check of
// 7.1 and 7.2 has a response that breaks only it.
const ORIGIN = 'http://localhost:8080';
const RP_ID = 'localhost';

for (const dialect of dialects()) {
  describe(`security keys at sign-in (${dialect})`, () => {
    let ts: TestServer;
    const hasSession = (jar: CookieJar): boolean => jar.cookies.has('RG_SESSION');
    before(async () => {
      ts = await startTestServer({ dialect });
    });
    after(() => ts.close());

    async function setPolicy(p: Partial<WebAuthnPolicy>): Promise<void> {
      await ts.store.realms.update('test', { webAuthnPolicy: { ...WEBAUTHN_POLICY_DEFAULTS, ...p } });
      ts.services.cache.clear();
    }

    type Page = { jar: CookieJar; action: string; csrf: string; html: string; location: string };

    /** Starts an authorization request and types the user's password; the page the flow shows next. */
    async function afterPassword(username: string, jar = new CookieJar()): Promise<Page> {
      const start = await inject(ts.app, jar, 'GET', `${realmPath('/protocol/openid-connect/auth')}?${authorizeQuery(ts)}`);
      const login = parseForm((await inject(ts.app, jar, 'GET', start.headers.location as string)).body);
      const res = await inject(ts.app, jar, 'POST', login.action, { csrf: login.csrf, username, password: PASSWORD });
      assert.equal(res.statusCode, 303, res.body.slice(0, 300));
      const location = res.headers.location as string;
      const page = await inject(ts.app, jar, 'GET', location);
      const form = parseForm(page.body);
      return { jar, action: form.action, csrf: form.csrf, html: page.body, location };
    }

    /** Posts a key's response on the page's form; the page shown after it (a refusal re-renders with a new challenge). */
    async function post(p: Page, fields: Record<string, string>): Promise<{ status: number; page: Page; location?: string }> {
      const res = await inject(ts.app, p.jar, 'POST', p.action, { csrf: p.csrf, ...fields });
      if (res.statusCode === 303) return { status: 303, page: p, location: res.headers.location as string };
      return { status: res.statusCode, page: { ...p, html: res.body } };
    }

    async function newUser(username: string, requiredActions: RequiredAction[] = []): Promise<string> {
      return (await createUser(ts.store, { realmId: 'test', username, password: PASSWORD, orgAliases: ['acme'], requiredActions })).id;
    }

    /** Follows the flow after the second factor (consent, organization) to the client's redirect. */
    async function toClient(jar: CookieJar, location: string): Promise<URL> {
      let res = await inject(ts.app, jar, 'GET', location);
      for (let i = 0; i < 5; i++) {
        if (res.statusCode === 303 && (res.headers.location as string).startsWith('/')) res = await inject(ts.app, jar, 'GET', res.headers.location as string);
        else if (res.statusCode === 303) return new URL(res.headers.location as string);
        else if (pageKind(res.body) === 'consent') res = await inject(ts.app, jar, 'POST', parseForm(res.body).action, { csrf: parseForm(res.body).csrf, decision: 'allow' });
        else if (pageKind(res.body) === 'organization') res = await inject(ts.app, jar, 'POST', parseForm(res.body).action, { csrf: parseForm(res.body).csrf, organization: 'acme' });
        else throw new Error(`stopped on ${pageKind(res.body)}: ${res.body.slice(0, 300)}`);
      }
      throw new Error('too many steps');
    }

    const registration = (html: string, o: Partial<AttestationOptions> = {}): AttestationOptions => ({ challenge: pageOptions(html).challenge, origin: ORIGIN, rpId: RP_ID, ...o });
    const assertion = (html: string, o: Partial<AssertionOptions> = {}): AssertionOptions => ({ challenge: pageOptions(html).challenge, origin: ORIGIN, rpId: RP_ID, ...o });

    /** A user with a key registered through the required action (the whole flow); returns the key. */
    async function userWithKey(username: string, alg: 'ES256' | 'RS256' | 'EdDSA' = 'ES256'): Promise<{ id: string; key: SoftKey }> {
      const id = await newUser(username, ['webauthn-register']);
      const p = await afterPassword(username);
      assert.equal(pageKind(p.html), 'webauthn-register');
      const key = new SoftKey(alg);
      const r = await post(p, { ...attest(key, registration(p.html)), label: `${username}'s key` });
      assert.equal(r.status, 303, r.page.html.slice(0, 600));
      return { id, key };
    }

    test('webauthn-register: the options (RP ID from AUTH_URL, ES256, the user handle), then a key with attestation none registers; the session only after it', async () => {
      const id = await newUser('rita', ['webauthn-register']);
      const p = await afterPassword('rita');
      assert.equal(pageKind(p.html), 'webauthn-register');
      assert.ok(!hasSession(p.jar));
      // The page: a same-origin script, a noscript message, the CSRF token.
      assert.match(p.html, /<script src="\/auth\/resources\/webauthn.js" defer><\/script>/);
      assert.match(p.html, /<noscript>/);
      const o = pageOptions(p.html);
      assert.equal(o.rp!.id, RP_ID);
      assert.deepEqual(o.pubKeyCredParams!.map((x) => x.alg), [-7]);
      assert.equal(Buffer.from(o.user!.id, 'base64url').toString(), id);
      assert.ok(Buffer.from(o.challenge, 'base64url').length >= 32);
      // No CSRF token: refused.
      const key = new SoftKey();
      const noCsrf = await inject(ts.app, p.jar, 'POST', p.action, { ...attest(key, registration(p.html)) });
      assert.equal(noCsrf.statusCode, 403);
      const ok = await post(p, { ...attest(key, registration(p.html)), label: 'Blue key' });
      assert.equal(ok.status, 303);
      assert.ok(hasSession(p.jar));
      const [stored] = await ts.store.webauthn.list(id);
      assert.equal(stored!.label, 'Blue key');
      assert.ok(stored!.credentialId.equals(key.credentialId));
      assert.equal(stored!.attestationFormat, 'none');
      assert.deepEqual(stored!.transports, ['usb']);
      assert.deepEqual((await ts.store.users.get(id))!.requiredActions, []);
      const events = await ts.store.events.list('test', { userId: id, types: ['UPDATE_CREDENTIAL'] });
      assert.match(events[0]!.reason ?? '', /credential_type webauthn/);
    });

    test('registration refusals: type, origin, rpIdHash, UP, UV required, an algorithm not in the policy, a replayed challenge, another sign-in\'s challenge, a forged packed self attestation, an unverifiable format when the policy asks for attestation', async () => {
      const id = await newUser('regina', ['webauthn-register']);
      let p = await afterPassword('regina');
      const refused = async (fields: Record<string, string>, why: string): Promise<void> => {
        const r = await post(p, fields);
        assert.equal(r.status, 400, `${why}: ${r.status}`);
        assert.equal(pageKind(r.page.html), 'webauthn-register', why);
        p = r.page;
      };
      const key = new SoftKey();
      await refused(attest(key, registration(p.html, { type: 'webauthn.get' })), 'type');
      await refused(attest(key, registration(p.html, { origin: 'https://evil.example' })), 'origin');
      await refused(attest(key, registration(p.html, { rpId: 'evil.example' })), 'rpIdHash');
      await refused(attest(key, registration(p.html, { flags: { up: false } })), 'UP');
      await refused(attest(new SoftKey('RS256'), registration(p.html)), 'RS256 not in the policy');
      await refused(attest(key, registration(p.html, { fmt: 'packed', forgeSelfAttestation: true })), 'forged packed');
      // A challenge used once (refused above for its origin, so consumed) does not work again.
      const spent = pageOptions(p.html).challenge;
      await refused(attest(key, registration(p.html, { origin: 'https://evil.example' })), 'origin again');
      await refused(attest(key, { challenge: spent, origin: ORIGIN, rpId: RP_ID }), 'replayed challenge');
      // The challenge of another sign-in (another browser, same user) is not this one's.
      const other = await afterPassword('regina');
      await refused(attest(key, registration(other.html)), 'another interaction\'s challenge');
      await setPolicy({ userVerificationRequirement: 'required' });
      await refused(attest(key, registration(p.html, { flags: { uv: false } })), 'UV required');
      await setPolicy({ attestationConveyancePreference: 'direct' });
      await refused(attest(key, registration(p.html, { fmt: 'fido-u2f' })), 'fido-u2f under direct');
      assert.equal((await ts.store.webauthn.list(id)).length, 0);
      // The policy asking nothing: an unverified format is taken as none.
      await setPolicy({});
      const ok = await post(p, attest(key, registration(p.html, { fmt: 'fido-u2f' })));
      assert.equal(ok.status, 303);
      assert.equal((await ts.store.webauthn.list(id))[0]!.attestationFormat, 'none');
    });

    test('packed self attestation is verified and accepted; RS256 and EdDSA when the policy lists them', async () => {
      await setPolicy({ signatureAlgorithms: ['ES256', 'RS256', 'EdDSA'] });
      try {
        for (const [name, alg] of [['pia', 'ES256'], ['pete', 'RS256'], ['edna', 'EdDSA']] as const) {
          const id = await newUser(name, ['webauthn-register']);
          const p = await afterPassword(name);
          const r = await post(p, attest(new SoftKey(alg), registration(p.html, { fmt: 'packed' })));
          assert.equal(r.status, 303, `${alg}: ${r.page.html.slice(0, 400)}`);
          assert.equal((await ts.store.webauthn.list(id))[0]!.attestationFormat, 'packed');
        }
      } finally {
        await setPolicy({});
      }
    });

    test('sign-in: password, then the key (allowCredentials: the user\'s keys); a code that the token endpoint exchanges', async () => {
      const { id, key } = await userWithKey('sam');
      const p = await afterPassword('sam');
      assert.equal(pageKind(p.html), 'webauthn');
      assert.ok(!hasSession(p.jar) && !p.jar.cookies.has('RG_DEVICE'));
      const o = pageOptions(p.html);
      assert.equal(o.rpId, RP_ID);
      assert.deepEqual(o.allowCredentials!.map((c) => c.id), [key.credentialId.toString('base64url')]);
      const r = await post(p, assertWith(key, { ...assertion(p.html), userHandle: id }));
      assert.equal(r.status, 303);
      assert.ok(hasSession(p.jar) && p.jar.cookies.has('RG_DEVICE'));
      // On to consent, then the client's redirect with a code.
      const back = await toClient(p.jar, r.location!);
      const code = back.searchParams.get('code')!;
      assert.ok(code);
      const token = await tokenRequest(ts, { grant_type: 'authorization_code', code, redirect_uri: ts.client.redirectUri }, { authorization: basic(ts.client.id, ts.client.secret) });
      assert.equal(token.statusCode, 200, token.body);
      assert.equal((await ts.store.webauthn.list(id))[0]!.signCount, key.signCount);
    });

    test('sign-in refusals, each breaking one check: type, origin, rpIdHash, UP, UV required, signature, counter, unknown key, another user\'s key, another user\'s handle, a replayed challenge, another sign-in\'s challenge; never a session', async () => {
      const { id, key } = await userWithKey('tom');
      const { key: bobsKey } = await userWithKey('bob');
      // One sign-in first: the stored counter is 1 (a counter not increasing is then refused).
      const first = await afterPassword('tom');
      assert.equal((await post(first, assertWith(key, assertion(first.html)))).status, 303);
      assert.equal((await ts.store.webauthn.list(id))[0]!.signCount, 1);
      let p = await afterPassword('tom');
      const refused = async (fields: Record<string, string>, why: string): Promise<void> => {
        // Each refusal counts against the user's second factor: cleared here so that every check is reached.
        await ts.store.loginFailures.clear('test', `otp:${id}`);
        const r = await post(p, fields);
        assert.equal(r.status, 400, `${why}: ${r.status} ${r.page.html.slice(0, 200)}`);
        assert.equal(pageKind(r.page.html), 'webauthn', why);
        assert.ok(!hasSession(p.jar), why);
        p = r.page;
      };
      const at = (o: Partial<AssertionOptions>): Record<string, string> => assertWith(key, { ...assertion(p.html), signCount: key.signCount + 1, ...o });
      await refused(at({ type: 'webauthn.create' }), 'type');
      await refused(at({ origin: 'http://localhost:8081' }), 'origin');
      await refused(at({ rpId: 'example.com' }), 'rpIdHash');
      await refused(at({ flags: { up: false } }), 'UP');
      await refused(at({ badSignature: true }), 'signature');
      await refused(at({ signCount: key.signCount }), 'counter not increasing');
      await refused(at({ signCount: 0 }), 'counter back to zero');
      await refused(at({ credentialId: Buffer.from('no such key') }), 'unknown credential id');
      await refused(assertWith(bobsKey, { ...assertion(p.html), signCount: bobsKey.signCount + 1 }), 'another user\'s key');
      await refused(at({ userHandle: 'someone else' }), 'another user handle');
      // The challenge of a refused attempt (consumed by it) does not work again, nor another sign-in's.
      const spent = pageOptions(p.html).challenge;
      await refused(at({ origin: 'https://evil.example', challenge: spent }), 'spending it');
      await refused(at({ challenge: spent }), 'replayed challenge');
      const other = await afterPassword('tom');
      await refused(at({ challenge: pageOptions(other.html).challenge }), 'another interaction\'s challenge');
      // A challenge lives 5 minutes (the policy's createTimeout, when set, and 30 s).
      ts.clock.advance(301);
      await refused(at({}), 'expired challenge');
      await setPolicy({ userVerificationRequirement: 'required' });
      try {
        assert.equal(pageOptions((await inject(ts.app, p.jar, 'GET', p.location)).body as string).challenge.length > 0, true);
        p = { ...p, html: (await inject(ts.app, p.jar, 'GET', p.location)).body };
        await refused(at({ flags: { uv: false } }), 'UV required');
        const events = await ts.store.events.list('test', { userId: id, types: ['LOGIN_ERROR'] });
        assert.ok(events.some((e) => /cloned/.test(e.reason ?? '')), 'a cloned authenticator is logged');
        const ok = await post(p, at({}));
        assert.equal(ok.status, 303);
        assert.ok(hasSession(p.jar));
      } finally {
        await setPolicy({});
      }
    });

    test('an authenticator without a counter (always 0) signs in again and again; one of the realm\'s extra origins is accepted', async () => {
      const id = await newUser('zoe', ['webauthn-register']);
      let p = await afterPassword('zoe');
      const key = new SoftKey('ES256', { counter: false });
      assert.equal((await post(p, attest(key, registration(p.html)))).status, 303);
      for (let i = 0; i < 2; i++) {
        p = await afterPassword('zoe');
        assert.equal((await post(p, assertWith(key, assertion(p.html)))).status, 303);
      }
      await setPolicy({ extraOrigins: ['https://app.example.com'] });
      try {
        p = await afterPassword('zoe');
        assert.equal((await post(p, assertWith(key, assertion(p.html, { origin: 'https://app.example.com' })))).status, 303);
      } finally {
        await setPolicy({});
      }
      assert.equal((await ts.store.webauthn.list(id))[0]!.signCount, 0);
    });

    test('failed keys count as failed codes do: after the realm\'s threshold, locked, even for a right assertion', async () => {
      const { id, key } = await userWithKey('lena');
      let p = await afterPassword('lena');
      for (let i = 0; i < 5; i++) {
        const r = await post(p, assertWith(key, { ...assertion(p.html), badSignature: true, signCount: key.signCount + 1 }));
        assert.equal(r.status, 400);
        p = r.page;
        ts.clock.advance(10);
      }
      const locked = await post(p, assertWith(key, assertion(p.html)));
      assert.equal(locked.status, 429);
      assert.match(locked.page.html, /locked/);
      assert.ok(!hasSession(p.jar));
      const lockouts = await ts.store.events.list('test', { types: ['LOCKOUT'] });
      assert.ok(lockouts.some((e) => /one-time codes of the user/.test(e.reason ?? '')));
      await ts.store.loginFailures.clear('test', `otp:${id}`);
      ts.clock.advance(3600);
    });

    test('a user with an app and a key chooses ("Use another method"); the password grant refuses a user with a key', async () => {
      const { id, key } = await userWithKey('una');
      const otpKey = await enrollTestOtp(ts.store, (await ts.store.users.get(id))!, 'phone', Math.floor(ts.clock.nowMs() / 1000));
      ts.clock.advance(30);
      const p = await afterPassword('una');
      assert.equal(pageKind(p.html), 'webauthn');
      assert.match(p.html, /Use another method/);
      const switched = await inject(ts.app, p.jar, 'POST', p.action.replace(/\/webauthn$/, '/second-factor'), { csrf: p.csrf, method: 'otp' });
      assert.equal(switched.statusCode, 303);
      const otpPage = await inject(ts.app, p.jar, 'GET', switched.headers.location as string);
      assert.equal(pageKind(otpPage.body), 'otp');
      assert.match(otpPage.body, /Use another method/);
      const code = hotp(otpKey, timeStep(Math.floor(ts.clock.nowMs() / 1000), 30), 6, 'HmacSHA1');
      const ok = await inject(ts.app, p.jar, 'POST', p.action.replace(/\/webauthn$/, '/otp'), { csrf: p.csrf, otp: code });
      assert.equal(ok.statusCode, 303);
      assert.ok(hasSession(p.jar));
      void key;
      await ts.store.clients.update('test', ts.client.id, { directAccessGrantsEnabled: true });
      ts.services.cache.clear();
      const grant = await tokenRequest(ts, { grant_type: 'password', username: 'una', password: PASSWORD, otp: code }, { authorization: basic(ts.client.id, ts.client.secret) });
      assert.equal(grant.statusCode, 400);
      assert.equal(JSON.parse(grant.body).error, 'invalid_grant');
    });

    test('account page: the password, then the key; keys listed, one added (a proof, a new challenge), one removed (CSRF)', async () => {
      const { id, key } = await userWithKey('acct');
      const jar = new CookieJar();
      const login = parseForm((await inject(ts.app, jar, 'GET', realmPath('/account'))).body);
      const step = await inject(ts.app, jar, 'POST', login.action, { csrf: login.csrf, username: 'acct', password: PASSWORD });
      assert.equal(pageKind(step.body), 'webauthn');
      assert.ok(!hasSession(jar));
      const form = parseForm(step.body);
      const proof = /name="proof" value="([^"]*)"/.exec(step.body)![1]!.replace(/&amp;/g, '&');
      // Another browser's challenge (the interaction's of a sign-in elsewhere) is not this page's.
      const other = await afterPassword('acct');
      const bad = await inject(ts.app, jar, 'POST', form.action, { csrf: form.csrf, proof, ...assertWith(key, assertion(other.html)) });
      assert.equal(bad.statusCode, 400);
      const ok = await inject(ts.app, jar, 'POST', form.action, { csrf: form.csrf, proof, ...assertWith(key, assertion(bad.body)) });
      assert.equal(ok.statusCode, 303, ok.body.slice(0, 300));
      assert.ok(hasSession(jar));
      let account = await inject(ts.app, jar, 'GET', realmPath('/account'));
      assert.match(account.body, /<h2>Security keys<\/h2>/);
      assert.match(account.body, /acct&#39;s key/);
      const csrf = parseForm(account.body).csrf;
      const setup = await inject(ts.app, jar, 'POST', realmPath('/account/webauthn/setup'), { csrf });
      assert.equal(pageKind(setup.body), 'webauthn-register');
      const o = pageOptions(setup.body);
      assert.deepEqual(o.excludeCredentials!.map((c) => c.id), [key.credentialId.toString('base64url')]);
      const setupForm = parseForm(setup.body);
      const setupProof = /name="proof" value="([^"]*)"/.exec(setup.body)![1]!.replace(/&amp;/g, '&');
      const second = new SoftKey();
      const added = await inject(ts.app, jar, 'POST', setupForm.action, { csrf: setupForm.csrf, proof: setupProof, ...attest(second, registration(setup.body)), label: 'Second key' });
      assert.equal(added.statusCode, 200);
      assert.match(added.body, /Your security key is registered/);
      // The same key again (its credential id): refused.
      const again = await inject(ts.app, jar, 'POST', realmPath('/account/webauthn/setup'), { csrf });
      const dup = await inject(ts.app, jar, 'POST', setupForm.action, { csrf: setupForm.csrf, proof: setupProof, ...attest(second, registration(again.body)) });
      assert.equal(dup.statusCode, 400);
      assert.match(dup.body, /registered already/);
      const keys = await ts.store.webauthn.list(id);
      assert.deepEqual(keys.map((k) => k.label).sort(), ['Second key', "acct's key"]);
      const secondId = keys.find((k) => k.label === 'Second key')!.id;
      // Removing: not without the CSRF token.
      await inject(ts.app, jar, 'POST', realmPath('/account/webauthn/remove'), { credential_id: secondId });
      assert.equal((await ts.store.webauthn.list(id)).length, 2);
      account = await inject(ts.app, jar, 'POST', realmPath('/account/webauthn/remove'), { csrf, credential_id: secondId });
      assert.match(account.body, /The security key is removed/);
      assert.equal((await ts.store.webauthn.list(id)).length, 1);
      const events = await ts.store.events.list('test', { userId: id, types: ['REMOVE_CREDENTIAL'] });
      assert.match(events[0]!.reason ?? '', /credential_type webauthn/);
    });

    test('passkeys (webauthn-passwordless): registered through the required action (a resident key, user verification), then the login page signs in with the key alone; refusals', async () => {
      const id = await newUser('pam', ['webauthn-register-passwordless']);
      const reg = await afterPassword('pam');
      assert.equal(pageKind(reg.html), 'webauthn-register');
      assert.match(reg.html, /<h1>Register a passkey<\/h1>/);
      const ro = pageOptions(reg.html) as unknown as { authenticatorSelection: Record<string, unknown> };
      assert.deepEqual(ro.authenticatorSelection, { residentKey: 'required', requireResidentKey: true, userVerification: 'required' });
      const passkey = new SoftKey();
      // Without user verification: refused (a passkey is the only factor).
      const noUv = await post(reg, attest(passkey, registration(reg.html, { flags: { uv: false } })));
      assert.equal(noUv.status, 400);
      assert.equal((await post(noUv.page, attest(passkey, registration(noUv.page.html)))).status, 303);
      const [stored] = await ts.store.webauthn.list(id);
      assert.equal(stored!.passwordless, true);
      assert.deepEqual((await ts.store.users.get(id))!.requiredActions, []);
      // A passkey is not a second factor: the password alone signs pam in.
      assert.equal(await ts.store.webauthn.has(id), false);

      const { key: samKey, id: samId } = await userWithKey('sam2');
      const jar = new CookieJar();
      const start = await inject(ts.app, jar, 'GET', `${realmPath('/protocol/openid-connect/auth')}?${authorizeQuery(ts)}`);
      const location = start.headers.location as string;
      let html = (await inject(ts.app, jar, 'GET', location)).body;
      assert.equal(pageKind(html), 'login');
      assert.match(html, /Sign in with a passkey/);
      const o = pageOptions(html);
      assert.deepEqual(o.allowCredentials, []);
      assert.equal((o as { userVerification?: string }).userVerification, 'required');
      const action = `${location}/passwordless`;
      const csrf = parseForm(html).csrf;
      const refused = async (fields: Record<string, string>, why: string): Promise<void> => {
        await ts.store.loginFailures.clear('test', `otp:${id}`);
        const r = await inject(ts.app, jar, 'POST', action, { csrf, ...fields });
        assert.equal(r.statusCode, 400, `${why}: ${r.statusCode}`);
        assert.equal(pageKind(r.body), 'login', why);
        assert.ok(!hasSession(jar), why);
        html = r.body;
      };
      const pk = (o2: Partial<AssertionOptions>): Record<string, string> => assertWith(passkey, { challenge: pageOptions(html).challenge, origin: ORIGIN, rpId: RP_ID, userHandle: id, signCount: passkey.signCount + 1, ...o2 });
      await refused(pk({ userHandle: '' }), 'no userHandle');
      await refused(pk({ flags: { uv: false } }), 'UV absent');
      await refused(pk({ userHandle: samId }), 'another user named');
      await refused(assertWith(samKey, { challenge: pageOptions(html).challenge, origin: ORIGIN, rpId: RP_ID, userHandle: samId, signCount: samKey.signCount + 1 }), 'a two-factor key used as a passkey');
      await refused(pk({ badSignature: true }), 'signature');
      // The two-factor step's challenge of another sign-in is not this page's.
      const other = await afterPassword('sam2');
      await refused(pk({ challenge: pageOptions(other.html).challenge }), 'another challenge');
      // Responses naming a user by id with a key that is not theirs count against no one (ids are not secrets).
      await ts.store.loginFailures.clear('test', `otp:${samId}`);
      await refused(assertWith(new SoftKey(), { challenge: pageOptions(html).challenge, origin: ORIGIN, rpId: RP_ID, userHandle: samId }), 'a stranger\'s key naming sam2');
      assert.equal((await ts.store.loginFailures.get('test', [`otp:${samId}`])).get(`otp:${samId}`)?.failures ?? 0, 0);
      // A disabled user's passkey: refused.
      await ts.store.users.update(id, { enabled: false });
      await refused(pk({}), 'disabled user');
      await ts.store.users.update(id, { enabled: true });
      const ok = await inject(ts.app, jar, 'POST', action, { csrf, ...pk({}) });
      assert.equal(ok.statusCode, 303, ok.body.slice(0, 300));
      assert.ok(hasSession(jar));
      const back = await toClient(jar, ok.headers.location as string);
      assert.ok(back.searchParams.get('code'));
      const logins = await ts.store.events.list('test', { userId: id, types: ['LOGIN'] });
      assert.ok(logins.length >= 1);

      // A passkey is not a second factor: the key step neither lists it nor accepts it.
      const samPasskey = new SoftKey();
      await registerTestKey(ts.store, ts.config.authUrl, samId, samPasskey, 'sam passkey', { passwordless: true });
      const step = await afterPassword('sam2');
      assert.equal(pageKind(step.html), 'webauthn');
      assert.deepEqual(pageOptions(step.html).allowCredentials!.map((c) => c.id), [samKey.credentialId.toString('base64url')]);
      await ts.store.loginFailures.clear('test', `otp:${samId}`);
      const asSecond = await post(step, assertWith(samPasskey, { ...assertion(step.html), userHandle: samId }));
      assert.equal(asSecond.status, 400);
    });

    test("account page's own sign-in: the passkey button, the key alone signs in (required actions first); another browser's challenge, a forged form, a zero-byte userHandle are refused", async () => {
      // (The realm has passkeys by now: the page always offers the button; without any, see the account tests.)
      const { id } = await userWithKey('acpk');
      const passkey = new SoftKey();
      await registerTestKey(ts.store, ts.config.authUrl, id, passkey, 'acpk passkey', { passwordless: true });
      await ts.store.users.update(id, { requiredActions: ['UPDATE_PROFILE'] });
      const jar = new CookieJar();
      let page = (await inject(ts.app, jar, 'GET', realmPath('/account'))).body;
      assert.equal(pageKind(page), 'login');
      assert.match(page, /Sign in with a passkey/);
      const action = realmPath('/account/passwordless');
      const csrf = parseForm(page).csrf;
      const pk = (o: Partial<AssertionOptions> = {}): Record<string, string> => assertWith(passkey, { challenge: pageOptions(page).challenge, origin: ORIGIN, rpId: RP_ID, userHandle: id, signCount: passkey.signCount + 1, ...o });
      const refused = async (fields: Record<string, string>, why: string, status = 400): Promise<void> => {
        await ts.store.loginFailures.clear('test', `otp:${id}`);
        const r = await inject(ts.app, jar, 'POST', action, fields);
        assert.equal(r.statusCode, status, `${why}: ${r.statusCode}`);
        assert.ok(!hasSession(jar), why);
        if (status === 400) {
          assert.equal(pageKind(r.body), 'login', why);
          page = r.body;
        }
      };
      await refused({ csrf: 'forged', ...pk() }, 'a forged form', 403);
      // An application's sign-in's challenge (another browser) is not this page's.
      const elsewhere = new CookieJar();
      const start = await inject(ts.app, elsewhere, 'GET', `${realmPath('/protocol/openid-connect/auth')}?${authorizeQuery(ts)}`);
      const otherPage = (await inject(ts.app, elsewhere, 'GET', start.headers.location as string)).body;
      await refused({ csrf, ...pk({ challenge: pageOptions(otherPage).challenge }) }, "another page's challenge");
      await refused({ csrf, ...pk({ badSignature: true }) }, 'signature');
      await refused({ csrf, ...pk(), user_handle: 'AA' }, 'a userHandle of one zero byte');
      // The key alone: UPDATE_PROFILE first (no session yet), then the account page.
      const ok = await inject(ts.app, jar, 'POST', action, { csrf, ...pk() });
      assert.equal(ok.statusCode, 200, ok.body.slice(0, 300));
      assert.equal(pageKind(ok.body), 'update-profile');
      assert.ok(!hasSession(jar));
      const profile = parseForm(ok.body);
      const proof = /name="proof" value="([^"]*)"/.exec(ok.body)![1]!.replace(/&amp;/g, '&');
      const done = await inject(ts.app, jar, 'POST', profile.action, { csrf: profile.csrf, proof, email: 'acpk@example.com', firstName: 'Ac', lastName: 'Pk' });
      assert.ok(hasSession(jar), done.body.slice(0, 300));
      assert.match((await inject(ts.app, jar, 'GET', realmPath('/account'))).body, /<h2>Security keys<\/h2>/);
      // The refusals' audit rows (written after the response: waited for).
      const audited = async (): Promise<boolean> => (await ts.store.events.list('test', { userId: id, types: ['LOGIN_ERROR'] })).some((e) => e.clientId === 'account' && /passkey refused/.test(e.reason ?? ''));
      const deadline = Date.now() + 10_000;
      while (!(await audited()) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      assert.ok(await audited());
    });

    test('the collector deletes expired challenges (left by abandoned pages), never a live one', async () => {
      const realm = (await ts.store.realms.get('test'))!;
      const t = Math.floor(ts.clock.nowMs() / 1000);
      await issueChallenge(ts.store, realm, 'test:old', 'get', t - 400);
      const live = await issueChallenge(ts.store, realm, 'test:live', 'get', t);
      const c = new Collector({ store: ts.store, clock: ts.clock, intervalSeconds: 300, eventsRetentionDays: 90, adminEventsRetentionDays: 365 });
      try {
        assert.ok(((await c.runOnce()).deleted as Record<string, number>).webauthn_challenges! >= 1);
      } finally {
        await c.stop();
      }
      assert.equal(await ts.store.webauthn.consumeChallenge({ hash: tokenHash(live), boundTo: 'test:live', purpose: 'get', now: t }), true);
    });

    test('malformed responses are a page, never a 500', async () => {
      const { id } = await userWithKey('mal');
      let p = await afterPassword('mal');
      for (const fields of [{} as Record<string, string>, { credential_id: '!!!' }, { credential_id: 'AAAA', client_data_json: 'AAAA', authenticator_data: 'AAAA', signature: 'AAAA' }, { credential_id: 'x'.repeat(5000) }]) {
        await ts.store.loginFailures.clear('test', `otp:${id}`);
        const r = await post(p, fields);
        assert.equal(r.status, 400, JSON.stringify(fields).slice(0, 80));
        p = r.page;
      }
    });
  });
}
