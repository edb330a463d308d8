import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes, randomUUID } from 'node:crypto';
import { dialects } from '../helpers/db.js';
import { startTestServer, PASSWORD, REALM, type TestServer } from '../helpers/server.js';
import { CookieJar, flowSteps, inject, parseForm } from '../helpers/flow.js';
import { enrollTestOtp } from '../helpers/otp.js';
import { createUser } from '../../src/admin/operations.js';
import { updateRequiredAction } from '../../src/admin/operations/required-actions.js';
import { createRecoveryCodes } from '../../src/admin/operations/recovery-codes.js';
import { passwordCredentialId, recoveryCodesCredentialId } from '../../src/admin/operations/user-credentials.js';
import { nowSeconds } from '../../src/clock.js';

// Keycloak's delete_credential (kc_action=delete_credential:<credential id>): an application asks the
// signed-in user to delete one of their credentials, by the id Keycloak's admin API lists it under. The
// user confirms or cancels; the client learns kc_action_status. Over HTTP, on both databases.
for (const dialect of dialects()) {
  describe(`kc_action=delete_credential (${dialect})`, () => {
    let ts: TestServer;
    before(async () => {
      ts = await startTestServer({ dialect });
    });
    after(() => ts.close());

    type Res = Awaited<ReturnType<typeof inject>>;
    const { auth, drive, clientRedirect } = flowSteps(() => ts);
    /** A user signed in at the application (password only), then given an authenticator, a security key and recovery codes. */
    async function signedIn(username: string): Promise<{ jar: CookieJar; id: string; otpId: string; keyId: string }> {
      const { id } = await createUser(ts.store, { realmId: REALM, username, password: PASSWORD, orgAliases: ['acme'] });
      const jar = new CookieJar();
      const login = parseForm((await drive(jar, await auth(jar))).body);
      clientRedirect(await drive(jar, await inject(ts.app, jar, 'POST', login.action, { csrf: login.csrf, username, password: PASSWORD })));
      const user = (await ts.store.users.get(id))!;
      await enrollTestOtp(ts.store, user, 'Work phone <b>', nowSeconds(ts.services.clock));
      const otpId = (await ts.store.otp.list(id))[0]!.id;
      await createRecoveryCodes(ts.store, user);
      const keyId = randomUUID();
      await ts.store.webauthn.create({ id: keyId, realmId: REALM, userId: id, label: null, credentialId: randomBytes(16), publicKey: randomBytes(77), alg: -7, aaguid: '00000000-0000-0000-0000-000000000000', signCount: 0, attestationFormat: 'none', transports: [], createdAt: nowSeconds(ts.services.clock), passwordless: false });
      return { jar, id, otpId, keyId };
    }
    /** kc_action=delete_credential:<id> in that browser: the page shown, or the client's redirect. */
    const ask = async (jar: CookieJar, credentialId: string | undefined): Promise<Res> => drive(jar, await auth(jar, { kc_action: credentialId === undefined ? 'delete_credential' : `delete_credential:${credentialId}` }));
    const answer = async (jar: CookieJar, page: Res, fields: Record<string, string>): Promise<Res> => {
      const form = parseForm(page.body);
      return drive(jar, await inject(ts.app, jar, 'POST', form.action, { csrf: form.csrf, ...fields }));
    };
    const events = async (userId: string) => (await ts.store.events.list(REALM, { userId, limit: 100 })).map((e) => e.type);

    test("Delete: the authenticator goes (and with the last one its recovery codes), the client gets kc_action_status=success; the key's page names it; Cancel keeps it", async () => {
      const { jar, id, otpId, keyId } = await signedIn('cora');
      const page = await ask(jar, otpId);
      assert.equal(page.statusCode, 200, page.body.slice(0, 300));
      assert.match(page.body, /<h1>Delete Work phone &lt;b&gt;<\/h1>/);
      assert.match(page.body, /Web App asks you to delete <strong>Work phone &lt;b&gt;<\/strong> from your account <strong>cora<\/strong>\./);
      assert.match(page.body, /Do you want to delete Work phone &lt;b&gt;\?/);
      // Without the form's CSRF token: refused, nothing deleted.
      const forged = await inject(ts.app, jar, 'POST', parseForm(page.body).action, { csrf: 'forged', confirm: '1' });
      assert.equal(forged.statusCode, 403);
      assert.equal((await ts.store.otp.list(id)).length, 1);
      const back = clientRedirect(await answer(jar, page, { confirm: '1' }));
      assert.equal(back.searchParams.get('kc_action'), 'delete_credential');
      assert.equal(back.searchParams.get('kc_action_status'), 'success');
      assert.ok(back.searchParams.get('code'));
      assert.deepEqual(await ts.store.otp.list(id), []);
      assert.equal(await ts.store.recoveryCodes.summary(id), undefined, 'the recovery codes went with the last authenticator');
      assert.ok((await events(id)).includes('REMOVE_TOTP'));

      // The security key, unnamed: called what it is; Cancel keeps it.
      const keyPage = await ask(jar, keyId);
      assert.match(keyPage.body, /<h1>Delete Security key<\/h1>/);
      const cancelled = clientRedirect(await answer(jar, keyPage, { cancel: '1' }));
      assert.equal(cancelled.searchParams.get('kc_action_status'), 'cancelled');
      assert.equal((await ts.store.webauthn.list(id)).length, 1);
      const gone = clientRedirect(await answer(jar, await ask(jar, keyId), { confirm: '1' }));
      assert.equal(gone.searchParams.get('kc_action_status'), 'success');
      assert.deepEqual(await ts.store.webauthn.list(id), []);
      assert.ok((await events(id)).includes('REMOVE_CREDENTIAL'));
    });

    test("recovery codes by their id; the password cannot be deleted (only Cancel); an unknown id, another user's credential or none named is ignored, as Keycloak ignores it", async () => {
      const { jar, id } = await signedIn('dirk');
      const other = await signedIn('erna');
      const codes = await ask(jar, recoveryCodesCredentialId(id));
      assert.match(codes.body, /<h1>Delete Recovery codes<\/h1>/);
      assert.equal(clientRedirect(await answer(jar, codes, { confirm: '1' })).searchParams.get('kc_action_status'), 'success');
      assert.equal(await ts.store.recoveryCodes.summary(id), undefined);
      assert.equal((await ts.store.otp.list(id)).length, 1, 'the authenticator stays');

      const password = await ask(jar, passwordCredentialId(id));
      assert.equal(password.statusCode, 200);
      assert.match(password.body, /Your password cannot be deleted\. Change it on your account page instead\./);
      assert.doesNotMatch(password.body, /name="confirm"/);
      // A hand-made Delete does nothing.
      const forcedPage = await answer(jar, password, { confirm: '1' });
      assert.equal(forcedPage.statusCode, 200);
      assert.ok((await ts.store.users.get(id))!.passwordHash.startsWith('$argon2id$'));
      assert.equal(clientRedirect(await answer(jar, password, { cancel: '1' })).searchParams.get('kc_action_status'), 'cancelled');

      for (const credentialId of ['no-such-credential', other.otpId, undefined]) {
        const back = clientRedirect(await ask(jar, credentialId));
        assert.ok(back.searchParams.get('code'), String(credentialId));
        assert.equal(back.searchParams.get('kc_action_status'), null, String(credentialId));
      }
      assert.equal((await ts.store.otp.list(other.id)).length, 1, "another user's authenticator is untouched");
      // A parameter on an action that takes none is still refused.
      const bad = clientRedirect(await auth(jar, { kc_action: 'UPDATE_PASSWORD:x' }));
      assert.equal(bad.searchParams.get('error'), 'invalid_request');
    });

    test('disabled in the realm: kc_action=delete_credential is refused, as any disabled action', async () => {
      await updateRequiredAction(ts.store, { realmId: REALM, alias: 'delete_credential', changes: { enabled: false } });
      ts.services.cache.clear();
      try {
        const back = clientRedirect(await auth(new CookieJar(), { kc_action: 'delete_credential:x' }));
        assert.equal(back.searchParams.get('error'), 'invalid_request');
        assert.match(back.searchParams.get('error_description') ?? '', /kc_action delete_credential is disabled in this realm/);
      } finally {
        await updateRequiredAction(ts.store, { realmId: REALM, alias: 'delete_credential', changes: { enabled: true } });
        ts.services.cache.clear();
      }
    });
  });
}
