import { msg, type Text } from '../../i18n/translator.js';
import { problemText } from './problems.js';
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { Services } from '../../services.js';
import { nowSeconds } from '../../clock.js';
import type { Step } from '../../oauth/authorize/interaction.js';
import { nextStep } from '../../oauth/authorize/interaction.js';
import { attemptSecondFactor } from '../../oauth/brute-force.js';
import { DEVICE_COOKIE, DEVICE_COOKIE_MAX_AGE, issueDeviceCookie } from '../../oauth/device-cookie.js';
import { assertionFields, b64uField, checkWebAuthnAssertion, creationOptions, issueChallenge, registerWebAuthn, requestOptions, transportsField } from '../../admin/operations/webauthn.js';
import { pendingActions } from '../../admin/required-actions.js';
import { verifyEmailTrigger } from '../../admin/operations/email-verification.js';
import { registerWebauthnPage, webauthnPage } from '../../views/webauthn-pages.js';
import { SESSION_COOKIE, clearRealmCookie, clearSessionStateCookie, setRealmCookie } from '../cookies.js';
import { BAD_FORM, FORM_EXPIRED, advance, checkCsrf, completeSignIn, endPreviousSession, field, load, render, stepForm, type Loaded, type Req } from './routes.js';
import { htmlErrorHandler, interactionUrl, renderError, sendPage } from './render.js';
import { passkeyOption, passkeySignIn } from '../passkey-sign-in.js';

/**
 * The security key steps of a sign-in (W3C WebAuthn; Keycloak's WebAuthn authenticators): the second
 * factor after the password, "Use another method" between a key and an authenticator app, the
 * webauthn-register(-passwordless) required actions, and the login page's passkey. The checks are in
 * src/admin/operations/webauthn.ts and src/oauth/webauthn.ts.
 */

/** What a security key's challenge is bound to: this pending request (and, through it, this browser and user). */
const webauthnBinding = (l: Loaded): string => `interaction:${l.ia.id}`;

/** The login page's passkey button, when a user of the realm has a passkey: a challenge bound to this sign-in. */
export function passkeyOffer(services: Services, l: Loaded): Promise<{ passkey?: { action: string; options: Record<string, unknown> } }> {
  return passkeyOption(services, l.realm, webauthnBinding(l), `${interactionUrl(l.realm.id, l.ia.id)}/passwordless`);
}

type PageContext = { realmName: string; clientName: string; csrf: string };

/** The page of the key step, or of a key's registration, each with a new challenge (the earlier one of the page is void). */
export async function renderWebAuthnStep(
  services: Services,
  reply: FastifyReply,
  l: Loaded,
  step: Extract<Step, { kind: 'webauthn' | 'webauthn-register' }>,
  extra: { error?: Text; status?: number; base: string; ctx: PageContext; expired: Text },
): Promise<FastifyReply> {
  const { base, ctx } = extra;
  const user = await services.store.users.get(l.ia.userId ?? '');
  if (!user) return renderError(reply, 400, { realmName: l.realmName, title: msg('signInExpiredTitle'), description: extra.expired });
  if (step.kind === 'webauthn') {
    const keys = await services.store.webauthn.list(user.id, 'two-factor');
    const challenge = await issueChallenge(services.store, l.realm, webauthnBinding(l), 'get', nowSeconds(services.clock));
    const options = requestOptions(services.config, l.realm, challenge, keys);
    return sendPage(reply, extra.status ?? 200, () => webauthnPage({ ...ctx, action: `${base}/webauthn`, username: step.username, options, ...(step.otherMethod ? { otherMethod: `${base}/second-factor` } : {}), ...(extra.error ? { error: extra.error } : {}) }));
  }
  const challenge = await issueChallenge(services.store, l.realm, webauthnBinding(l), 'create', nowSeconds(services.clock));
  const options = creationOptions(services.config, l.realm, user, challenge, await services.store.webauthn.list(user.id), step.passwordless === true);
  return sendPage(reply, extra.status ?? 200, () => registerWebauthnPage({ ...ctx, action: `${base}/webauthn-register`, username: step.username, options, passwordless: step.passwordless === true, ...(extra.error ? { error: extra.error } : {}) }));
}

export async function webauthnRoutes(app: FastifyInstance, opts: { services: Services }): Promise<void> {
  const { services } = opts;
  app.setErrorHandler(htmlErrorHandler(services));
  const base = '/auth/realms/:realm/login-actions/:id';

  app.post(`${base}/webauthn`, async (req: Req, reply) => {
    const f = await stepForm(services, req, reply, 'webauthn');
    if (!('step' in f)) return f;
    const { l, step, user } = f;
    let detail = '';
    let cloned = false;
    const outcome = await attemptSecondFactor(services, l.realm, { user, ip: req.ip, clientId: l.client.clientId }, async (now) => {
      const r = await checkWebAuthnAssertion(services.store, services.config, {
        realm: l.realm,
        user,
        boundTo: webauthnBinding(l),
        ...assertionFields((name) => field(req, name)),
        nowSeconds: now,
      });
      if (r.ok) return undefined;
      detail = r.detail;
      cloned = r.cloned;
      return problemText(r.message);
    });
    if ('error' in outcome) {
      await services.audit.record({ realmId: l.realm.id, type: 'LOGIN_ERROR', outcome: 'failure', clientId: l.client.clientId, userId: user.id, username: user.username, ip: req.ip, reason: outcome.retryAfter ? 'blocked' : `security key refused: ${detail}${cloned ? ' (cloned authenticator?)' : ''}` });
      if (cloned) req.log.warn({ realm: l.realm.id, user: user.id }, 'webauthn: signature counter did not increase: possibly a cloned authenticator');
      if (outcome.retryAfter) reply.header('retry-after', String(outcome.retryAfter));
      return render(services, reply, l, step, { error: outcome.error, status: outcome.retryAfter ? 429 : 400 });
    }
    await services.store.interactions.update(l.ia.id, { secondFactor: true });
    setRealmCookie(reply, services.config, l.realm.id, DEVICE_COOKIE, await issueDeviceCookie(services.store, l.realm.id, user.username), DEVICE_COOKIE_MAX_AGE);
    return completeSignIn(services, req, reply, l, user.id);
  });

  // A passkey (Keycloak's webauthn-passwordless) on the login page: no username or password; the
  // discoverable credential names the user (userHandle), who then goes on as after a password and a
  // second factor (the required actions, then the session).
  app.post(`${base}/passwordless`, async (req: Req, reply) => {
    const l = await load(services, req, reply);
    if (!l) return reply;
    if (!checkCsrf(req, l.ia)) return renderError(reply, 403, { realmName: l.realmName, title: FORM_EXPIRED, description: BAD_FORM });
    if ((await nextStep(services, l.realm, l.client, l.ia)).kind !== 'login') return advance(services, reply, l);
    const r = await passkeySignIn(services, req, reply, l.realm, { boundTo: webauthnBinding(l), clientId: l.client.clientId, field: (name) => field(req, name) });
    if ('error' in r) return render(services, reply, l, { kind: 'login' }, { error: r.error, status: r.status });
    const user = await verifyEmailTrigger(services.store, l.realm, r.user);
    setRealmCookie(reply, services.config, l.realm.id, DEVICE_COOKIE, await issueDeviceCookie(services.store, l.realm.id, user.username), DEVICE_COOKIE_MAX_AGE);
    await endPreviousSession(services, req, l);
    await services.store.interactions.update(l.ia.id, { userId: user.id, sessionId: null, secondFactor: true });
    if (pendingActions(l.realm, user).length > 0) {
      clearRealmCookie(reply, services.config, l.realm.id, SESSION_COOKIE);
      clearSessionStateCookie(reply, services.config, l.realm.id);
      return advance(services, reply, l);
    }
    return completeSignIn(services, req, reply, { ...l, ia: { ...l.ia, userId: user.id, sessionId: null, secondFactor: true } }, user.id);
  });

  // "Use another method": a user with an authenticator app and a security key chooses which to use.
  app.post(`${base}/second-factor`, async (req: Req, reply) => {
    const l = await load(services, req, reply);
    if (!l) return reply;
    if (!checkCsrf(req, l.ia) || !l.ia.userId) return renderError(reply, 403, { realmName: l.realmName, title: FORM_EXPIRED, description: BAD_FORM });
    const method = field(req, 'method');
    if (method === 'otp' || method === 'webauthn') await services.store.interactions.update(l.ia.id, { params: { ...l.ia.params, secondFactorMethod: method } });
    return advance(services, reply, l);
  });

  app.post(`${base}/webauthn-register`, async (req: Req, reply) => {
    const f = await stepForm(services, req, reply, 'webauthn-register');
    if (!('step' in f)) return f;
    const { l, step, user } = f;
    const problem = await registerWebAuthn(services.store, services.config, {
      realm: l.realm,
      user,
      boundTo: webauthnBinding(l),
      clientDataJSON: b64uField(field(req, 'client_data_json')),
      attestationObject: b64uField(field(req, 'attestation_object'), 65_536),
      transports: transportsField(field(req, 'transports')),
      label: field(req, 'label') ?? '',
      ip: req.ip,
      clientId: l.client.clientId,
      nowSeconds: nowSeconds(services.clock),
      passwordless: step.passwordless === true,
    });
    if (problem) return render(services, reply, l, step, { error: problemText(problem), status: 400 });
    // Registered in this request: the user has just proved it, so no key is asked again before the session.
    await services.store.interactions.update(l.ia.id, { secondFactor: true });
    if (l.ia.sessionId) return advance(services, reply, l);
    return completeSignIn(services, req, reply, l, user.id);
  });
}
