import { pendingActions } from '../../admin/required-actions.js';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { hasSecondFactor } from '../../admin/operations/second-factor.js';
import type { Services } from '../../services.js';
import { ConflictError, type Realm, type User } from '../../storage/types.js';
import type { Step } from '../../oauth/authorize/interaction.js';
import { FailureLimiter } from '../../failure-limiter.js';
import { checkEmail, LIMITS, USERNAME_RE, ValidationError } from '../../admin/validation.js';
import { checkPassword, createUser } from '../../admin/operations/users.js';
import { PasswordPolicyError } from '../../admin/password-policy.js';
import { localizedFailures, localizedRule } from '../../views/password-rule.js';
import { issueDeviceCookie } from '../../oauth/device-cookie.js';
import { canSendMail, MailError } from '../../mail/mailer.js';
import { mailVerifyLink } from '../../mail/verify-mail.js';
import { registerPage, verifyEmailPage, type RegistrationValues } from '../../views/registration-pages.js';
import { htmlErrorHandler, interactionUrl, renderError, sendPage } from './render.js';
import { msg, type Text } from '../../i18n/translator.js';
import { BAD_FORM, FORM_EXPIRED, advance, afterPassword, checkCsrf, completeSignIn, field, load, render, stepForm, type Loaded, type Req } from './routes.js';

/** Whether the login page offers "Register" (Keycloak's registrationAllowed). */
export function offersRegistration(realm: Realm): boolean {
  return realm.registrationAllowed;
}

/**
 * Registrations per address: every form posted counts (a success or not), so that neither accounts nor
 * guesses at taken usernames come in bulk. In memory per process, bounded like every failure limiter.
 */
export const REGISTRATIONS_PER_ADDRESS = { max: 10, windowMs: 15 * 60_000 } as const;
const limiters = new WeakMap<Services, FailureLimiter>();
function registrationLimiter(services: Services): FailureLimiter {
  let l = limiters.get(services);
  if (!l) {
    l = new FailureLimiter(REGISTRATIONS_PER_ADDRESS.max, REGISTRATIONS_PER_ADDRESS.windowMs, () => services.clock.nowMs());
    limiters.set(services, l);
  }
  return l;
}

/** The realm does not allow registration (Keycloak's "Registration not allowed"): a page, never a 404. */
async function notAllowed(services: Services, req: Req, reply: FastifyReply, l: Loaded): Promise<FastifyReply> {
  await services.audit.record({ realmId: l.realm.id, type: 'REGISTER_ERROR', outcome: 'failure', clientId: l.client.clientId, ip: req.ip, reason: 'registration_disabled' }, { anonymous: true });
  return renderError(reply, 403, { realmName: l.realmName, title: msg('registrationNotAllowedMessage'), description: msg('registrationNotAllowedDescription') });
}

const trimmed = (req: Req, name: string, max: number): string => (field(req, name) ?? '').trim().slice(0, max);

/** Keycloak's checks of a registration form, in its words (its message keys); the Keycloak error code goes to the event. */
export async function registrationProblems(services: Services, realm: Realm, v: Required<RegistrationValues>, password: string, confirmation: string): Promise<{ errors: Text[]; code: string }> {
  const errors: Text[] = [];
  let code = 'invalid_registration';
  const taken = async (username: string): Promise<boolean> => (await services.store.users.findByUsername(realm.id, username.toLowerCase())) !== undefined;
  if (!realm.registrationEmailAsUsername) {
    if (v.username === '') errors.push(msg('missingUsernameMessage'));
    else if (!USERNAME_RE.test(v.username)) errors.push(msg('invalidUsernameCharactersMessage'));
    else if (await taken(v.username)) {
      errors.push(msg('usernameExistsMessage'));
      code = 'username_in_use';
    }
  }
  let emailOk = false;
  if (v.email === '') errors.push(msg('missingEmailMessage'));
  else {
    try {
      checkEmail(v.email);
      // The email is the username: it must also be one (Realmgate's usernames take no quotes or the like).
      emailOk = !realm.registrationEmailAsUsername || USERNAME_RE.test(v.email);
    } catch (err) {
      if (!(err instanceof ValidationError)) throw err;
    }
    // Keycloak refuses an email another user has unless the realm allows duplicates (duplicateEmailsAllowed);
    // with the email as username, one taken as a username is taken too.
    if (!emailOk) errors.push(msg('invalidEmailMessage'));
    else if ((realm.registrationEmailAsUsername && (await taken(v.email))) || (!realm.duplicateEmailsAllowed && (await services.store.users.findByEmail(realm.id, v.email, 1)).length > 0)) {
      errors.push(msg('emailExistsMessage'));
      if (code === 'invalid_registration') code = 'email_in_use';
    }
  }
  for (const [value, missing, invalid] of [
    [v.firstName, 'missingFirstNameMessage', 'invalidFirstNameMessage'],
    [v.lastName, 'missingLastNameMessage', 'invalidLastNameMessage'],
  ] as const) {
    if (value === '') errors.push(msg(missing));
    else if (/[\x00-\x1f\x7f]/.test(value)) errors.push(msg(invalid));
  }
  if (password === '') errors.push(msg('missingPasswordMessage'));
  else if (password !== confirmation) errors.push(msg('notMatchPasswordMessage'));
  const username = realm.registrationEmailAsUsername ? v.email.toLowerCase() : v.username.toLowerCase();
  if (password !== '' && password === confirmation) {
    try {
      await checkPassword(services.store, { realm, password, username, email: v.email.toLowerCase() });
    } catch (err) {
      if (!(err instanceof ValidationError)) throw err;
      const sentence = `${err.message.charAt(0).toUpperCase()}${err.message.slice(1)}.`;
      errors.push(err instanceof PasswordPolicyError ? localizedFailures(err.failures, sentence) : sentence);
    }
  }
  return { errors, code };
}

/** The per-user limit of verify-email mails shares the reset mails' limiter (3 in 15 minutes), under its own keys. */
const mailKey = (user: User): string => `verify-email\0${user.realmId}\0${user.id}`;

/**
 * Mails the sign-in's verify-email link, unless the user had enough of them lately or the realm sends no
 * mail; returns the words to show instead (and the status) when no mail went out.
 */
async function mailStepLink(services: Services, reply: FastifyReply, l: Loaded, user: User & { email: string }): Promise<{ error?: Text; status?: number }> {
  const outcome = await mailUserLink(services, reply, l.realm, user, { interactionId: l.ia.id, clientId: l.client.clientId });
  if (!outcome.error) await services.store.interactions.update(l.ia.id, { params: { ...l.ia.params, verifyEmailSentTo: user.email } });
  return outcome;
}

/**
 * Mails `user` a verify-email link (of the sign-in `interactionId`, if any), within the per-user limit;
 * the words to show instead (and the status) when no mail went out.
 */
export async function mailUserLink(services: Services, reply: FastifyReply, realm: Realm, user: User & { email: string }, o: { interactionId?: string; clientId: string }): Promise<{ error?: Text; status?: number }> {
  const req = reply.request;
  const base = { realmId: realm.id, clientId: o.clientId, userId: user.id, username: user.username, ip: req.ip };
  const wait = services.resetMails.perUser.blockedFor(mailKey(user));
  if (wait > 0) {
    await services.audit.record({ ...base, type: 'SEND_VERIFY_EMAIL_ERROR', outcome: 'failure', reason: 'too many verify-email mails for this user: none sent' });
    reply.header('retry-after', String(Math.ceil(wait / 1000)));
    return { error: msg('verifyEmailTooManyMessage'), status: 429 };
  }
  if (!canSendMail(realm)) {
    await services.audit.record({ ...base, type: 'SEND_VERIFY_EMAIL_ERROR', outcome: 'failure', reason: 'the realm has no SMTP server' });
    return { error: msg('emailNotConfiguredMessage'), status: 503 };
  }
  services.resetMails.perUser.fail(mailKey(user));
  try {
    await mailVerifyLink(services, realm, user, { lifespan: realm.actionTokenUserLifespan, ...(o.interactionId ? { interactionId: o.interactionId } : {}), clientId: o.clientId, ip: req.ip, log: req.log, ...(req.translator ? { pageLocale: req.translator.locale } : {}) });
  } catch (err) {
    if (!(err instanceof MailError)) throw err;
    // Recorded (SEND_VERIFY_EMAIL_ERROR) and logged by mailVerifyLink; the reason names the server, not for the user.
    return { error: msg('emailSendErrorMessage'), status: 502 };
  }
  return {};
}

/**
 * The VERIFY_EMAIL step of a sign-in (routes.ts render): the first time it shows for an address, the
 * link is mailed; a reload shows the page without mailing again (the resend button does).
 */
export async function verifyEmailStep(services: Services, reply: FastifyReply, l: Loaded, step: Extract<Step, { kind: 'verify-email' }>, extra: { error?: Text; status?: number } = {}): Promise<FastifyReply> {
  const ctx = { realmName: l.realmName, clientName: l.clientName, action: `${interactionUrl(l.realm.id, l.ia.id)}/verify-email`, csrf: l.ia.csrfToken, email: step.email };
  reply.header('cache-control', 'no-store');
  if (step.email === null) return sendPage(reply, 403, () => verifyEmailPage(ctx));
  let outcome: { error?: Text; status?: number } = extra;
  const user = l.ia.userId ? await services.store.users.get(l.ia.userId) : undefined;
  if (user?.email && l.ia.params.verifyEmailSentTo !== user.email) outcome = await mailStepLink(services, reply, l, { ...user, email: user.email });
  return sendPage(reply, outcome.status ?? 200, () => verifyEmailPage({ ...ctx, ...(outcome.error ? { error: outcome.error } : {}) }));
}

/**
 * A sign-in that waited on "Verify your email" (its link mailed, the password and any authenticator code
 * proved in this browser) whose email was verified meanwhile elsewhere (the link opened on a phone):
 * the session starts, as Keycloak's VERIFY_EMAIL completes once the email is verified. Undefined otherwise.
 */
export async function resumeAfterVerification(services: Services, req: FastifyRequest, reply: FastifyReply, l: Loaded): Promise<FastifyReply | undefined> {
  if (!l.ia.params.verifyEmailSentTo || !l.ia.userId || l.ia.sessionId) return undefined;
  const user = await services.store.users.get(l.ia.userId);
  if (!user || !user.enabled || !user.emailVerified || pendingActions(l.realm, user).length > 0) return undefined;
  if (!l.ia.secondFactor && (await hasSecondFactor(services.store, user.id))) return undefined;
  return completeSignIn(services, req, reply, l, user.id);
}

/**
 * The account page's sign-in of a user under VERIFY_EMAIL: no session; a link is mailed (no sign-in to
 * continue: following it ends on "verified"), and the user signs in again afterwards.
 */
export async function accountVerifyEmail(services: Services, reply: FastifyReply, realm: Realm, user: User, csrf: string): Promise<FastifyReply> {
  const ctx = { realmName: realm.displayName ?? realm.id, clientName: msg('accountClientName'), csrf, email: user.email };
  reply.header('cache-control', 'no-store');
  if (!user.email) return sendPage(reply, 403, () => verifyEmailPage(ctx));
  const outcome = await mailUserLink(services, reply, realm, { ...user, email: user.email }, { clientId: 'account' });
  return sendPage(reply, outcome.status ?? 200, () => verifyEmailPage({ ...ctx, ...(outcome.error ? { error: outcome.error } : {}) }));
}

export async function registrationRoutes(app: FastifyInstance, opts: { services: Services }): Promise<void> {
  const { services } = opts;
  app.setErrorHandler(htmlErrorHandler(services));
  const base = '/auth/realms/:realm/login-actions/:id/registration';

  const showForm = (reply: FastifyReply, l: Loaded, status: number, values: RegistrationValues = {}, errors: Text[] = []): FastifyReply => {
    const back = interactionUrl(l.realm.id, l.ia.id);
    reply.header('cache-control', 'no-store');
    return sendPage(
      reply,
      status,
      () => registerPage({ realmName: l.realmName, clientName: l.clientName, action: `${back}/registration`, csrf: l.ia.csrfToken, back, emailAsUsername: l.realm.registrationEmailAsUsername, rule: localizedRule(l.realm.passwordPolicy), values, errors }),
    );
  };

  app.get(base, async (req: Req, reply) => {
    const l = await load(services, req, reply);
    if (!l) return reply;
    if (!offersRegistration(l.realm)) return notAllowed(services, req, reply, l);
    // Signed in already (a session, or a password typed in this sign-in): on with it.
    if (l.ia.userId) return advance(services, reply, l);
    return showForm(reply, l, 200);
  });

  app.post(base, async (req: Req, reply) => {
    const l = await load(services, req, reply);
    if (!l) return reply;
    if (!offersRegistration(l.realm)) return notAllowed(services, req, reply, l);
    if (!checkCsrf(req, l.ia)) return renderError(reply, 403, { realmName: l.realmName, title: FORM_EXPIRED, description: BAD_FORM });
    if (l.ia.userId) return advance(services, reply, l);
    const values: Required<RegistrationValues> = {
      username: l.realm.registrationEmailAsUsername ? '' : trimmed(req, 'username', LIMITS.username + 1),
      email: trimmed(req, 'email', LIMITS.email + 1),
      firstName: trimmed(req, 'firstName', LIMITS.personName),
      lastName: trimmed(req, 'lastName', LIMITS.personName),
    };
    const event = { realmId: l.realm.id, clientId: l.client.clientId, ip: req.ip, username: (l.realm.registrationEmailAsUsername ? values.email : values.username).toLowerCase().slice(0, 255) || null };
    const limiter = registrationLimiter(services);
    const key = `${l.realm.id}\0${req.ip}`;
    const wait = limiter.blockedFor(key);
    if (wait > 0) {
      await services.audit.record({ ...event, type: 'REGISTER_ERROR', outcome: 'failure', reason: 'too many registrations from this address' }, { anonymous: true });
      reply.header('retry-after', String(Math.ceil(wait / 1000)));
      return showForm(reply, l, 429, values, [msg('registerTooManyMessage')]);
    }
    limiter.fail(key);
    const password = field(req, 'password-new') ?? '';
    const { errors, code } = await registrationProblems(services, l.realm, values, password, field(req, 'password-confirm') ?? '');
    // A refused registration names nobody who exists: anyone's to repeat, sampled.
    const refuse = async (errs: Text[], reason: string): Promise<FastifyReply> => {
      await services.audit.record({ ...event, type: 'REGISTER_ERROR', outcome: 'failure', reason }, { anonymous: true });
      return showForm(reply, l, 400, values, errs);
    };
    if (errors.length > 0) return refuse(errors, code);
    const username = l.realm.registrationEmailAsUsername ? values.email.toLowerCase() : values.username.toLowerCase();
    let id: string;
    try {
      ({ id } = await createUser(services.store, { realmId: l.realm.id, username, password, email: values.email.toLowerCase(), firstName: values.firstName, lastName: values.lastName, emailVerified: false, selfRegistration: true }));
    } catch (err) {
      // Taken meanwhile (another tab, another registration at the same moment): the unique index decides.
      if (err instanceof ConflictError) return refuse([msg(l.realm.registrationEmailAsUsername ? 'emailExistsMessage' : 'usernameExistsMessage')], l.realm.registrationEmailAsUsername ? 'email_in_use' : 'username_in_use');
      if (err instanceof ValidationError) return refuse([err.message], 'invalid_registration');
      throw err;
    }
    const user = await services.store.users.get(id);
    if (!user) throw new Error('registered user vanished');
    await services.audit.record({ ...event, type: 'REGISTER', outcome: 'success', userId: user.id, username: user.username, reason: `register_method form, email ${user.email ?? ''}` });
    // Signed in as after a password: VERIFY_EMAIL first under verifyEmail, then consent, organization and the code.
    return afterPassword(services, req, reply, l, { user, deviceCookie: await issueDeviceCookie(services.store, l.realm.id, user.username) });
  });

  app.post('/auth/realms/:realm/login-actions/:id/verify-email', async (req: Req, reply) => {
    const f = await stepForm(services, req, reply, 'verify-email');
    if (!('step' in f)) return f;
    const { l, step, user } = f;
    if (step.email === null || !user.email) return render(services, reply, l, step);
    const sent = await mailStepLink(services, reply, l, { ...user, email: user.email });
    const ctx = { realmName: l.realmName, clientName: l.clientName, action: `${interactionUrl(l.realm.id, l.ia.id)}/verify-email`, csrf: l.ia.csrfToken, email: user.email };
    reply.header('cache-control', 'no-store');
    return sendPage(reply, sent.status ?? 200, () => verifyEmailPage({ ...ctx, ...(sent.error ? { error: sent.error } : { resent: true }) }));
  });
}
