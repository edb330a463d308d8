import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { hasSecondFactor } from '../../admin/operations/second-factor.js';
import type { Services } from '../../services.js';
import type { Realm, RequiredAction, User } from '../../storage/types.js';
import { nowSeconds } from '../../clock.js';
import { safeEqual, tokenHash } from '../../crypto/random.js';
import { readActionToken, verifyActionToken, type ActionClaims } from '../../crypto/action-tokens.js';
import { canSendMail } from '../../mail/mailer.js';
import { issueActionToken, mailResetLink, userCredentialState } from '../../mail/action-mail.js';
import { completePasswordUpdate, listUsers } from '../../admin/operations/users.js';
import { enrollOtp } from '../../admin/operations/otp.js';
import { otpSetup } from '../otp-setup.js';
import { localizedRule } from '../../views/password-rule.js';
import { issueDeviceCookie } from '../../oauth/device-cookie.js';
import { BROWSER_COOKIE, checkFormCsrf, ensureBrowserBinding, formCsrf, readRealmCookie } from '../cookies.js';
import { configureOtpPage } from '../../views/pages.js';
import { accountUpdatedPage, chooseNewPasswordPage, forgotPasswordPage, linkRefusedPage, resetMailSentPage } from '../../views/reset-pages.js';
import { htmlErrorHandler, interactionUrl, renderError, sendPage } from './render.js';
import { msg, type Text } from '../../i18n/translator.js';
import { useTranslator } from '../i18n.js';
import { passwordProblemText, problemText, problemTexts } from './problems.js';
import { BAD_FORM, FORM_EXPIRED, advance, afterPassword, checkCsrf, completeSignIn, field, load, type Loaded, type Req } from './routes.js';
import { markEmailVerified } from '../../admin/operations/email-verification.js';
import { confirmVerifyEmailPage, emailVerifiedPage } from '../../views/registration-pages.js';
import { answerTerms, completeProfileUpdate, profileForm, termsAccepted } from '../../admin/operations/profile-actions.js';
import { termsText } from '../../admin/required-actions.js';
import { termsPage, updateProfilePage, type ProfileValues } from '../../views/required-action-pages.js';

type TokenReq = FastifyRequest<{ Params: { realm: string }; Querystring: { key?: string }; Body: Record<string, unknown> | undefined }>;

const INVALID = { title: msg('linkInvalidTitle'), description: msg('linkInvalidMessage') };
const USED = { title: msg('linkUsedTitle'), description: msg('linkUsedMessage') };
const EXPIRED = { title: msg('linkExpiredTitle'), description: msg('linkExpiredMessage') };

/** Whether a realm offers "Forgot password?": switched on, and able to send mail. */
export function offersReset(realm: Realm): boolean {
  return realm.resetPasswordAllowed && canSendMail(realm);
}

/** The user a "Forgot password?" form names: by username, else by email when exactly one user has it. */
async function findUser(services: Services, realm: Realm, typed: string): Promise<User | undefined> {
  const name = typed.trim().toLowerCase();
  if (name === '' || name.length > 320) return undefined;
  const byName = await services.store.users.findByUsername(realm.id, name);
  if (byName || !name.includes('@')) return byName;
  const byEmail = await listUsers(services.store, { realmId: realm.id, email: name, exact: true, max: 2 });
  return byEmail.length === 1 ? byEmail[0] : undefined;
}

/** A pending request of this browser (as load checks it), quietly: undefined when it is gone or another browser's. */
async function ownInteraction(services: Services, req: FastifyRequest, realm: Realm, id: string | undefined): Promise<Loaded | undefined> {
  if (!id) return undefined;
  const ia = await services.store.interactions.get(id);
  const binding = readRealmCookie(req, services.config, realm.id, BROWSER_COOKIE);
  if (!ia || ia.realmId !== realm.id || ia.expiresAt <= nowSeconds(services.clock) || !binding || !safeEqual(tokenHash(binding), ia.browserHash)) return undefined;
  const client = await services.cache.client(realm.id, ia.clientId);
  if (!client || !client.enabled) return undefined;
  return { realm, client, ia, realmName: realm.displayName ?? realm.id, clientName: client.name ?? client.clientId };
}

interface CheckedToken {
  realm: Realm;
  realmName: string;
  claims: ActionClaims;
  user: User;
  token: string;
}

/**
 * The link's token, checked: for this realm, its user there and enabled, its MAC right for the user's
 * credentials now (so a used link fails), not expired. Otherwise the page saying which, and undefined.
 */
async function checkToken(services: Services, req: TokenReq, reply: FastifyReply, token: unknown): Promise<CheckedToken | undefined> {
  const realm = await services.cache.realm(req.params.realm);
  if (!realm) {
    renderError(reply, 404, { realmName: 'Realmgate', title: msg('unknownRealmTitle'), description: msg('unknownRealmMessage') });
    return undefined;
  }
  const realmName = realm.displayName ?? realm.id;
  // A link's pages speak the language of the browser (a GET shows its language menu with the link's address).
  await useTranslator(services, req, reply, realm);
  const refuse = (status: number, what: { title: Text; description: Text }, reason: string, user?: User, claims?: ActionClaims): undefined => {
    // Anyone can make up a link (its claims are read before its MAC is checked): sampled.
    void services.audit.record(
      {
        realmId: realm.id,
        type: claims?.kind === 'execute' ? 'EXECUTE_ACTIONS_ERROR' : claims?.kind === 'verify' ? 'VERIFY_EMAIL_ERROR' : 'RESET_PASSWORD_ERROR',
        outcome: 'failure',
        userId: user?.id ?? null,
        username: user?.username ?? null,
        ip: req.ip,
        reason: `mailed link refused: ${reason}`,
      },
      { anonymous: true },
    );
    sendPage(reply, status, () => linkRefusedPage({ realmName, ...what, ...(claims?.kind === 'verify' ? { hint: msg('linkRefusedVerifyHint') } : {}) }));
    return undefined;
  };
  const claims = readActionToken(token);
  if (!claims || claims.realm !== realm.id || claims.actions.length === 0) return refuse(400, INVALID, 'not a link of this realm');
  const user = await services.store.users.get(claims.user);
  if (!user || user.realmId !== realm.id || !user.enabled) return refuse(400, INVALID, user ? 'user disabled' : 'user not found', user, claims);
  if (!(await verifyActionToken(services.store, token as string, await userCredentialState(services.store, user, claims.actions)))) return refuse(400, USED, 'used already, or the credentials changed', user, claims);
  if (claims.exp <= nowSeconds(services.clock)) return refuse(400, EXPIRED, 'expired', user, claims);
  return { realm, realmName, claims, user, token: token as string };
}

const tokenAction = (realmId: string): string => `/auth/realms/${encodeURIComponent(realmId)}/login-actions/action-token`;
/** What the key of an authenticator set up through a link is derived from (src/crypto/otp-secret.ts setupKey). */
const setupContext = (t: CheckedToken): string => `action-token\0${tokenHash(t.token)}\0${t.user.id}`;

async function renderAction(services: Services, req: TokenReq, reply: FastifyReply, t: CheckedToken, extra: { error?: Text; status?: number; values?: ProfileValues; errors?: readonly Text[] } = {}): Promise<FastifyReply> {
  const csrf = await formCsrf(services, 'action-token', ensureBrowserBinding(req, reply, services.config, t.realm.id));
  reply.header('cache-control', 'no-store');
  const action = t.claims.actions[0] as RequiredAction;
  const status = extra.status ?? 200;
  if (action === 'VERIFY_EMAIL') {
    return sendPage(reply, status, () => confirmVerifyEmailPage({ realmName: t.realmName, action: tokenAction(t.realm.id), csrf, token: t.token, email: t.user.email ?? '' }));
  }
  if (action === 'UPDATE_PROFILE') {
    const u = t.user;
    const values = extra.values ?? { email: u.email ?? '', firstName: u.firstName ?? '', lastName: u.lastName ?? '' };
    return sendPage(reply, status, () => updateProfilePage({ realmName: t.realmName, clientName: t.realmName, action: tokenAction(t.realm.id), csrf, hidden: { key: t.token }, username: u.username, values, readOnly: Boolean(u.federationLink), ...(extra.errors ? { errors: extra.errors } : {}) }));
  }
  if (action === 'TERMS_AND_CONDITIONS') {
    return sendPage(reply, status, () => termsPage({ realmName: t.realmName, clientName: t.realmName, action: tokenAction(t.realm.id), csrf, hidden: { key: t.token }, username: t.user.username, text: termsText(t.realm) }));
  }
  if (action === 'CONFIGURE_TOTP') {
    const setup = await otpSetup(services, t.realm, t.user.username, setupContext(t), req.translator);
    return sendPage(reply, status, () => configureOtpPage({ realmName: t.realmName, clientName: t.realmName, action: tokenAction(t.realm.id), csrf, username: t.user.username, qr: setup.qr, key: setup.base32, proof: t.token, ...(extra.error ? { error: extra.error } : {}) }));
  }
  return sendPage(reply, status, () => chooseNewPasswordPage({ realmName: t.realmName, username: t.user.username, action: tokenAction(t.realm.id), csrf, token: t.token, rule: localizedRule(t.realm.passwordPolicy), ...(extra.error ? { error: extra.error } : {}) }));
}

/** Where a link ends: back into the sign-in it came from, to the administrator's redirect_uri, or a page. */
async function finishLink(services: Services, req: TokenReq, reply: FastifyReply, t: CheckedToken, user: User): Promise<FastifyReply> {
  const { claims } = t;
  if (claims.kind === 'verify') {
    // Back into the sign-in that mailed the link, in the browser that started it, by the user who proved
    // their password (and authenticator) there; anywhere else, a page saying it is done.
    const l = await ownInteraction(services, req, t.realm, claims.interaction);
    if (l && l.ia.userId === user.id) {
      const pendingSecondFactor = !l.ia.sessionId && !l.ia.secondFactor && (await hasSecondFactor(services.store, user.id));
      if (l.ia.sessionId || pendingSecondFactor) return advance(services, reply, l);
      return completeSignIn(services, req, reply, l, user.id);
    }
    if (!claims.clientId || !claims.redirectUri) return sendPage(reply, 200, () => emailVerifiedPage({ realmName: t.realmName }));
  }
  if (claims.kind === 'reset') {
    await services.audit.record({ realmId: t.realm.id, type: 'RESET_PASSWORD', outcome: 'success', userId: user.id, username: user.username, ip: req.ip, clientId: claims.clientId ?? null, reason: 'new password chosen through a mailed link' });
    const l = await ownInteraction(services, req, t.realm, claims.interaction);
    // Back into the sign-in, as if the new password had been typed: the authenticator's code still comes
    // next for a user who has one (a reset never skips the second factor), then consent and the rest.
    if (l) return afterPassword(services, req as unknown as Req, reply, l, { user, deviceCookie: await issueDeviceCookie(services.store, t.realm.id, user.username) });
    return sendPage(reply, 200, () => accountUpdatedPage({ realmName: t.realmName, passwordOnly: true }));
  }
  if (claims.clientId && claims.redirectUri) {
    // Checked again now: the client may have changed since the mail was sent. Exact match, never an open redirect.
    const client = await services.cache.client(t.realm.id, claims.clientId);
    if (client?.enabled && client.redirectUris.includes(claims.redirectUri)) {
      reply.header('cache-control', 'no-store');
      return reply.redirect(claims.redirectUri, 303);
    }
  }
  if (claims.kind === 'verify' || (claims.actions.length === 1 && claims.actions[0] === 'VERIFY_EMAIL')) return sendPage(reply, 200, () => emailVerifiedPage({ realmName: t.realmName }));
  return sendPage(reply, 200, () => accountUpdatedPage({ realmName: t.realmName, passwordOnly: claims.actions.length === 1 && claims.actions[0] === 'UPDATE_PASSWORD' }));
}

/** The reset pages of a realm that does not offer them (the setting off, or no SMTP server). */
const notOffered = (reply: FastifyReply, l: Loaded): FastifyReply =>
  renderError(reply, 404, { realmName: l.realmName, title: msg('resetNotAvailableTitle'), description: msg('resetCredentialNotAllowedMessage') });

export async function resetRoutes(app: FastifyInstance, opts: { services: Services }): Promise<void> {
  const { services } = opts;
  app.setErrorHandler(htmlErrorHandler(services));
  const base = '/auth/realms/:realm/login-actions/:id/reset-credentials';

  app.get(base, async (req: Req, reply) => {
    const l = await load(services, req, reply);
    if (!l) return reply;
    if (!offersReset(l.realm)) return notOffered(reply, l);
    const back = interactionUrl(l.realm.id, l.ia.id);
    return sendPage(reply, 200, () => forgotPasswordPage({ realmName: l.realmName, clientName: l.clientName, action: `${back}/reset-credentials`, csrf: l.ia.csrfToken, back }));
  });

  app.post(base, async (req: Req, reply) => {
    const l = await load(services, req, reply);
    if (!l) return reply;
    if (!offersReset(l.realm)) return notOffered(reply, l);
    if (!checkCsrf(req, l.ia)) return renderError(reply, 403, { realmName: l.realmName, title: FORM_EXPIRED, description: BAD_FORM });
    const back = interactionUrl(l.realm.id, l.ia.id);
    const typed = field(req, 'username') ?? '';
    const perAddress = `${l.realm.id}\0${req.ip}`;
    const wait = services.resetMails.perAddress.blockedFor(perAddress);
    if (wait > 0) {
      // Per address, so it says nothing about any account.
      reply.header('retry-after', String(Math.ceil(wait / 1000)));
      return sendPage(reply, 429, () => forgotPasswordPage({ realmName: l.realmName, clientName: l.clientName, action: `${back}/reset-credentials`, csrf: l.ia.csrfToken, back, error: msg('resetTooManyRequests') }));
    }
    services.resetMails.perAddress.fail(perAddress);
    // The same page at once, whatever was typed: the lookup and the mail happen after the answer, so
    // neither the words nor the time tell whether the account exists.
    const log = req.log;
    const pageLocale = req.translator?.locale;
    setImmediate(() => {
      void findUser(services, l.realm, typed)
        // A federated user's password lives in LDAP: no link to set one here is mailed (the page reads the same).
        .then((user) => mailResetLink(services, l.realm, user?.federationLink ? undefined : user, { interactionId: l.ia.id, ip: req.ip, clientId: l.client.clientId, log, ...(pageLocale ? { pageLocale } : {}) }))
        .catch((err: unknown) => log.error({ err }, 'reset password request failed'));
    });
    reply.header('cache-control', 'no-store');
    return sendPage(reply, 200, () => resetMailSentPage({ realmName: l.realmName, back, lifespanMinutes: Math.max(1, Math.round(l.realm.actionTokenUserLifespan / 60)) }));
  });

  const tokenPath = '/auth/realms/:realm/login-actions/action-token';
  app.get(tokenPath, async (req: TokenReq, reply) => {
    const t = await checkToken(services, req, reply, req.query.key);
    if (!t) return reply;
    if (t.claims.kind === 'verify') {
      // Opened in the browser of its sign-in (no mail scanner has that browser's cookie): verified at once.
      const l = await ownInteraction(services, req, t.realm, t.claims.interaction);
      if (l && l.ia.userId === t.user.id) return finishLink(services, req, reply, t, await markEmailVerified(services, t.user, { ip: req.ip, clientId: l.client.clientId }));
    }
    return renderAction(services, req, reply, t);
  });

  app.post(tokenPath, async (req: TokenReq, reply) => {
    const body = req.body ?? {};
    const t = await checkToken(services, req, reply, body.key ?? body.proof);
    if (!t) return reply;
    if (!(await checkFormCsrf(req, services, t.realm.id, 'action-token', body.csrf))) return renderError(reply, 403, { realmName: t.realmName, title: FORM_EXPIRED, description: BAD_FORM });
    const posted = (name: string): string | undefined => (typeof body[name] === 'string' ? (body[name] as string) : undefined);
    const str = (name: string): string => posted(name) ?? '';
    const [action, ...others] = t.claims.actions;
    let rest = others;
    const clientId = t.claims.clientId;
    if (action === 'VERIFY_EMAIL') return finishLink(services, req, reply, t, await markEmailVerified(services, t.user, { ip: req.ip, ...(clientId ? { clientId } : {}) }));
    if (action === 'CONFIGURE_TOTP') {
      const setup = await otpSetup(services, t.realm, t.user.username, setupContext(t));
      const problem = await enrollOtp(services.store, { user: t.user, key: setup.key, code: str('otp'), label: str('label'), ip: req.ip, ...(clientId ? { clientId } : {}), nowSeconds: nowSeconds(services.clock) });
      if (problem) return renderAction(services, req, reply, t, { error: problemText(problem), status: 400 });
    } else if (action === 'UPDATE_PROFILE') {
      const { values, shown } = profileForm(posted);
      const errors = await completeProfileUpdate(services, { realm: t.realm, user: t.user, values, ip: req.ip, clientId: clientId ?? null });
      if (errors.length > 0) return renderAction(services, req, reply, t, { status: 400, values: shown, errors: problemTexts(errors) });
      // The link proved the address it was sent to, not a new one typed here: that one is verified
      // through a link of its own (at the next sign-in, when the realm asks for verified emails).
      const now = await services.store.users.get(t.user.id);
      if ((now?.email ?? '') !== (t.user.email ?? '')) rest = rest.filter((a) => a !== 'VERIFY_EMAIL');
    } else if (action === 'TERMS_AND_CONDITIONS') {
      const accepted = termsAccepted(posted);
      await answerTerms(services, { realm: t.realm, user: t.user, accepted, ip: req.ip, clientId: clientId ?? null });
      // Declined (Keycloak records rejected_by_user): the link's other actions are not done.
      if (!accepted) return renderError(reply, 200, { realmName: t.realmName, title: msg('termsDeclinedTitle'), description: msg('termsDeclinedMessage') });
    } else {
      const problem = await completePasswordUpdate(services.store, {
        realmId: t.realm.id,
        user: t.user,
        password: str('password-new'),
        confirmation: str('password-confirm'),
        ip: req.ip,
        ...(clientId ? { clientId } : {}),
        reason: t.claims.kind === 'reset' ? 'reset through a mailed link' : 'through a link an administrator mailed',
      });
      if (problem) return renderAction(services, req, reply, t, { error: passwordProblemText(problem, t.realm, t.user, str('password-new')), status: 400 });
    }
    const user = (await services.store.users.get(t.user.id)) ?? t.user;
    // Verifying the email needs no form: the user who followed the link and did the rest has proved the address theirs.
    if (rest.length === 1 && rest[0] === 'VERIFY_EMAIL') return finishLink(services, req, reply, t, await markEmailVerified(services, user, { ip: req.ip, ...(clientId ? { clientId } : {}) }));
    if (rest.length > 0) {
      // The next action, with a link bound to the credentials as they are now (the old one is dead).
      const next = await issueActionToken(services, user, { ...t.claims, actions: rest });
      return renderAction(services, req, reply, { ...t, user, claims: { ...t.claims, actions: rest }, token: next });
    }
    return finishLink(services, req, reply, t, user);
  });
}
