import { pendingActions, termsText } from '../../admin/required-actions.js';
import { answerTerms, completeProfileUpdate, profileForm, renameOwnAccount, termsAccepted } from '../../admin/operations/profile-actions.js';
import { deleteAccountPage, termsPage, updateProfilePage, type ProfileValues } from '../../views/required-action-pages.js';
import { deleteOwnAccount, mayDeleteOwnAccount } from '../../admin/operations/account-deletion.js';
import { problemTexts } from '../interaction/problems.js';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { realmBase, type Services } from '../../services.js';
import type { BrowserSession, Realm } from '../../storage/types.js';
import type { EventType } from '../../storage/repos/events.js';
import { nowSeconds } from '../../clock.js';
import { safeEqual, tokenHash } from '../../crypto/random.js';
import { createBrowserSession, passwordExpired, sessionOrigin } from '../../oauth/authorize/interaction.js';
import { attemptLogin, attemptOtp, attemptSecondFactor } from '../../oauth/brute-force.js';
import { assertionFields, b64uField, checkWebAuthnAssertion, creationOptions, issueChallenge, registerWebAuthn, removeWebAuthn, requestOptions, transportsField } from '../../admin/operations/webauthn.js';
import { registerWebauthnPage, webauthnPage } from '../../views/webauthn-pages.js';
import { DEVICE_COOKIE, DEVICE_COOKIE_MAX_AGE, issueDeviceCookie } from '../../oauth/device-cookie.js';
import { accountPage, recoveryCodesPage, type AccountGrant } from '../../views/account-pages.js';
import { createRecoveryCodes } from '../../admin/operations/recovery-codes.js';
import { configureOtpPage, loginLabel, loginPage, otpPage, updatePasswordPage } from '../../views/pages.js';
import { completePasswordUpdate } from '../../admin/operations/users.js';
import { localizedRule } from '../../views/password-rule.js';
import { enrollOtp, removeOtp } from '../../admin/operations/otp.js';
import { unlinkOwnAccount } from '../../admin/operations/identity-providers.js';
import { linkableProviders } from '../../admin/operations/account-linking.js';
import { linkNotice, startAccountLink } from './linking.js';
import { hasPassword } from '../../crypto/passwords.js';
import type { User } from '../../storage/types.js';
import { otpSetup } from '../otp-setup.js';
import { SESSION_COOKIE, browserSession, checkFormCsrf, clearRealmCookie, clearSessionStateCookie, ensureBrowserBinding, formCsrf, readRealmCookie, setRealmCookie, setSessionCookies } from '../cookies.js';
import { htmlErrorHandler, renderError, sendAccountDeleted, sendFrontchannelLogoutPage, sendPage } from '../interaction/render.js';
import { preflight, varyOrigin } from '../plugins/cors.js';
import { passkeyOption, passkeySignIn } from '../passkey-sign-in.js';
import { sendProfile, updateProfileJson, wantsProfileJson } from './profile.js';
import { checkUsernameChange } from '../../admin/operations/users.js';
import { verifyEmailTrigger } from '../../admin/operations/email-verification.js';
import { accountVerifyEmail } from '../interaction/registration-routes.js';
import { INVITATION_COOKIE, invitationPath } from '../interaction/invitation-routes.js';
import { logoutSession } from '../../oidc/end-session.js';
import { logoutFrames } from '../../oidc/frontchannel-logout.js';
import { useTranslator } from '../i18n.js';
import { msg, t, type Text } from '../../i18n/translator.js';
import { ConflictError, USERNAME_RE, ValidationError } from '../../admin/validation.js';
import { localeName, realmLocales } from '../../i18n/locales.js';
import { providerName } from '../../oauth/social-providers.js';
import { deviceLine } from '../../views/user-agent.js';

/** The error a view shows (a string, or a message in the reader's language). */
type ErrorOf<V extends (ctx: never) => string> = Parameters<V>[0] extends { error?: infer E } ? E : never;

type Req = FastifyRequest<{ Params: { realm: string }; Querystring: Record<string, unknown>; Body: Record<string, unknown> | undefined }>;

function field(req: Req, name: string): string | undefined {
  const v = req.body?.[name];
  return typeof v === 'string' && v.length <= 1024 ? v : undefined;
}

/**
 * The end user's account page: the applications they have granted access to, with a button that takes
 * the access back (its refresh chains and its consent), and their browser sessions, with sign-out.
 */
/** How recent a sign-in lets a user without a password delete their account, or change their email, from the account page. */
const REAUTH_AGE_S = 300;

/**
 * How the account page confirms a sensitive change (deleting the account, a new email) by `user` in
 * `session`: the current password; for a user without one, a sign-in of the last minutes (`recent`),
 * else none (`sign-in-again`); a user of an LDAP directory changes neither here (`federated`).
 */
function reauthMode(user: User, session: BrowserSession, now: number): 'password' | 'recent' | 'sign-in-again' | 'federated' {
  if (user.federationLink) return 'federated';
  if (hasPassword(user.passwordHash)) return 'password';
  // An impersonated session is no sign-in of the user's (src/oauth/authorize/interaction.ts sessionUsable).
  return session.impersonator === undefined && now - session.authTime <= REAUTH_AGE_S ? 'recent' : 'sign-in-again';
}

/** How long the forms after the password (authenticator code, new password, authenticator setup) stay valid. */
const PROOF_LIFETIME_S = 600;

/**
 * What a proof says the browser has shown: `password`, the password only (the authenticator's code comes
 * next); `all`, the password and the authenticator's code, or a password alone for a user without one.
 */
type ProofStage = 'password' | 'all';

/** A refused username change (checkUsernameChange, changeUsername) as a message; other errors are thrown again. */
function usernameRefusal(err: unknown, username: string): Text {
  if (err instanceof ConflictError) return msg('usernameExistsMessage');
  if (err instanceof ValidationError) return USERNAME_RE.test(username) ? err.message : msg('invalidUsernameCharactersMessage');
  throw err;
}

export async function accountRoutes(app: FastifyInstance, opts: { services: Services }): Promise<void> {
  const { services } = opts;
  // The HTML error page, except to the account REST API (a bearer token or JSON asked for), which gets
  // Keycloak's ErrorRepresentation for a body it cannot read (malformed JSON, too large).
  const htmlErrors = htmlErrorHandler(services);
  app.setErrorHandler(function accountErrors(error, req, reply) {
    const status = (error as { statusCode?: number }).statusCode;
    if (status !== undefined && status >= 400 && status < 500 && wantsProfileJson(req)) {
      reply.header('cache-control', 'no-store');
      return reply.code(status === 413 ? 413 : 400).type('application/json').send({ errorMessage: 'the request body could not be read: a JSON user representation is expected', params: [] });
    }
    return htmlErrors.call(this, error as Error, req, reply);
  });
  const path = '/auth/realms/:realm/account';
  const baseOf = (realm: Realm): string => `/auth/realms/${encodeURIComponent(realm.id)}/account`;

  async function context(req: Req, reply: FastifyReply): Promise<{ realm: Realm; session: BrowserSession | undefined; csrf: string; binding: string } | undefined> {
    const realm = await services.cache.realm(req.params.realm);
    if (!realm) {
      renderError(reply, 404, { realmName: 'Realmgate', title: msg('unknownRealmTitle'), description: msg('unknownRealmMessage') });
      return undefined;
    }
    const binding = ensureBrowserBinding(req, reply, services.config, realm.id);
    const csrf = await formCsrf(services, 'account', binding);
    const session = await browserSession(services, req, realm.id);
    // Keycloak's account console speaks the signed-in user's language (their locale attribute), else
    // the browser's choice (src/http/i18n.ts).
    const user = realm.internationalizationEnabled && session ? await services.store.users.get(session.userId) : undefined;
    await speak(reply, realm, user);
    return { realm, session, csrf, binding };
  }

  /**
   * Chooses the language of the page about to be rendered: `user`'s own (their locale attribute) once
   * known. `here`: the address that shows the page again (the language menu's links); a GET request's own
   * address when not given.
   */
  async function speak(reply: FastifyReply, realm: Realm, user: User | undefined, here?: string): Promise<void> {
    await useTranslator(services, reply.request, reply, realm, { userLocale: user?.attributes.locale?.[0], ...(here !== undefined ? { here } : {}) });
  }

  /**
   * The signed-in page. `notice`: what the last form did; `passwordError`, `deleteError`, `profile`: why the
   * password, deletion or personal info form was refused (the typed values shown again).
   */
  async function show(reply: FastifyReply, realm: Realm, session: BrowserSession, csrf: string, extra: { notice?: Text | undefined; passwordError?: Text; deleteError?: Text; profile?: { values: ProfileValues; errors: readonly Text[]; username?: string } } = {}): Promise<FastifyReply> {
    const { notice, passwordError, deleteError } = extra;
    const now = nowSeconds(services.clock);
    const user = await services.store.users.get(session.userId);
    // The page shown after a form too: its language menu shows the page again.
    await speak(reply, realm, user, baseOf(realm));
    const locales = realm.internationalizationEnabled ? realmLocales(realm) : [];
    const pageLocale = reply.request.translator?.locale ?? 'en';
    const [consents, usage, orgs, sessions, scopes, authenticators, links, providers, linkable] = await Promise.all([
      services.store.consents.listForUser(realm.id, session.userId),
      services.store.refresh.lastUsedByUser(realm.id, session.userId, now),
      services.store.users.organizations(session.userId),
      services.store.sessions.listActive(realm.id, session.userId, now),
      services.cache.realmScopes(realm.id),
      services.store.otp.list(session.userId),
      services.store.identityProviders.links(session.userId),
      services.store.identityProviders.list(realm.id),
      linkableProviders(services.store, realm.id, { id: session.userId }),
    ]);
    const securityKeys = await services.store.webauthn.list(session.userId);
    const recoveryCodesLeft = authenticators.length > 0 ? await services.store.recoveryCodes.remaining(session.userId) : 0;
    const grants: AccountGrant[] = [];
    const keys = new Set([...consents.map((c) => `${c.clientId}\0${c.organizationId}`), ...usage.map((u) => `${u.clientId}\0${u.organizationId}`)]);
    for (const key of keys) {
      const [clientId, organizationId] = key.split('\0') as [string, string];
      const consent = consents.find((c) => c.clientId === clientId && c.organizationId === organizationId);
      const used = usage.find((u) => u.clientId === clientId && u.organizationId === organizationId);
      const client = await services.cache.client(realm.id, clientId);
      grants.push({
        clientId,
        clientName: client?.name ?? clientId,
        organizationId,
        organizationName: orgs.find((o) => o.id === organizationId)?.name ?? msg('accountFormerOrganization'),
        scopes: (consent?.scopes ?? []).map((n) => scopes?.get(n) ?? { name: n, consentText: n }),
        since: consent?.createdAt ?? used?.lastUsed ?? now,
        lastUsed: used?.lastUsed,
      });
    }
    const deletion = user && (await mayDeleteOwnAccount(services.store, realm, user)) ? { mode: reauthMode(user, session, now), ...(deleteError ? { error: deleteError } : {}) } : undefined;
    const profile = {
      values: extra.profile?.values ?? { email: user?.email ?? '', firstName: user?.firstName ?? '', lastName: user?.lastName ?? '' },
      readOnly: Boolean(user?.federationLink),
      password: user !== undefined && hasPassword(user.passwordHash),
      usernameEditable: realm.editUsernameAllowed && !realm.registrationEmailAsUsername,
      ...(extra.profile ? { errors: extra.profile.errors, ...(extra.profile.username !== undefined ? { username: extra.profile.username } : {}) } : {}),
    };
    return sendPage(reply, passwordError || deleteError || extra.profile ? 400 : 200, () =>
      accountPage({
        realmName: realm.displayName ?? realm.id,
        username: user?.username ?? '',
        base: baseOf(realm),
        csrf,
        grants,
        sessions: sessions.map((s) => {
          const device = deviceLine(s.userAgent);
          return { id: s.id, createdAt: s.createdAt, current: s.id === session.id, ...(s.impersonator ? { impersonator: s.impersonator.username } : {}), ...(device ? { device } : {}), ...(s.ipAddress ? { ipAddress: s.ipAddress } : {}) };
        }),
        authenticators: authenticators.map((a) => ({ id: a.id, label: a.label, createdAt: a.createdAt })),
        securityKeys: securityKeys.map((k) => ({ id: k.id, label: k.label, createdAt: k.createdAt, passwordless: k.passwordless })),
        links: links.map((l) => {
          const provider = providers.find((p) => p.alias === l.identityProvider);
          return {
            alias: l.identityProvider,
            providerName: provider ? providerName(provider) : l.identityProvider,
            username: l.federatedUsername ?? l.federatedUserId,
            createdAt: l.createdAt,
            last: links.length === 1 && user !== undefined && !hasPassword(user.passwordHash),
          };
        }),
        linkable: linkable.map((p) => ({ alias: p.alias, providerName: providerName(p) })),
        hasPassword: user !== undefined && hasPassword(user.passwordHash),
        passwordRule: localizedRule(realm.passwordPolicy),
        recoveryCodesLeft,
        ...(notice ? { notice } : {}),
        ...(passwordError ? { passwordError } : {}),
        ...(deletion ? { deletion } : {}),
        profile,
        // The languages to choose from, the page's own preselected (the user's, or the one the menu chose).
        ...(locales.length > 1 ? { language: { locales: locales.map((tag) => ({ tag, name: localeName(tag) })), current: pageLocale } } : {}),
      }),
    );
  }

  /** A new browser session for the user (one this browser had ends), then the account page. */
  async function signIn(req: Req, reply: FastifyReply, c: { realm: Realm; session: BrowserSession | undefined }, user: { id: string; username: string }): Promise<FastifyReply> {
    await services.audit.record({ realmId: c.realm.id, type: 'LOGIN', outcome: 'success', clientId: 'account', userId: user.id, username: user.username, ip: req.ip });
    if (c.session) await services.store.sessions.end(c.session.id, nowSeconds(services.clock));
    const { secret, session } = await createBrowserSession(services, c.realm, user.id, { from: sessionOrigin(req) });
    setSessionCookies(reply, services.config, session, secret, nowSeconds(services.clock));
    // Signed in to accept an organization invitation: back to it.
    const invitation = readRealmCookie(req, services.config, c.realm.id, INVITATION_COOKIE);
    if (invitation && /^[A-Za-z0-9_-]{20,100}$/.test(invitation)) {
      clearRealmCookie(reply, services.config, c.realm.id, INVITATION_COOKIE);
      return reply.redirect(`${invitationPath(c.realm.id)}?key=${invitation}`, 303);
    }
    return reply.redirect(baseOf(c.realm), 303);
  }

  /**
   * The page has no pending request to remember what the user has proved, so each form after the password
   * carries a proof: `<user id>.<stage>.<expiry>.<MAC>`, the MAC (the server's form key) over the stage,
   * the user, the expiry and the current password's hash (a changed password voids it), for this browser.
   */
  function proofMac(stage: ProofStage, userId: string, expiresAt: number, passwordHash: string, binding: string): Promise<string> {
    return formCsrf(services, `account-proof\0${stage}\0${userId}\0${expiresAt}\0${tokenHash(passwordHash)}`, binding);
  }

  async function makeProof(user: User, stage: ProofStage, binding: string): Promise<string> {
    const expiresAt = nowSeconds(services.clock) + PROOF_LIFETIME_S;
    return `${user.id}.${stage}.${expiresAt}.${await proofMac(stage, user.id, expiresAt, user.passwordHash, binding)}`;
  }

  /** The user a form's proof of `stage` names, when it is valid for this browser, unexpired and the user enabled. */
  async function readProof(req: Req, realm: Realm, binding: string, stage: ProofStage): Promise<{ user: User; proof: string } | undefined> {
    const proof = field(req, 'proof') ?? '';
    // Read from the right: an imported user's id may hold dots.
    const [, userId = '', got = '', exp = ''] = /^(.+)\.(password|all)\.(\d+)\.[^.]*$/.exec(proof) ?? [];
    const expiresAt = Number(exp);
    if (got !== stage || !/^\d{1,12}$/.test(exp) || expiresAt <= nowSeconds(services.clock)) return undefined;
    const user = await services.store.users.get(userId);
    if (!user || user.realmId !== realm.id || !user.enabled) return undefined;
    if (!safeEqual(proof, `${userId}.${stage}.${exp}.${await proofMac(stage, userId, expiresAt, user.passwordHash, binding)}`)) return undefined;
    return { user, proof };
  }

  /** The new password of a form (typed twice), set for the user; the words of a refusal, else undefined. */
  function newPasswordFromForm(req: Req, realm: Realm, user: User, reason?: string): Promise<string | undefined> {
    return completePasswordUpdate(services.store, {
      realmId: realm.id,
      user,
      password: field(req, 'password-new') ?? '',
      confirmation: field(req, 'password-confirm') ?? '',
      ip: req.ip,
      clientId: 'account',
      nowSeconds: nowSeconds(services.clock),
      ...(reason ? { reason } : {}),
    });
  }

  async function updatePassword(reply: FastifyReply, realm: Realm, csrf: string, user: User, proof: string, error?: ErrorOf<typeof updatePasswordPage>): Promise<FastifyReply> {
    await speak(reply, realm, user);
    const page = (): string => updatePasswordPage({
      realmName: realm.displayName ?? realm.id,
      clientName: t('accountClientName'),
      action: `${baseOf(realm)}/update-password`,
      csrf,
      username: user.username,
      proof,
      rule: localizedRule(realm.passwordPolicy),
      ...(passwordExpired(services, realm, user) ? { expired: true } : {}),
      ...(error ? { error } : {}),
    });
    return sendPage(reply, error ? 400 : 200, page);
  }

  async function otp(reply: FastifyReply, realm: Realm, csrf: string, user: User, proof: string, error?: ErrorOf<typeof otpPage>, status?: number): Promise<FastifyReply> {
    await speak(reply, realm, user);
    const otherMethod = (await services.store.webauthn.has(user.id)) ? { otherMethod: `${baseOf(realm)}/second-factor` } : {};
    const page = (): string => otpPage({ realmName: realm.displayName ?? realm.id, clientName: t('accountClientName'), action: `${baseOf(realm)}/otp`, csrf, username: user.username, proof, ...otherMethod, ...(error ? { error } : {}) });
    return sendPage(reply, status ?? (error ? 400 : 200), page);
  }

  /** What a security key's challenge on this page is bound to: this browser (its binding cookie, hashed). */
  const keyBinding = (binding: string): string => `account:${tokenHash(binding)}`;

  /** The sign-in's security key step (a proof of the password), with "Use another method" for a user with an app too. */
  async function securityKey(reply: FastifyReply, realm: Realm, c: { csrf: string; binding: string }, user: User, proof: string, error?: ErrorOf<typeof webauthnPage>, status?: number): Promise<FastifyReply> {
    await speak(reply, realm, user);
    const keys = await services.store.webauthn.list(user.id, 'two-factor');
    const challenge = await issueChallenge(services.store, realm, keyBinding(c.binding), 'get', nowSeconds(services.clock));
    const otherMethod = (await services.store.otp.has(user.id)) ? { otherMethod: `${baseOf(realm)}/second-factor` } : {};
    const page = (): string => webauthnPage({ realmName: realm.displayName ?? realm.id, clientName: t('accountClientName'), action: `${baseOf(realm)}/webauthn`, csrf: c.csrf, username: user.username, options: requestOptions(services.config, realm, challenge, keys), proof, ...otherMethod, ...(error ? { error } : {}) });
    return sendPage(reply, status ?? (error ? 400 : 200), page);
  }

  /** Registering a security key (a proof of every step): the webauthn-register required action, or "Add a security key". */
  async function registerKey(reply: FastifyReply, realm: Realm, c: { csrf: string; binding: string }, user: User, proof: string, error?: ErrorOf<typeof registerWebauthnPage>): Promise<FastifyReply> {
    await speak(reply, realm, user);
    const challenge = await issueChallenge(services.store, realm, keyBinding(c.binding), 'create', nowSeconds(services.clock));
    const options = creationOptions(services.config, realm, user, challenge, await services.store.webauthn.list(user.id));
    const page = (): string => registerWebauthnPage({ realmName: realm.displayName ?? realm.id, clientName: t('accountClientName'), action: `${baseOf(realm)}/webauthn-register`, csrf: c.csrf, username: user.username, options, proof, ...(error ? { error } : {}) });
    return sendPage(reply, error ? 400 : 200, page);
  }

  async function terms(reply: FastifyReply, realm: Realm, csrf: string, user: User, proof: string): Promise<FastifyReply> {
    await speak(reply, realm, user);
    return sendPage(reply, 200, () => termsPage({ realmName: realm.displayName ?? realm.id, clientName: t('accountClientName'), action: `${baseOf(realm)}/terms`, csrf, username: user.username, text: termsText(realm), hidden: { proof } }));
  }

  async function updateProfile(reply: FastifyReply, realm: Realm, csrf: string, user: User, proof: string, typed?: { values: ProfileValues; errors: NonNullable<Parameters<typeof updateProfilePage>[0]['errors']> }): Promise<FastifyReply> {
    await speak(reply, realm, user);
    const values = typed?.values ?? { email: user.email ?? '', firstName: user.firstName ?? '', lastName: user.lastName ?? '' };
    const page = (): string => updateProfilePage({ realmName: realm.displayName ?? realm.id, clientName: t('accountClientName'), action: `${baseOf(realm)}/update-profile`, csrf, username: user.username, values, readOnly: Boolean(user.federationLink), hidden: { proof }, ...(typed ? { errors: typed.errors } : {}) });
    return sendPage(reply, typed ? 400 : 200, page);
  }

  /**
   * The current password typed again for a change on the signed-in page (a new password, a new email,
   * deleting the account), checked and counted as a sign-in is: a stolen session cannot guess it.
   * Undefined when right; else the words to show (Retry-After set while throttled), the refusal recorded
   * as `refused`.
   */
  async function currentPasswordRefusal(req: Req, reply: FastifyReply, realm: Realm, user: User, typed: string, refused: { type: EventType; reason: string }): Promise<Text | undefined> {
    const check = await attemptLogin(services, realm, { username: user.username, password: typed, ip: req.ip, clientId: 'account', deviceCookie: readRealmCookie(req, services.config, realm.id, DEVICE_COOKIE) });
    if (!('error' in check)) return undefined;
    await services.audit.record({ realmId: realm.id, type: refused.type, outcome: 'failure', clientId: 'account', userId: user.id, username: user.username, ip: req.ip, reason: refused.reason });
    if (check.retryAfter) reply.header('retry-after', String(check.retryAfter));
    return check.retryAfter ? check.error : msg('accountCurrentPasswordWrong');
  }

  /** Keycloak's delete_account required action, at the account page's sign-in: the confirmation page. */
  async function deleteAccount(reply: FastifyReply, realm: Realm, csrf: string, user: User, proof: string, refused?: Text): Promise<FastifyReply> {
    await speak(reply, realm, user);
    const error = refused ?? (!(await mayDeleteOwnAccount(services.store, realm, user)) ? msg('deletingAccountForbidden') : undefined);
    return sendPage(reply, error ? 403 : 200, () => deleteAccountPage({ realmName: realm.displayName ?? realm.id, clientName: t('accountClientName'), action: `${baseOf(realm)}/delete-account`, csrf, username: user.username, hidden: { proof }, ...(error ? { error } : {}) }));
  }

  async function configureOtp(reply: FastifyReply, realm: Realm, csrf: string, user: User, proof: string, error?: ErrorOf<typeof configureOtpPage>): Promise<FastifyReply> {
    await speak(reply, realm, user);
    const setup = await otpSetup(services, realm, user.username, `account\0${proof}`);
    const page = (): string => configureOtpPage({ realmName: realm.displayName ?? realm.id, clientName: t('accountClientName'), action: `${baseOf(realm)}/configure-otp`, csrf, username: user.username, qr: setup.qr, key: setup.base32, proof, ...(error ? { error } : {}) });
    return sendPage(reply, error ? 400 : 200, page);
  }

  type Ctx = NonNullable<Awaited<ReturnType<typeof context>>>;

  /**
   * The common start of a form after the password (code, new password, authenticator setup): this page's
   * CSRF token and a valid proof of `stage`; otherwise a "Form expired" page.
   */
  async function proofForm(req: Req, reply: FastifyReply, stage: ProofStage, also: (user: User, c: Ctx) => boolean = () => true): Promise<{ c: Ctx; user: User; proof: string } | FastifyReply> {
    const c = await context(req, reply);
    if (!c) return reply;
    const proved = (await checkFormCsrf(req, services, c.realm.id, 'account', req.body?.csrf)) ? await readProof(req, c.realm, c.binding, stage) : undefined;
    if (!proved || !also(proved.user, c)) return renderError(reply, 403, { realmName: c.realm.displayName ?? c.realm.id, title: msg('formExpiredTitle'), description: msg('accountFormExpiredMessage') });
    return { c, ...proved };
  }

  /** The common start of a form of the signed-in page: its session and CSRF token; otherwise back to the page. */
  async function sessionForm(req: Req, reply: FastifyReply): Promise<{ c: Ctx & { session: BrowserSession } } | FastifyReply> {
    const c = await context(req, reply);
    if (!c) return reply;
    if (!c.session || !(await checkFormCsrf(req, services, c.realm.id, 'account', req.body?.csrf))) return reply.redirect(baseOf(c.realm), 303);
    return { c: { ...c, session: c.session } };
  }

  /**
   * After the password and the authenticator's code: the required actions (each form with a proof of
   * both), then the session.
   */
  async function afterSecondFactor(req: Req, reply: FastifyReply, c: { realm: Realm; session: BrowserSession | undefined; csrf: string; binding: string }, user: User): Promise<FastifyReply> {
    // The realm's enabled actions only (a disabled one is not asked), in the realm's order, as at an
    // application's sign-in; VERIFY_EMAIL last (below).
    for (const action of pendingActions(c.realm, user)) {
      if (action === 'UPDATE_PASSWORD') return updatePassword(reply, c.realm, c.csrf, user, await makeProof(user, 'all', c.binding));
      if (action === 'CONFIGURE_TOTP') return configureOtp(reply, c.realm, c.csrf, user, await makeProof(user, 'all', c.binding));
      if (action === 'webauthn-register') return registerKey(reply, c.realm, c, user, await makeProof(user, 'all', c.binding));
      if (action === 'TERMS_AND_CONDITIONS') return terms(reply, c.realm, c.csrf, user, await makeProof(user, 'all', c.binding));
      if (action === 'UPDATE_PROFILE') return updateProfile(reply, c.realm, c.csrf, user, await makeProof(user, 'all', c.binding));
      if (action === 'delete_account') return deleteAccount(reply, c.realm, c.csrf, user, await makeProof(user, 'all', c.binding));
    }
    // Keycloak's verifyEmail holds the account page back too: a link is mailed, no session until it is followed.
    const checked = await verifyEmailTrigger(services.store, c.realm, user);
    if (checked.requiredActions.includes('VERIFY_EMAIL')) return accountVerifyEmail(services, reply, c.realm, checked, c.csrf);
    return signIn(req, reply, c, user);
  }

  /** The sign-in page of the account page, with the passkey button when a user of the realm has a passkey (its challenge bound to this browser). */
  async function login(reply: FastifyReply, c: { realm: Realm; csrf: string; binding: string }, error?: ErrorOf<typeof loginPage>, status = 200): Promise<FastifyReply> {
    const { realm, csrf } = c;
    const passkey = await passkeyOption(services, realm, keyBinding(c.binding), `${baseOf(realm)}/passwordless`);
    return sendPage(reply, status, () => loginPage({ realmName: realm.displayName ?? realm.id, clientName: t('accountClientName'), action: `${baseOf(realm)}/login`, csrf, usernameLabel: loginLabel(realm), ...passkey, ...(error ? { error } : {}) }));
  }

  varyOrigin(app);
  preflight(app, services, path, 'GET, POST');

  // Keycloak's account REST API update (a bearer token; the HTML page's forms post to paths below it).
  app.post(path, async (req: Req, reply) => updateProfileJson(services, req, reply));

  app.get(path, async (req: Req, reply) => {
    if (wantsProfileJson(req)) return sendProfile(services, req, reply);
    const c = await context(req, reply);
    if (!c) return reply;
    const notice = await linkNotice(services, req, reply, c.realm);
    if (!c.session) return login(reply, c);
    return show(reply, c.realm, c.session, c.csrf, { notice });
  });

  app.post(`${path}/login`, async (req: Req, reply) => {
    const c = await context(req, reply);
    if (!c) return reply;
    if (!(await checkFormCsrf(req, services, c.realm.id, 'account', req.body?.csrf))) return renderError(reply, 403, { realmName: c.realm.displayName ?? c.realm.id, title: msg('formExpiredTitle'), description: msg('formExpiredMessage') });
    const username = field(req, 'username') ?? '';
    const outcome = await attemptLogin(services, c.realm, { username, password: field(req, 'password') ?? '', ip: req.ip, clientId: 'account', deviceCookie: readRealmCookie(req, services.config, c.realm.id, DEVICE_COOKIE) });
    if ('error' in outcome) {
      // Sampled as at an application's sign-in (an unknown name, a blocked guess).
      await services.audit.record(
        { realmId: c.realm.id, type: 'LOGIN_ERROR', outcome: 'failure', clientId: 'account', ...(outcome.subject ? { userId: outcome.subject.id, username: outcome.subject.username } : { username }), ip: req.ip, reason: outcome.retryAfter ? 'blocked' : 'invalid credentials' },
        { anonymous: !outcome.subject || Boolean(outcome.retryAfter) },
      );
      if (outcome.retryAfter) reply.header('retry-after', String(outcome.retryAfter));
      return login(reply, c, outcome.error, outcome.retryAfter ? 429 : 200);
    }
    const { user } = outcome;
    // A user with a security key or an authenticator: it next (the browser becomes a known device only after it).
    if (await services.store.webauthn.has(user.id)) return securityKey(reply, c.realm, c, user, await makeProof(user, 'password', c.binding));
    if (await services.store.otp.has(user.id)) return otp(reply, c.realm, c.csrf, user, await makeProof(user, 'password', c.binding));
    setRealmCookie(reply, services.config, c.realm.id, DEVICE_COOKIE, outcome.deviceCookie, DEVICE_COOKIE_MAX_AGE);
    // A temporary password or an authenticator to set up gives no session until done.
    return afterSecondFactor(req, reply, c, user);
  });

  // A passkey (Keycloak's webauthn-passwordless) on the account page's sign-in, as on an application's:
  // the key names the user and stands for both factors; the required actions, then the session.
  app.post(`${path}/passwordless`, async (req: Req, reply) => {
    const c = await context(req, reply);
    if (!c) return reply;
    if (!(await checkFormCsrf(req, services, c.realm.id, 'account', req.body?.csrf))) return renderError(reply, 403, { realmName: c.realm.displayName ?? c.realm.id, title: msg('formExpiredTitle'), description: msg('formExpiredMessage') });
    const r = await passkeySignIn(services, req, reply, c.realm, { boundTo: keyBinding(c.binding), clientId: 'account', field: (name) => field(req, name) });
    if ('error' in r) return login(reply, c, r.error, r.status);
    setRealmCookie(reply, services.config, c.realm.id, DEVICE_COOKIE, await issueDeviceCookie(services.store, c.realm.id, r.user.username), DEVICE_COOKIE_MAX_AGE);
    return afterSecondFactor(req, reply, c, r.user);
  });

  app.post(`${path}/otp`, async (req: Req, reply) => {
    const f = await proofForm(req, reply, 'password');
    if (!('user' in f)) return f;
    const { c, user, proof } = f;
    const outcome = await attemptOtp(services, c.realm, { user, code: field(req, 'otp') ?? '', ip: req.ip, clientId: 'account' });
    if ('error' in outcome) {
      await services.audit.record({ realmId: c.realm.id, type: 'LOGIN_ERROR', outcome: 'failure', clientId: 'account', userId: user.id, username: user.username, ip: req.ip, reason: outcome.retryAfter ? 'blocked' : 'invalid authenticator code' });
      if (outcome.retryAfter) reply.header('retry-after', String(outcome.retryAfter));
      return otp(reply, c.realm, c.csrf, user, proof, outcome.error, outcome.retryAfter ? 429 : 400);
    }
    setRealmCookie(reply, services.config, c.realm.id, DEVICE_COOKIE, await issueDeviceCookie(services.store, c.realm.id, user.username), DEVICE_COOKIE_MAX_AGE);
    return afterSecondFactor(req, reply, c, user);
  });

  app.post(`${path}/webauthn`, async (req: Req, reply) => {
    const f = await proofForm(req, reply, 'password');
    if (!('user' in f)) return f;
    const { c, user, proof } = f;
    if (!(await services.store.webauthn.has(user.id))) return reply.redirect(baseOf(c.realm), 303);
    let detail = '';
    const outcome = await attemptSecondFactor(services, c.realm, { user, ip: req.ip, clientId: 'account' }, async (now) => {
      const r = await checkWebAuthnAssertion(services.store, services.config, {
        realm: c.realm,
        user,
        boundTo: keyBinding(c.binding),
        ...assertionFields((name) => field(req, name)),
        nowSeconds: now,
      });
      if (r.ok) return undefined;
      detail = r.detail;
      return r.message;
    });
    if ('error' in outcome) {
      await services.audit.record({ realmId: c.realm.id, type: 'LOGIN_ERROR', outcome: 'failure', clientId: 'account', userId: user.id, username: user.username, ip: req.ip, reason: outcome.retryAfter ? 'blocked' : `security key refused: ${detail}` });
      if (outcome.retryAfter) reply.header('retry-after', String(outcome.retryAfter));
      return securityKey(reply, c.realm, c, user, proof, outcome.error, outcome.retryAfter ? 429 : 400);
    }
    setRealmCookie(reply, services.config, c.realm.id, DEVICE_COOKIE, await issueDeviceCookie(services.store, c.realm.id, user.username), DEVICE_COOKIE_MAX_AGE);
    return afterSecondFactor(req, reply, c, user);
  });

  // "Use another method": the app's code or the key, for a user with both (a proof of the password).
  app.post(`${path}/second-factor`, async (req: Req, reply) => {
    const f = await proofForm(req, reply, 'password');
    if (!('user' in f)) return f;
    const { c, user, proof } = f;
    if (field(req, 'method') === 'otp' && (await services.store.otp.has(user.id))) return otp(reply, c.realm, c.csrf, user, proof);
    if (await services.store.webauthn.has(user.id)) return securityKey(reply, c.realm, c, user, proof);
    return otp(reply, c.realm, c.csrf, user, proof);
  });

  app.post(`${path}/webauthn-register`, async (req: Req, reply) => {
    // A proof of every step: after the sign-in (webauthn-register pending), or this page's own session.
    const f = await proofForm(req, reply, 'all', (user, c) => c.session?.userId === user.id || user.requiredActions.includes('webauthn-register'));
    if (!('user' in f)) return f;
    const { c, user, proof } = f;
    const own = c.session?.userId === user.id;
    const problem = await registerWebAuthn(services.store, services.config, {
      realm: c.realm,
      user,
      boundTo: keyBinding(c.binding),
      clientDataJSON: b64uField(field(req, 'client_data_json')),
      attestationObject: b64uField(req.body && typeof req.body.attestation_object === 'string' ? req.body.attestation_object : undefined, 65_536),
      transports: transportsField(field(req, 'transports')),
      label: field(req, 'label') ?? '',
      ip: req.ip,
      clientId: 'account',
      nowSeconds: nowSeconds(services.clock),
    });
    if (problem) return registerKey(reply, c.realm, c, user, proof, problem);
    if (own && c.session) return show(reply, c.realm, c.session, c.csrf, { notice: msg('accountKeyRegistered') });
    return afterSecondFactor(req, reply, c, (await services.store.users.get(user.id)) ?? user);
  });

  app.post(`${path}/webauthn/setup`, async (req: Req, reply) => {
    const f = await sessionForm(req, reply);
    if (!('c' in f)) return f;
    const { c } = f;
    const user = await services.store.users.get(c.session.userId);
    if (!user) return reply.redirect(baseOf(c.realm), 303);
    return registerKey(reply, c.realm, c, user, await makeProof(user, 'all', c.binding));
  });

  app.post(`${path}/webauthn/remove`, async (req: Req, reply) => {
    const f = await sessionForm(req, reply);
    if (!('c' in f)) return f;
    const { c } = f;
    const user = await services.store.users.get(c.session.userId);
    const id = field(req, 'credential_id') ?? '';
    const removed = user ? await removeWebAuthn(services.store, user, id, { ip: req.ip, clientId: 'account', by: 'the user on the account page' }) : false;
    return show(reply, c.realm, c.session, c.csrf, { notice: removed ? msg('accountKeyRemoved') : undefined });
  });

  app.post(`${path}/configure-otp`, async (req: Req, reply) => {
    // A proof of every step: after the sign-in's password and code (CONFIGURE_TOTP pending), or given by
    // this page's own session (a user adding an authenticator).
    const f = await proofForm(req, reply, 'all', (user, c) => c.session?.userId === user.id || user.requiredActions.includes('CONFIGURE_TOTP'));
    if (!('user' in f)) return f;
    const { c, user, proof } = f;
    const own = c.session?.userId === user.id;
    const setup = await otpSetup(services, c.realm, user.username, `account\0${proof}`);
    const problem = await enrollOtp(services.store, { user, key: setup.key, code: field(req, 'otp') ?? '', label: field(req, 'label') ?? '', ip: req.ip, clientId: 'account', nowSeconds: nowSeconds(services.clock) });
    if (problem) return configureOtp(reply, c.realm, c.csrf, user, proof, problem);
    if (own && c.session) return show(reply, c.realm, c.session, c.csrf, { notice: msg('accountAppSetUp') });
    return afterSecondFactor(req, reply, c, (await services.store.users.get(user.id)) ?? user);
  });

  // Self-service from the signed-in page: a new password (the current one typed again, counted against
  // the user as a sign-in is: a stolen session cannot guess it), which signs every other browser and
  // application out; this browser gets a new session.
  app.post(`${path}/password`, async (req: Req, reply) => {
    const f = await sessionForm(req, reply);
    if (!('c' in f)) return f;
    const { c } = f;
    const user = await services.store.users.get(c.session.userId);
    if (!user) return reply.redirect(baseOf(c.realm), 303);
    const refused = await currentPasswordRefusal(req, reply, c.realm, user, field(req, 'password') ?? '', { type: 'LOGIN_ERROR', reason: 'password change: current password refused' });
    if (refused) return show(reply, c.realm, c.session, c.csrf, { passwordError: refused });
    const problem = await newPasswordFromForm(req, c.realm, user, 'changed by the user on the account page');
    if (problem) return show(reply, c.realm, c.session, c.csrf, { passwordError: problem });
    // Every session ended with the change: this browser signs in anew.
    // The new session is remembered as the one it replaces was.
    const { secret, session } = await createBrowserSession(services, c.realm, user.id, { rememberMe: c.session.rememberMe === true, from: sessionOrigin(req) });
    setSessionCookies(reply, services.config, session, secret, nowSeconds(services.clock));
    return show(reply, c.realm, session, c.csrf, { notice: msg('accountPasswordChanged') });
  });

  // Self-service from the signed-in page: set up another authenticator, remove one.
  app.post(`${path}/otp/setup`, async (req: Req, reply) => {
    const f = await sessionForm(req, reply);
    if (!('c' in f)) return f;
    const { c } = f;
    const user = await services.store.users.get(c.session.userId);
    if (!user) return reply.redirect(baseOf(c.realm), 303);
    return configureOtp(reply, c.realm, c.csrf, user, await makeProof(user, 'all', c.binding));
  });

  // New recovery codes (for a user with an authenticator), shown once; the earlier ones stop working.
  app.post(`${path}/recovery-codes`, async (req: Req, reply) => {
    const f = await sessionForm(req, reply);
    if (!('c' in f)) return f;
    const { c } = f;
    const user = await services.store.users.get(c.session.userId);
    if (!user || !(await services.store.otp.has(user.id))) return reply.redirect(baseOf(c.realm), 303);
    const codes = await createRecoveryCodes(services.store, user, { ip: req.ip, clientId: 'account' });
    await speak(reply, c.realm, user);
    return sendPage(reply, 200, () => recoveryCodesPage({ realmName: c.realm.displayName ?? c.realm.id, username: user.username, base: baseOf(c.realm), codes }));
  });

  app.post(`${path}/otp/remove`, async (req: Req, reply) => {
    const f = await sessionForm(req, reply);
    if (!('c' in f)) return f;
    const { c } = f;
    const user = await services.store.users.get(c.session.userId);
    const id = field(req, 'credential_id') ?? '';
    const removed = user ? await removeOtp(services.store, user, id, { ip: req.ip, clientId: 'account', by: 'the user on the account page' }) : false;
    return show(reply, c.realm, c.session, c.csrf, { notice: removed ? msg('accountAppRemoved') : undefined });
  });

  // Keycloak's account console "Linked accounts": the user unlinks an account at a provider.
  app.post(`${path}/linked-accounts/remove`, async (req: Req, reply) => {
    const f = await sessionForm(req, reply);
    if (!('c' in f)) return f;
    const { c } = f;
    const user = await services.store.users.get(c.session.userId);
    const result = user ? await unlinkOwnAccount(services.store, user, field(req, 'provider') ?? '', { ip: req.ip }) : 'none';
    const notice = result === 'removed' ? msg('accountUnlinked') : result === 'last' ? msg('accountLastLinkStays') : undefined;
    return show(reply, c.realm, c.session, c.csrf, { notice });
  });

  // Keycloak's account console "Link account": the provider's sign-in, then back here (src/http/account/linking.ts).
  app.post(`${path}/linked-accounts/link`, async (req: Req, reply) => {
    const f = await sessionForm(req, reply);
    if (!('c' in f)) return f;
    const { c } = f;
    const user = await services.store.users.get(c.session.userId);
    const alias = field(req, 'provider') ?? '';
    const started = user ? await startAccountLink(services, reply, c.realm, c.session, user, alias) : undefined;
    return started ?? show(reply, c.realm, c.session, c.csrf, { notice: msg('accountLinkFailed', alias) });
  });

  app.post(`${path}/update-password`, async (req: Req, reply) => {
    // Bound to this browser, to the password typed (its hash: a changed password voids it), to the
    // authenticator's code when the user has one, and to a time.
    const f = await proofForm(req, reply, 'all', (user) => user.requiredActions.includes('UPDATE_PASSWORD'));
    if (!('user' in f)) return f;
    const { c, user, proof } = f;
    const problem = await newPasswordFromForm(req, c.realm, user);
    if (problem) return updatePassword(reply, c.realm, c.csrf, user, proof, problem);
    // The new password voids the proof (its hash changed): the next form gets a new one.
    return afterSecondFactor(req, reply, c, (await services.store.users.get(user.id)) ?? user);
  });

  app.post(`${path}/terms`, async (req: Req, reply) => {
    const f = await proofForm(req, reply, 'all', (user, c) => pendingActions(c.realm, user).includes('TERMS_AND_CONDITIONS'));
    if (!('user' in f)) return f;
    const { c, user } = f;
    const accepted = termsAccepted((name) => field(req, name));
    await answerTerms(services, { realm: c.realm, user, accepted, ip: req.ip, clientId: 'account' });
    // Keycloak: a declined required action fails the sign-in; no session.
    if (!accepted) return renderError(reply, 403, { realmName: c.realm.displayName ?? c.realm.id, title: msg('termsDeclinedTitle'), description: msg('accountTermsDeclinedMessage') });
    return afterSecondFactor(req, reply, c, (await services.store.users.get(user.id)) ?? user);
  });

  app.post(`${path}/update-profile`, async (req: Req, reply) => {
    const f = await proofForm(req, reply, 'all', (user, c) => pendingActions(c.realm, user).includes('UPDATE_PROFILE'));
    if (!('user' in f)) return f;
    const { c, user, proof } = f;
    const { values, shown } = profileForm((name) => field(req, name));
    const errors = await completeProfileUpdate(services, { realm: c.realm, user, values, ip: req.ip, clientId: 'account' });
    if (errors.length > 0) return updateProfile(reply, c.realm, c.csrf, user, proof, { values: shown, errors });
    return afterSecondFactor(req, reply, c, (await services.store.users.get(user.id)) ?? user);
  });

  // Keycloak's account console "Personal info": the email and names, checked as the UPDATE_PROFILE page
  // checks them (a new email is no longer verified, and under the realm's verifyEmail is verified at the
  // next sign-in). A new email (the address password resets are mailed to) needs the current password,
  // counted as a sign-in is, or for a user without one a sign-in of the last minutes. Not for a user of an
  // LDAP directory (the fields come from it).
  /** Why `username` cannot become the user's (a message for the page), or undefined. */
  async function usernameProblem(realm: Realm, user: User, username: string): Promise<Text | undefined> {
    try {
      await checkUsernameChange(services.store, { realm, user, username });
      return undefined;
    } catch (err) {
      return usernameRefusal(err, username);
    }
  }

  /** The user's own username change, recorded as UPDATE_PROFILE; a message when it was refused meanwhile. */
  async function renameSelf(realm: Realm, user: User, username: string, ip: string, clientId: string): Promise<Text | undefined> {
    try {
      await renameOwnAccount(services, { realm, user, username, ip, clientId });
      return undefined;
    } catch (err) {
      return usernameRefusal(err, username);
    }
  }

  app.post(`${path}/profile`, async (req: Req, reply) => {
    const f = await sessionForm(req, reply);
    if (!('c' in f)) return f;
    const { c } = f;
    const user = await services.store.users.get(c.session.userId);
    if (!user || user.federationLink) return reply.redirect(baseOf(c.realm), 303);
    const { values, shown } = profileForm((name) => field(req, name));
    // Keycloak's editUsernameAllowed: the username field is editable; otherwise whatever it says is ignored.
    const typedUsername = (field(req, 'username') ?? '').trim();
    const newUsername = c.realm.editUsernameAllowed && !c.realm.registrationEmailAsUsername && typedUsername.toLowerCase() !== user.username ? typedUsername : undefined;
    const refuse = (errors: readonly Text[]): Promise<FastifyReply> =>
      show(reply, c.realm, c.session, c.csrf, { profile: { values: shown, errors, ...(newUsername !== undefined ? { username: newUsername.slice(0, 255) } : {}) } });
    if (newUsername !== undefined) {
      const problem = await usernameProblem(c.realm, user, newUsername);
      if (problem) return refuse([problem]);
    }
    const emailChanged = values.email.trim().toLowerCase() !== (user.email ?? '').toLowerCase();
    if (emailChanged) {
      const mode = reauthMode(user, c.session, nowSeconds(services.clock));
      if (mode === 'sign-in-again') return refuse([msg('accountProfileEmailSignInAgain')]);
      if (mode === 'password') {
        const typed = field(req, 'password') ?? '';
        if (typed === '') return refuse([msg('accountProfileEmailNeedsPassword')]);
        const refused = await currentPasswordRefusal(req, reply, c.realm, user, typed, { type: 'UPDATE_PROFILE_ERROR', reason: 'new email on the account page: current password refused' });
        if (refused) return refuse([refused]);
      }
    }
    const errors = await completeProfileUpdate(services, { realm: c.realm, user, values, ip: req.ip, clientId: 'account' });
    if (errors.length > 0) return refuse(problemTexts(errors));
    if (newUsername !== undefined) {
      const problem = await renameSelf(c.realm, user, newUsername, req.ip, 'account');
      if (problem) return refuse([problem]);
    }
    const saved = await services.store.users.get(user.id);
    return show(reply, c.realm, c.session, c.csrf, { notice: msg(saved && !saved.emailVerified && emailChanged ? 'accountProfileSavedUnverified' : 'accountProfileSaved') });
  });

  // Keycloak's account console "Delete account" (when the realm enables delete_account): the password
  // typed again, counted against the user as a sign-in is (a stolen session cannot guess it); a user
  // without a password signed in within the last minutes (Keycloak asks for a new sign-in every time).
  app.post(`${path}/delete`, async (req: Req, reply) => {
    const f = await sessionForm(req, reply);
    if (!('c' in f)) return f;
    const { c } = f;
    const user = await services.store.users.get(c.session.userId);
    // Not offered by the realm (the page has no such form): back to the page.
    if (!user || !(await mayDeleteOwnAccount(services.store, c.realm, user))) return reply.redirect(baseOf(c.realm), 303);
    const where = 'on the account page';
    const mode = reauthMode(user, c.session, nowSeconds(services.clock));
    if (mode === 'password') {
      const refused = await currentPasswordRefusal(req, reply, c.realm, user, field(req, 'password') ?? '', { type: 'DELETE_ACCOUNT_ERROR', reason: `${where}: current password refused` });
      if (refused) return show(reply, c.realm, c.session, c.csrf, { deleteError: refused });
    } else if (mode === 'sign-in-again') {
      return show(reply, c.realm, c.session, c.csrf, { deleteError: msg('accountDeleteSignInAgain') });
    }
    const outcome = await deleteOwnAccount(services, { realm: c.realm, user, ip: req.ip, clientId: 'account', where });
    if (outcome !== 'deleted') return show(reply, c.realm, c.session, c.csrf, { deleteError: msg(outcome === 'federated' ? 'deleteAccountFederatedMessage' : 'deletingAccountForbidden') });
    return sendAccountDeleted(reply, services.config, c.realm.id, c.realm.displayName ?? c.realm.id);
  });

  // Keycloak's delete_account required action, after the account page's sign-in (the proof of it).
  app.post(`${path}/delete-account`, async (req: Req, reply) => {
    const f = await proofForm(req, reply, 'all', (user, c) => pendingActions(c.realm, user).includes('delete_account'));
    if (!('user' in f)) return f;
    const { c, user, proof } = f;
    if (!field(req, 'confirm')) return deleteAccount(reply, c.realm, c.csrf, user, proof);
    const outcome = await deleteOwnAccount(services, { realm: c.realm, user, ip: req.ip, clientId: 'account', where: 'as a required action at the account page\'s sign-in' });
    if (outcome !== 'deleted') return deleteAccount(reply, c.realm, c.csrf, user, proof, msg(outcome === 'federated' ? 'deleteAccountFederatedMessage' : 'deletingAccountForbidden'));
    return sendAccountDeleted(reply, services.config, c.realm.id, c.realm.displayName ?? c.realm.id);
  });

  // Keycloak's account console: the user's language, kept in their locale attribute (which their pages
  // and mails speak). One of the realm's languages only.
  app.post(`${path}/locale`, async (req: Req, reply) => {
    const f = await sessionForm(req, reply);
    if (!('c' in f)) return f;
    const { c } = f;
    const locale = field(req, 'locale');
    const user = await services.store.users.get(c.session.userId);
    if (!user || !c.realm.internationalizationEnabled || locale === undefined || !realmLocales(c.realm).includes(locale)) return reply.redirect(baseOf(c.realm), 303);
    if (user.attributes.locale?.[0] !== locale) {
      await services.store.users.update(user.id, { attributes: { ...user.attributes, locale: [locale] } });
      await services.audit.record({ realmId: c.realm.id, type: 'UPDATE_PROFILE', outcome: 'success', clientId: 'account', userId: user.id, username: user.username, ip: req.ip, reason: `locale set to ${locale} on the account page` });
    }
    return show(reply, c.realm, c.session, c.csrf, { notice: msg('accountLanguageSaved') });
  });

  app.post(`${path}/revoke`, async (req: Req, reply) => {
    const f = await sessionForm(req, reply);
    if (!('c' in f)) return f;
    const { c } = f;
    const clientId = field(req, 'client_id');
    const organizationId = field(req, 'organization_id');
    if (clientId && organizationId) {
      const now = nowSeconds(services.clock);
      await services.store.refresh.revokeGrant(c.realm.id, c.session.userId, clientId, organizationId, now);
      await services.store.consents.withdraw(c.realm.id, c.session.userId, clientId, organizationId);
      await services.audit.record({ realmId: c.realm.id, type: 'REVOKE', outcome: 'success', clientId, userId: c.session.userId, ip: req.ip, reason: 'revoked by the user on the account page' });
    }
    return show(reply, c.realm, c.session, c.csrf, { notice: msg('accountAccessRevoked') });
  });

  app.post(`${path}/sessions/end`, async (req: Req, reply) => {
    const f = await sessionForm(req, reply);
    if (!('c' in f)) return f;
    const { c } = f;
    const id = field(req, 'session_id');
    const now = nowSeconds(services.clock);
    const mine = (await services.store.sessions.listActive(c.realm.id, c.session.userId, now)).find((s) => s.id === id);
    const clients = mine ? await logoutSession(services, c.realm.id, mine, 'signed out on the account page') : [];
    if (mine?.id === c.session.id) {
      clearRealmCookie(reply, services.config, c.realm.id, SESSION_COOKIE);
      clearSessionStateCookie(reply, services.config, c.realm.id);
      // This browser's own session: its clients are told by front-channel logout (Front-Channel Logout
      // 1.0, 2) before the account page asks to sign in again. Another browser's session cannot be
      // reached that way (back-channel logout still tells its clients).
      const frames = logoutFrames(realmBase(services.config, c.realm.id), mine.id, clients);
      if (frames.length > 0) return sendFrontchannelLogoutPage(reply, { realmName: c.realm.displayName ?? c.realm.id, frames, next: baseOf(c.realm) });
      return reply.redirect(baseOf(c.realm), 303);
    }
    return show(reply, c.realm, c.session, c.csrf, { notice: mine ? msg('accountBrowserSignedOut') : undefined });
  });
}
