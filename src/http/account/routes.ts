import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Services } from '../../services.js';
import type { BrowserSession, Realm } from '../../storage/types.js';
import { nowSeconds } from '../../clock.js';
import { safeEqual, tokenHash } from '../../crypto/random.js';
import { createBrowserSession } from '../../oauth/authorize/interaction.js';
import { attemptLogin } from '../../oauth/brute-force.js';
import { DEVICE_COOKIE, DEVICE_COOKIE_MAX_AGE } from '../../oauth/device-cookie.js';
import { accountPage, type AccountGrant } from '../../views/account-pages.js';
import { loginPage, updatePasswordPage } from '../../views/pages.js';
import { completePasswordUpdate } from '../../admin/operations/users.js';
import { SESSION_COOKIE, checkFormCsrf, clearRealmCookie, clearSessionStateCookie, ensureBrowserBinding, formCsrf, readRealmCookie, setRealmCookie, setSessionStateCookie } from '../cookies.js';
import { htmlErrorHandler, renderError, sendPage } from '../interaction/render.js';
import { preflight, varyOrigin } from '../plugins/cors.js';
import { sendProfile, wantsProfileJson } from './profile.js';

type Req = FastifyRequest<{ Params: { realm: string }; Querystring: Record<string, unknown>; Body: Record<string, unknown> | undefined }>;

function field(req: Req, name: string): string | undefined {
  const v = req.body?.[name];
  return typeof v === 'string' && v.length <= 1024 ? v : undefined;
}

/**
 * The end user's account page: the applications they have granted access to, with a button that takes
 * the access back (its refresh chains and its consent), and their browser sessions, with sign-out.
 */
/** How long the update-password form of a temporary password stays valid. */
const PROOF_LIFETIME_S = 600;

export async function accountRoutes(app: FastifyInstance, opts: { services: Services }): Promise<void> {
  const { services } = opts;
  app.setErrorHandler(htmlErrorHandler(services));
  const path = '/auth/realms/:realm/account';
  const baseOf = (realm: Realm): string => `/auth/realms/${encodeURIComponent(realm.id)}/account`;

  async function context(req: Req, reply: FastifyReply): Promise<{ realm: Realm; session: BrowserSession | undefined; csrf: string; binding: string } | undefined> {
    const realm = await services.cache.realm(req.params.realm);
    if (!realm) {
      renderError(reply, 404, { realmName: 'Realmgate', title: 'Unknown realm', description: 'There is no realm at this address.' });
      return undefined;
    }
    const binding = ensureBrowserBinding(req, reply, services.config, realm.id);
    const csrf = await formCsrf(services, 'account', binding);
    const secret = readRealmCookie(req, services.config, realm.id, SESSION_COOKIE);
    const session = secret ? await services.store.sessions.findActive(realm.id, tokenHash(secret), nowSeconds(services.clock)) : undefined;
    return { realm, session, csrf, binding };
  }

  async function show(reply: FastifyReply, realm: Realm, session: BrowserSession, csrf: string, notice?: string): Promise<FastifyReply> {
    const now = nowSeconds(services.clock);
    const user = await services.store.users.get(session.userId);
    const [consents, usage, orgs, sessions, scopes] = await Promise.all([
      services.store.consents.listForUser(realm.id, session.userId),
      services.store.refresh.lastUsedByUser(realm.id, session.userId, now),
      services.store.users.organizations(session.userId),
      services.store.sessions.listActive(realm.id, session.userId, now),
      services.cache.realmScopes(realm.id),
    ]);
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
        organizationName: orgs.find((o) => o.id === organizationId)?.name ?? 'a former organization',
        scopes: (consent?.scopes ?? []).map((n) => scopes?.get(n) ?? { name: n, consentText: n }),
        since: consent?.createdAt ?? used?.lastUsed ?? now,
        lastUsed: used?.lastUsed,
      });
    }
    return sendPage(
      reply,
      200,
      accountPage({
        realmName: realm.displayName ?? realm.id,
        username: user?.username ?? '',
        base: baseOf(realm),
        csrf,
        grants,
        sessions: sessions.map((s) => ({ id: s.id, createdAt: s.createdAt, current: s.id === session.id })),
        ...(notice ? { notice } : {}),
      }),
    );
  }

  /** A new browser session for the user (one this browser had ends), then the account page. */
  async function signIn(req: Req, reply: FastifyReply, c: { realm: Realm; session: BrowserSession | undefined }, user: { id: string; username: string }): Promise<FastifyReply> {
    await services.audit.record({ realmId: c.realm.id, type: 'LOGIN', outcome: 'success', clientId: 'account', userId: user.id, username: user.username, ip: req.ip });
    if (c.session) await services.store.sessions.end(c.session.id, nowSeconds(services.clock));
    const { secret, session } = await createBrowserSession(services, c.realm, user.id);
    setRealmCookie(reply, services.config, c.realm.id, SESSION_COOKIE, secret, c.realm.ssoSessionLifetime);
    setSessionStateCookie(reply, services.config, c.realm.id, session.id, c.realm.ssoSessionLifetime);
    return reply.redirect(baseOf(c.realm), 303);
  }

  /** The proof's MAC: the server's form key over the user, the expiry and the current password's hash, for this browser. */
  function passwordProof(userId: string, expiresAt: number, passwordHash: string, binding: string): Promise<string> {
    return formCsrf(services, `account-update-password\0${userId}\0${expiresAt}\0${tokenHash(passwordHash)}`, binding);
  }

  function updatePassword(reply: FastifyReply, realm: Realm, csrf: string, username: string, proof: string, error?: string): FastifyReply {
    const page = updatePasswordPage({ realmName: realm.displayName ?? realm.id, clientName: 'your account', action: `${baseOf(realm)}/update-password`, csrf, username, proof, ...(error ? { error } : {}) });
    return sendPage(reply, error ? 400 : 200, page);
  }

  function login(reply: FastifyReply, realm: Realm, csrf: string, error?: string, status = 200): FastifyReply {
    return sendPage(reply, status, loginPage({ realmName: realm.displayName ?? realm.id, clientName: 'your account', action: `${baseOf(realm)}/login`, csrf, ...(error ? { error } : {}) }));
  }

  varyOrigin(app);
  preflight(app, services, path, 'GET');

  app.get(path, async (req: Req, reply) => {
    if (wantsProfileJson(req)) return sendProfile(services, req, reply);
    const c = await context(req, reply);
    if (!c) return reply;
    if (!c.session) return login(reply, c.realm, c.csrf);
    return show(reply, c.realm, c.session, c.csrf);
  });

  app.post(`${path}/login`, async (req: Req, reply) => {
    const c = await context(req, reply);
    if (!c) return reply;
    if (!(await checkFormCsrf(req, services, c.realm.id, 'account', req.body?.csrf))) return renderError(reply, 403, { realmName: c.realm.displayName ?? c.realm.id, title: 'Form expired', description: 'The form was out of date. Please try again.' });
    const username = field(req, 'username') ?? '';
    const outcome = await attemptLogin(services, c.realm, { username, password: field(req, 'password') ?? '', ip: req.ip, clientId: 'account', deviceCookie: readRealmCookie(req, services.config, c.realm.id, DEVICE_COOKIE) });
    if ('error' in outcome) {
      await services.audit.record({ realmId: c.realm.id, type: 'LOGIN_ERROR', outcome: 'failure', clientId: 'account', username, ip: req.ip, reason: outcome.retryAfter ? 'blocked' : 'invalid credentials' });
      if (outcome.retryAfter) reply.header('retry-after', String(outcome.retryAfter));
      return login(reply, c.realm, c.csrf, outcome.error, outcome.retryAfter ? 429 : 200);
    }
    const { user } = outcome;
    setRealmCookie(reply, services.config, c.realm.id, DEVICE_COOKIE, outcome.deviceCookie, DEVICE_COOKIE_MAX_AGE);
    if (user.requiredActions.includes('UPDATE_PASSWORD')) {
      // A temporary password gives no session: the user chooses a new one first. This page has no
      // pending request to remember that the password was right, so the form carries a proof of it.
      const expiresAt = nowSeconds(services.clock) + PROOF_LIFETIME_S;
      const proof = `${user.id}.${expiresAt}.${await passwordProof(user.id, expiresAt, user.passwordHash, c.binding)}`;
      return updatePassword(reply, c.realm, c.csrf, user.username, proof);
    }
    return signIn(req, reply, c, user);
  });

  app.post(`${path}/update-password`, async (req: Req, reply) => {
    const c = await context(req, reply);
    if (!c) return reply;
    const expired = (): FastifyReply => renderError(reply, 403, { realmName: c.realm.displayName ?? c.realm.id, title: 'Form expired', description: 'The form was out of date. Sign in again.' });
    if (!(await checkFormCsrf(req, services, c.realm.id, 'account', req.body?.csrf))) return expired();
    const proof = field(req, 'proof') ?? '';
    // `<user id>.<expiry>.<mac>`, read from the right: an imported user's id may hold dots.
    const [, userId = '', exp = ''] = /^(.+)\.(\d+)\.[^.]*$/.exec(proof) ?? [];
    const expiresAt = Number(exp);
    if (!/^\d{1,12}$/.test(exp) || expiresAt <= nowSeconds(services.clock)) return expired();
    const user = await services.store.users.get(userId);
    // Bound to this browser, to the password typed (its hash: a changed password voids it) and to a time.
    if (!user || user.realmId !== c.realm.id || !user.enabled || !safeEqual(proof, `${userId}.${exp}.${await passwordProof(userId, expiresAt, user.passwordHash, c.binding)}`)) return expired();
    if (!user.requiredActions.includes('UPDATE_PASSWORD')) return expired();
    const problem = await completePasswordUpdate(services.store, {
      realmId: c.realm.id,
      user,
      password: field(req, 'password-new') ?? '',
      confirmation: field(req, 'password-confirm') ?? '',
      ip: req.ip,
      clientId: 'account',
    });
    if (problem) return updatePassword(reply, c.realm, c.csrf, user.username, proof, problem);
    return signIn(req, reply, c, user);
  });

  app.post(`${path}/revoke`, async (req: Req, reply) => {
    const c = await context(req, reply);
    if (!c) return reply;
    if (!c.session || !(await checkFormCsrf(req, services, c.realm.id, 'account', req.body?.csrf))) return reply.redirect(baseOf(c.realm), 303);
    const clientId = field(req, 'client_id');
    const organizationId = field(req, 'organization_id');
    if (clientId && organizationId) {
      const now = nowSeconds(services.clock);
      await services.store.refresh.revokeGrant(c.realm.id, c.session.userId, clientId, organizationId, now);
      await services.store.consents.withdraw(c.realm.id, c.session.userId, clientId, organizationId);
      await services.audit.record({ realmId: c.realm.id, type: 'REVOKE', outcome: 'success', clientId, userId: c.session.userId, ip: req.ip, reason: 'revoked by the user on the account page' });
    }
    return show(reply, c.realm, c.session, c.csrf, 'Access revoked. The application must ask you again.');
  });

  app.post(`${path}/sessions/end`, async (req: Req, reply) => {
    const c = await context(req, reply);
    if (!c) return reply;
    if (!c.session || !(await checkFormCsrf(req, services, c.realm.id, 'account', req.body?.csrf))) return reply.redirect(baseOf(c.realm), 303);
    const id = field(req, 'session_id');
    const now = nowSeconds(services.clock);
    const mine = (await services.store.sessions.listActive(c.realm.id, c.session.userId, now)).find((s) => s.id === id);
    if (mine) await services.store.sessions.end(mine.id, now);
    if (mine?.id === c.session.id) {
      clearRealmCookie(reply, services.config, c.realm.id, SESSION_COOKIE);
      clearSessionStateCookie(reply, services.config, c.realm.id);
      return reply.redirect(baseOf(c.realm), 303);
    }
    return show(reply, c.realm, c.session, c.csrf, mine ? 'That browser is signed out.' : undefined);
  });
}
