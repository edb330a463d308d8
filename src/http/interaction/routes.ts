import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { hasSecondFactor } from '../../admin/operations/second-factor.js';
import type { Services } from '../../services.js';
import { ConflictError, type Client, type IdentityProvider, type Interaction, type Realm, type User } from '../../storage/types.js';
import { linkAfterSignIn, routedProvider, routesByEmail } from '../../admin/operations/identity-providers.js';
import { providerAuthorizationUrl } from '../../oauth/broker.js';
import { nowSeconds } from '../../clock.js';
import { safeEqual, tokenHash } from '../../crypto/random.js';
import { createBrowserSession, denyRequest, nextStep, sessionOrigin, type Step } from '../../oauth/authorize/interaction.js';
import { attemptLogin, attemptOtp } from '../../oauth/brute-force.js';
import { renderRequiredActionStep } from './required-action-routes.js';
import { updateProfilePage, type ProfileValues } from '../../views/required-action-pages.js';
import { pendingActions } from '../../admin/required-actions.js';
import { passkeyOffer, renderWebAuthnStep } from './webauthn-routes.js';
import { DEVICE_COOKIE, DEVICE_COOKIE_MAX_AGE, issueDeviceCookie } from '../../oauth/device-cookie.js';
import { configureOtpPage, consentPage, deviceDonePage, linkAccountPage, loginLabel, loginPage, type LoginProvider, noOrganizationPage, organizationPage, otpPage, updatePasswordPage } from '../../views/pages.js';
import { completePasswordUpdate } from '../../admin/operations/users.js';
import { enrollOtp } from '../../admin/operations/otp.js';
import { otpSetup } from '../otp-setup.js';
import { BROWSER_COOKIE, SESSION_COOKIE, clearRealmCookie, clearSessionStateCookie, readRealmCookie, setRealmCookie, setSessionCookies } from '../cookies.js';
import { offersReset } from './reset-routes.js';
import { offersRegistration, resumeAfterVerification, verifyEmailStep } from './registration-routes.js';
import { verifyEmailTrigger } from '../../admin/operations/email-verification.js';
import { htmlErrorHandler, interactionUrl, renderError, sendClientResponse, sendPage } from './render.js';
import { useTranslator } from '../i18n.js';
import { ENGLISH, msg, type Text } from '../../i18n/translator.js';
import { passwordProblemText, problemText } from './problems.js';
import { providerName } from '../../oauth/social-providers.js';
import { localizedRule } from '../../views/password-rule.js';

export type Req = FastifyRequest<{ Params: { realm: string; id: string }; Body: Record<string, unknown> | undefined }>;

export interface Loaded {
  realm: Realm;
  client: Client;
  ia: Interaction;
  realmName: string;
  clientName: string;
}

const EXPIRED = msg('signInExpiredMessage');

/**
 * Loads the pending request (`at`: realm and id, from the path unless given) and checks it belongs to this browser;
 * otherwise answers with an error page.
 */
export async function load(services: Services, req: FastifyRequest, reply: FastifyReply, at?: { realm: string; id: string }): Promise<Loaded | undefined> {
  const { realm: realmParam, id } = at ?? (req as Req).params;
  const realm = await services.cache.realm(realmParam);
  if (!realm) {
    renderError(reply, 404, { realmName: 'Realmgate', title: msg('unknownRealmTitle'), description: msg('unknownRealmMessage') });
    return undefined;
  }
  const realmName = realm.displayName ?? realm.id;
  const ia = await services.store.interactions.get(id);
  const binding = readRealmCookie(req, services.config, realm.id, BROWSER_COOKIE);
  if (!ia || ia.realmId !== realm.id || ia.expiresAt <= nowSeconds(services.clock)) {
    await useTranslator(services, req, reply, realm);
    renderError(reply, 400, { realmName, title: msg('signInExpiredTitle'), description: EXPIRED });
    return undefined;
  }
  if (!binding || !safeEqual(tokenHash(binding), ia.browserHash)) {
    await useTranslator(services, req, reply, realm);
    renderError(reply, 400, { realmName, title: msg('signInOtherBrowserTitle'), description: msg('signInOtherBrowserMessage') });
    return undefined;
  }
  // The pages of this sign-in speak the language chosen during it, else the user's own (once known),
  // else the client's ui_locales, the browser's cookie and its Accept-Language (src/http/i18n.ts).
  const user = realm.internationalizationEnabled && ia.userId ? await services.store.users.get(ia.userId) : undefined;
  await useTranslator(services, req, reply, realm, { ia, userLocale: user?.attributes.locale?.[0], here: interactionUrl(realm.id, ia.id) });
  const client = await services.cache.client(realm.id, ia.clientId);
  if (!client || !client.enabled) {
    renderError(reply, 400, { realmName, title: msg('unknownApplicationTitle'), description: msg('unknownApplicationMessage') });
    return undefined;
  }
  return { realm, client, ia, realmName, clientName: client.name ?? client.clientId };
}

/** CSRF: every form carries the interaction's token, compared in constant time. */
export function checkCsrf(req: Req, ia: Interaction): boolean {
  const v = req.body?.csrf;
  return typeof v === 'string' && safeEqual(v, ia.csrfToken);
}

export function field(req: Req, name: string): string | undefined {
  const v = req.body?.[name];
  return typeof v === 'string' ? v : undefined;
}

export async function render(services: Services, reply: FastifyReply, l: Loaded, step: Step, extra: { error?: Text; username?: string; status?: number; remembered?: boolean; values?: ProfileValues; errors?: readonly Text[] } = {}): Promise<FastifyReply> {
  const base = `${interactionUrl(l.realm.id, l.ia.id)}`;
  const ctx = { realmName: l.realmName, clientName: l.clientName, csrf: l.ia.csrfToken };
  switch (step.kind) {
    case 'redirect':
      return sendClientResponse(reply, step.response, { realmName: l.realmName, clientName: l.clientName });
    case 'login': {
      const all = await services.store.identityProviders.list(l.realm.id);
      const login = { usernameLabel: loginLabel(l.realm), rememberMe: l.realm.rememberMe, remembered: l.ia.params.rememberMe === true, ...(await passkeyOffer(services, l)) };
      return sendPage(reply, extra.status ?? 200, () => loginPage({ ...ctx, action: `${base}/login`, username: l.ia.params.loginHint, providers: loginProviders(all), brokerAction: `${base}/broker`, emailRouting: all.some(routesByEmail), ...(offersReset(l.realm) ? { forgotPassword: `${base}/reset-credentials` } : {}), ...(offersRegistration(l.realm) ? { register: `${base}/registration` } : {}), ...login, ...extra }));
    }
    case 'link-account':
      return sendPage(reply, extra.status ?? 200, () => linkAccountPage({ ...ctx, action: `${base}/link-account`, username: step.username, provider: step.provider, by: step.by, passwordless: step.passwordless, ...(extra.error ? { error: extra.error } : {}) }));
    case 'review-profile':
      return sendPage(reply, extra.status ?? 200, () => updateProfilePage({ ...ctx, action: `${base}/review-profile`, username: '', values: extra.values ?? step.values, review: { provider: step.provider, ...(step.complete ? { complete: true } : {}) }, cancellable: true, ...(extra.errors ? { errors: extra.errors } : {}) }));
    case 'otp':
      return sendPage(reply, extra.status ?? 200, () => otpPage({ ...ctx, action: `${base}/otp`, username: step.username, ...(step.otherMethod ? { otherMethod: `${base}/second-factor` } : {}), ...(extra.error ? { error: extra.error } : {}) }));
    case 'webauthn':
    case 'webauthn-register':
      return renderWebAuthnStep(services, reply, l, step, { ...extra, base, ctx, expired: EXPIRED });
    case 'update-password':
      return sendPage(reply, extra.status ?? 200, () => updatePasswordPage({ ...ctx, action: `${base}/update-password`, username: step.username, cancellable: step.aia === true, rule: localizedRule(l.realm.passwordPolicy), ...(step.expired ? { expired: true } : {}), ...(extra.error ? { error: extra.error } : {}) }));
    case 'configure-otp': {
      const setup = await otpSetup(services, l.realm, step.username, setupContext(l), reply.request.translator ?? ENGLISH);
      return sendPage(
        reply,
        extra.status ?? 200,
        () => configureOtpPage({ ...ctx, action: `${base}/configure-otp`, username: step.username, qr: setup.qr, key: setup.base32, cancellable: step.aia === true, ...(extra.error ? { error: extra.error } : {}) }),
      );
    }
    case 'verify-email':
      return verifyEmailStep(services, reply, l, step, extra);
    case 'update-profile':
    case 'terms':
    case 'delete-account':
    case 'idp-link':
    case 'delete-credential':
      return renderRequiredActionStep(services, reply, l, step, { ...extra, ctx });
    case 'consent':
      return sendPage(reply, 200, () => consentPage({ ...ctx, action: `${base}/consent`, scopes: step.scopes, resources: l.ia.params.resources }));
    case 'organization':
      return sendPage(reply, extra.status ?? 200, () => organizationPage({ ...ctx, action: `${base}/organization`, organizations: step.organizations, ...extra }));
    case 'no-organization':
      void services;
      return sendPage(reply, 403, () => noOrganizationPage({ realmName: l.realmName, clientName: l.clientName, deny: step.deny }));
    case 'device-done':
      return sendPage(reply, 200, () => deviceDonePage({ realmName: l.realmName, clientName: l.clientName, approved: step.approved }));
  }
}

/** After a form is handled: Post/Redirect/Get, or straight back to the client when the flow is done. */
export async function advance(services: Services, reply: FastifyReply, l: Loaded): Promise<FastifyReply> {
  const fresh = await services.store.interactions.get(l.ia.id);
  if (!fresh) return renderError(reply, 400, { realmName: l.realmName, title: msg('signInExpiredTitle'), description: EXPIRED });
  const step = await nextStep(services, l.realm, l.client, fresh);
  // The device flow's last page is rendered at once: its pending request no longer exists.
  if (step.kind === 'device-done' || step.kind === 'redirect') return render(services, reply, l, step);
  reply.header('cache-control', 'no-store');
  return reply.redirect(interactionUrl(l.realm.id, l.ia.id), 303);
}

export const BAD_FORM = msg('formExpiredMessage');
export const FORM_EXPIRED = msg('formExpiredTitle');

/** What the key of an authenticator set up in this request is derived from (src/crypto/otp-secret.ts setupKey). */
const setupContext = (l: Loaded): string => `interaction\0${l.ia.id}\0${l.ia.userId ?? ''}`;

/** Ends the session of the browser's session cookie, if any: a signed-in user never keeps one from before. */
export async function endPreviousSession(services: Services, req: FastifyRequest, l: Loaded): Promise<void> {
  const old = readRealmCookie(req, services.config, l.realm.id, SESSION_COOKIE);
  if (!old) return;
  const now = nowSeconds(services.clock);
  const prev = await services.store.sessions.findActive(l.realm.id, tokenHash(old), now);
  if (prev) await services.store.sessions.end(prev.id, now);
}

/**
 * The end of the sign-in steps of a user who proved who they are in this request (password, and the
 * authenticator code when they have one): when no required action is left, the session starts (a new one:
 * any earlier session of this browser ends) and the login is recorded; then on to the next step.
 */
export async function completeSignIn(services: Services, req: FastifyRequest, reply: FastifyReply, l: Loaded, userId: string): Promise<FastifyReply> {
  const user = await services.store.users.get(userId);
  // VERIFY_EMAIL of an email verified meanwhile (by an administrator) is done: it holds nothing back.
  if (user && user.enabled && pendingActions(l.realm, user).every((a) => a === 'VERIFY_EMAIL' && user.emailVerified)) {
    await endPreviousSession(services, req, l);
    await services.audit.record({ realmId: l.realm.id, type: 'LOGIN', outcome: 'success', clientId: l.client.clientId, userId: user.id, username: user.username, ip: req.ip });
    await startSession(services, req, reply, l, user.id);
    await keepChosenLocale(services, l, user);
    // Identity brokering: the provider's account that met this user is linked now that they proved the account theirs.
    const link = l.ia.params.brokerLink;
    if (link && link.userId === user.id) await linkBrokeredAccount(services, req, l, user, link);
  }
  return advance(services, reply, l);
}

/**
 * Ends the client's kc_action (Keycloak's application-initiated action) as `status`; the flow goes on to
 * the code, which tells the client in kc_action_status.
 */
export async function endAppAction(services: Services, reply: FastifyReply, l: Loaded, status: 'success' | 'cancelled'): Promise<FastifyReply> {
  const fresh = await services.store.interactions.get(l.ia.id);
  if (fresh) await services.store.interactions.update(l.ia.id, { params: { ...fresh.params, kcActionStatus: status } });
  return advance(services, reply, l);
}

type StepKind<K extends Step['kind']> = Extract<Step, { kind: K }>;

/**
 * The common start of a form of a step after the password (the code, a new password, an authenticator
 * to set up): the pending request of this browser, its CSRF token, a user who proved their password, and
 * the flow really at that step; otherwise the answer (403, or on to wherever the flow is: done in another tab).
 */
export async function stepForm<K extends Step['kind']>(services: Services, req: Req, reply: FastifyReply, kind: K): Promise<{ l: Loaded; step: StepKind<K>; user: User } | FastifyReply> {
  const l = await load(services, req, reply);
  if (!l) return reply;
  if (!checkCsrf(req, l.ia) || !l.ia.userId) return renderError(reply, 403, { realmName: l.realmName, title: FORM_EXPIRED, description: BAD_FORM });
  const step = await nextStep(services, l.realm, l.client, l.ia);
  const user = step.kind === kind ? await services.store.users.get(l.ia.userId) : undefined;
  if (!user) return advance(services, reply, l);
  return { l, step: step as StepKind<K>, user };
}

/**
 * The password was right (the login form, or the form linking a provider's account): with an
 * authenticator, its code comes next; with a required action, that; otherwise the session starts.
 */
export async function afterPassword(services: Services, req: Req, reply: FastifyReply, l: Loaded, outcome: { user: User; deviceCookie: string }): Promise<FastifyReply> {
  // Keycloak's verifyEmail: VERIFY_EMAIL joins the required actions of a user whose email is not verified.
  const user = await verifyEmailTrigger(services.store, l.realm, outcome.user);
  const secondFactor = await hasSecondFactor(services.store, user.id);
  // The browser becomes a known device (its cookie exempts it from locks set elsewhere) once the user
  // has proved everything: with an authenticator, after its code.
  if (!secondFactor) setRealmCookie(reply, services.config, l.realm.id, DEVICE_COOKIE, outcome.deviceCookie, DEVICE_COOKIE_MAX_AGE);
  // A new session at every login: a session cookie planted before login is never reused (no fixation).
  await endPreviousSession(services, req, l);
  if (secondFactor || pendingActions(l.realm, user).length > 0) {
    // The authenticator's code, a temporary password to replace, an authenticator to set up: no session
    // (no cookie, no code) until done. The interaction remembers who proved the password; it lives in
    // this browser only (load checks so).
    clearRealmCookie(reply, services.config, l.realm.id, SESSION_COOKIE);
    clearSessionStateCookie(reply, services.config, l.realm.id);
    await services.store.interactions.update(l.ia.id, { userId: user.id, sessionId: null, secondFactor: false });
    return advance(services, reply, l);
  }
  return completeSignIn(services, req, reply, l, user.id);
}

/** The identity providers the login page offers: enabled, not hidden, not link-only; by guiOrder, then name. */
function loginProviders(all: readonly IdentityProvider[]): LoginProvider[] {
  const order = (p: IdentityProvider): number => (/^\d{1,6}$/.test(p.config.guiOrder ?? '') ? Number(p.config.guiOrder) : 1e6);
  return all
    .filter((p) => p.enabled && !p.hideOnLogin && !p.linkOnly)
    .sort((a, b) => order(a) - order(b) || (a.displayName ?? a.alias).localeCompare(b.displayName ?? b.alias))
    .map((p) => ({ alias: p.alias, name: providerName(p) }));
}

/** Links the provider's account that met `user` (Keycloak's FEDERATED_IDENTITY_LINK) and forgets it in the pending request. */
async function linkBrokeredAccount(services: Services, req: FastifyRequest, l: Loaded, user: User, link: NonNullable<Interaction['params']['brokerLink']>): Promise<void> {
  const provider = await services.store.identityProviders.get(l.realm.id, link.alias);
  const { brokerLink: _done, ...params } = l.ia.params;
  await services.store.interactions.update(l.ia.id, { params });
  if (!provider) return;
  try {
    await linkAfterSignIn(services.store, provider, user, { id: link.id, username: link.username, claims: link.claims });
    await services.audit.record({ realmId: l.realm.id, type: 'FEDERATED_IDENTITY_LINK', outcome: 'success', clientId: l.client.clientId, userId: user.id, username: user.username, ip: req.ip, reason: `identity provider ${link.alias}` });
  } catch (err) {
    if (!(err instanceof ConflictError)) throw err;
    // Linked meanwhile (another tab): the user is signed in all the same; the account stays with whom it is linked to.
    await services.audit.record({ realmId: l.realm.id, type: 'FEDERATED_IDENTITY_LINK', outcome: 'failure', clientId: l.client.clientId, userId: user.id, username: user.username, ip: req.ip, reason: `identity provider ${link.alias}: linked already` });
  }
}

/**
 * The language the user chose during this sign-in (the language menu, kc_locale) becomes theirs, as
 * Keycloak's LocaleUpdaterProvider keeps it at sign-in: their locale attribute, which their later pages,
 * mails and ID tokens' locale claim follow. A user of a directory (LDAP) keeps what the directory says.
 */
async function keepChosenLocale(services: Services, l: Loaded, user: User): Promise<void> {
  const chosen = l.ia.params.locale;
  if (!l.realm.internationalizationEnabled || chosen === undefined || user.federationLink || user.attributes.locale?.[0] === chosen) return;
  await services.store.users.update(user.id, { attributes: { ...user.attributes, locale: [chosen] } });
}

/** A new browser session for the user, its cookies, and the pending request bound to it. */
async function startSession(services: Services, req: FastifyRequest, reply: FastifyReply, l: Loaded, userId: string): Promise<void> {
  const { session, secret } = await createBrowserSession(services, l.realm, userId, { rememberMe: l.ia.params.rememberMe === true, from: sessionOrigin(req) });
  setSessionCookies(reply, services.config, session, secret, nowSeconds(services.clock));
  await services.store.interactions.update(l.ia.id, { userId, sessionId: session.id });
}

export async function interactionRoutes(app: FastifyInstance, opts: { services: Services }): Promise<void> {
  const { services } = opts;
  app.setErrorHandler(htmlErrorHandler(services));
  const base = '/auth/realms/:realm/login-actions/:id';

  app.get(base, async (req: Req, reply) => {
    const l = await load(services, req, reply);
    if (!l) return reply;
    const step = await nextStep(services, l.realm, l.client, l.ia);
    // The email was verified in another browser while this one waited on "Verify your email": on with the sign-in.
    if (step.kind === 'login') {
      const resumed = await resumeAfterVerification(services, req, reply, l);
      if (resumed) return resumed;
    }
    return render(services, reply, l, step);
  });

  app.post(`${base}/login`, async (req: Req, reply) => {
    const l = await load(services, req, reply);
    if (!l) return reply;
    if (!checkCsrf(req, l.ia)) return renderError(reply, 403, { realmName: l.realmName, title: FORM_EXPIRED, description: BAD_FORM });
    const username = field(req, 'username') ?? '';
    const password = field(req, 'password') ?? '';
    // An email of a domain whose organization signs its users in at its own provider goes there (the
    // password, if any was typed, is not looked at).
    const routed = username.includes('@') ? await routedProvider(services.store, l.realm.id, username) : undefined;
    if (routed && (await nextStep(services, l.realm, l.client, l.ia)).kind === 'login') {
      reply.header('cache-control', 'no-store');
      return reply.redirect(await providerAuthorizationUrl(services, l.realm, routed, l.ia, { loginHint: username.trim() }), 303);
    }
    const outcome = await attemptLogin(services, l.realm, { username, password, ip: req.ip, clientId: l.client.clientId, deviceCookie: readRealmCookie(req, services.config, l.realm.id, DEVICE_COOKIE) });
    // "Remember me" (offered by the realm) is kept with the pending request: the session may start only after an authenticator's code.
    const remembered = l.realm.rememberMe && field(req, 'rememberMe') === 'on';
    if ('error' in outcome) {
      // The user the name (or email) found, when it found one; else the name typed. An unknown name, or a
      // guess refused unchecked (blocked), is anyone's to repeat: sampled (a wrong password for a real
      // user is always stored).
      await services.audit.record(
        { realmId: l.realm.id, type: 'LOGIN_ERROR', outcome: 'failure', clientId: l.client.clientId, ...(outcome.subject ? { userId: outcome.subject.id, username: outcome.subject.username } : { username }), ip: req.ip, reason: outcome.unavailable ? `user directory unavailable: ${outcome.unavailable}` : outcome.retryAfter ? 'blocked' : 'invalid credentials' },
        { anonymous: !outcome.subject || Boolean(outcome.retryAfter) },
      );
      if (outcome.retryAfter) reply.header('retry-after', String(outcome.retryAfter));
      // The user directory (LDAP) did not answer: 503, the form kept, "try again later".
      return render(services, reply, l, { kind: 'login' }, { error: outcome.error, username: username.slice(0, 255), status: outcome.unavailable ? 503 : outcome.retryAfter ? 429 : 200, remembered });
    }
    if (remembered !== (l.ia.params.rememberMe === true)) {
      const params = { ...l.ia.params, rememberMe: remembered };
      await services.store.interactions.update(l.ia.id, { params });
      l.ia = { ...l.ia, params };
    }
    return afterPassword(services, req, reply, l, outcome);
  });

  app.post(`${base}/link-account`, async (req: Req, reply) => {
    const l = await load(services, req, reply);
    if (!l) return reply;
    if (!checkCsrf(req, l.ia)) return renderError(reply, 403, { realmName: l.realmName, title: FORM_EXPIRED, description: BAD_FORM });
    const link = l.ia.params.brokerLink;
    if (!link || l.ia.userId) return advance(services, reply, l);
    if (field(req, 'cancel')) {
      const { brokerLink: _dropped, ...params } = l.ia.params;
      await services.store.interactions.update(l.ia.id, { params });
      return advance(services, reply, l);
    }
    const step = await nextStep(services, l.realm, l.client, l.ia);
    const owner = await services.store.users.get(link.userId);
    if (step.kind !== 'link-account' || !owner) return advance(services, reply, l);
    // The account's own username: only its owner's password links it (a sign-in, throttled as any).
    const outcome = await attemptLogin(services, l.realm, { username: owner.username, password: field(req, 'password') ?? '', ip: req.ip, clientId: l.client.clientId, deviceCookie: readRealmCookie(req, services.config, l.realm.id, DEVICE_COOKIE) });
    if ('error' in outcome || outcome.user.id !== owner.id) {
      const error = 'error' in outcome ? outcome.error : msg('invalidPasswordMessage');
      await services.audit.record({ realmId: l.realm.id, type: 'LOGIN_ERROR', outcome: 'failure', clientId: l.client.clientId, userId: owner.id, username: owner.username, ip: req.ip, reason: `linking identity provider ${link.alias}: invalid credentials` });
      if ('retryAfter' in outcome && outcome.retryAfter) reply.header('retry-after', String(outcome.retryAfter));
      return render(services, reply, l, step, { error, status: 'retryAfter' in outcome && outcome.retryAfter ? 429 : 400 });
    }
    return afterPassword(services, req, reply, l, outcome);
  });

  app.post(`${base}/otp`, async (req: Req, reply) => {
    const f = await stepForm(services, req, reply, 'otp');
    if (!('step' in f)) return f;
    const { l, step, user } = f;
    const outcome = await attemptOtp(services, l.realm, { user, code: field(req, 'otp') ?? '', ip: req.ip, clientId: l.client.clientId });
    if ('error' in outcome) {
      await services.audit.record({ realmId: l.realm.id, type: 'LOGIN_ERROR', outcome: 'failure', clientId: l.client.clientId, userId: user.id, username: user.username, ip: req.ip, reason: outcome.retryAfter ? 'blocked' : 'invalid authenticator code' });
      if (outcome.retryAfter) reply.header('retry-after', String(outcome.retryAfter));
      return render(services, reply, l, step, { error: outcome.error, status: outcome.retryAfter ? 429 : 400 });
    }
    await services.store.interactions.update(l.ia.id, { secondFactor: true });
    setRealmCookie(reply, services.config, l.realm.id, DEVICE_COOKIE, await issueDeviceCookie(services.store, l.realm.id, user.username), DEVICE_COOKIE_MAX_AGE);
    return completeSignIn(services, req, reply, l, user.id);
  });

  app.post(`${base}/configure-otp`, async (req: Req, reply) => {
    const f = await stepForm(services, req, reply, 'configure-otp');
    if (!('step' in f)) return f;
    const { l, step, user } = f;
    if (step.aia && field(req, 'cancel')) return endAppAction(services, reply, l, 'cancelled');
    const setup = await otpSetup(services, l.realm, user.username, setupContext(l));
    const problem = await enrollOtp(services.store, { user, key: setup.key, code: field(req, 'otp') ?? '', label: field(req, 'label') ?? '', ip: req.ip, clientId: l.client.clientId, nowSeconds: nowSeconds(services.clock) });
    if (problem) return render(services, reply, l, step, { error: problemText(problem), status: 400 });
    // Set up in this request: the user has just proved it, so no code is asked again before the session.
    await services.store.interactions.update(l.ia.id, { secondFactor: true });
    if (step.aia) return endAppAction(services, reply, l, 'success');
    // A user who came with a session keeps it; one who typed their password now gets one.
    if (l.ia.sessionId) return advance(services, reply, l);
    return completeSignIn(services, req, reply, l, user.id);
  });

  app.post(`${base}/update-password`, async (req: Req, reply) => {
    const f = await stepForm(services, req, reply, 'update-password');
    if (!('step' in f)) return f;
    const { l, step, user } = f;
    if (step.aia && field(req, 'cancel')) return endAppAction(services, reply, l, 'cancelled');
    const problem = await completePasswordUpdate(services.store, {
      realmId: l.realm.id,
      user,
      password: field(req, 'password-new') ?? '',
      confirmation: field(req, 'password-confirm') ?? '',
      ip: req.ip,
      clientId: l.client.clientId,
      nowSeconds: nowSeconds(services.clock),
      ...(step.aia ? { reason: 'asked for by the client (kc_action)' } : {}),
    });
    if (problem) return render(services, reply, l, step, { error: passwordProblemText(problem, l.realm, user, field(req, 'password-new') ?? ''), status: 400 });
    // The password change ended every session of the user (one made before it was required included):
    // the sign-in completes with a new one, once no other required action is left. A user who reached
    // this step passed their authenticator, in this request or in the session it came with.
    await services.store.interactions.update(l.ia.id, { sessionId: null, secondFactor: true, ...(step.aia ? { params: { ...l.ia.params, kcActionStatus: 'success' as const } } : {}) });
    return completeSignIn(services, req, reply, l, user.id);
  });

  app.post(`${base}/consent`, async (req: Req, reply) => {
    const l = await load(services, req, reply);
    if (!l) return reply;
    if (!checkCsrf(req, l.ia) || !l.ia.userId || !l.ia.sessionId) return renderError(reply, 403, { realmName: l.realmName, title: FORM_EXPIRED, description: BAD_FORM });
    const decision = field(req, 'decision');
    const who = { realmId: l.realm.id, clientId: l.client.clientId, userId: l.ia.userId, ip: req.ip };
    if (decision === 'deny') {
      await services.audit.record({ ...who, type: 'CONSENT_DENIED', outcome: 'failure', reason: l.ia.params.scopes.join(' ') });
      return render(services, reply, l, await denyRequest(services, l.realm, l.ia));
    }
    if (decision !== 'allow') return renderError(reply, 400, { realmName: l.realmName, title: msg('invalidRequestTitle'), description: msg('consentChooseMessage') });
    await services.store.interactions.update(l.ia.id, { consented: true });
    await services.audit.record({ ...who, type: 'CONSENT', outcome: 'success', reason: l.ia.params.scopes.join(' ') });
    return advance(services, reply, l);
  });

  app.post(`${base}/organization`, async (req: Req, reply) => {
    const l = await load(services, req, reply);
    if (!l) return reply;
    if (!checkCsrf(req, l.ia) || !l.ia.userId || !l.ia.sessionId) return renderError(reply, 403, { realmName: l.realmName, title: FORM_EXPIRED, description: BAD_FORM });
    const alias = field(req, 'organization');
    const orgs = await services.store.users.organizations(l.ia.userId);
    const chosen = orgs.find((o) => o.alias === alias);
    if (!chosen) {
      return render(services, reply, l, { kind: 'organization', organizations: orgs }, { error: msg('organizationChooseMessage'), status: 400 });
    }
    await services.store.interactions.update(l.ia.id, { organizationId: chosen.id });
    return advance(services, reply, l);
  });
}
