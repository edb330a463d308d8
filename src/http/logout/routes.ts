import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { realmBase, type Services } from '../../services.js';
import type { Realm } from '../../storage/types.js';
import { nowSeconds } from '../../clock.js';
import { redirectWith } from '../../oauth/authorize/checks.js';
import type { RawParams } from '../../oauth/params.js';
import { LogoutError, parseLogoutRequest, type LogoutRequest } from '../../oidc/logout.js';
import { logoutSession } from '../../oidc/end-session.js';
import { logoutConfirmPage, loggedOutPage } from '../../views/logout-pages.js';
import { SESSION_COOKIE, browserSession, checkFormCsrf, clearRealmCookie, clearSessionStateCookie, ensureBrowserBinding, formCsrf } from '../cookies.js';
import { htmlErrorHandler, renderError, sendFrontchannelLogoutPage, sendPage } from '../interaction/render.js';
import { logoutFrames, type LogoutFrame } from '../../oidc/frontchannel-logout.js';
import { corsForClient, preflight, varyOrigin } from '../plugins/cors.js';
import { useTranslator } from '../i18n.js';
import { msg } from '../../i18n/translator.js';

type Req = FastifyRequest<{ Params: { realm: string }; Querystring: Record<string, unknown>; Body: Record<string, unknown> | undefined }>;

/** Ends the browser session, then returns to the client or says so. */
async function finishLogout(services: Services, req: Req, reply: FastifyReply, realm: Realm, lr: LogoutRequest): Promise<FastifyReply> {
  const now = nowSeconds(services.clock);
  const session = await browserSession(services, req, realm.id, now);
  let frames: LogoutFrame[] = [];
  if (session) {
    const clients = await logoutSession(services, realm.id, session, 'logged out');
    frames = logoutFrames(realmBase(services.config, realm.id), session.id, clients);
    await services.audit.record({ realmId: realm.id, type: 'LOGOUT', outcome: 'success', clientId: lr.client?.clientId ?? null, userId: session.userId, ip: req.ip });
  }
  clearRealmCookie(reply, services.config, realm.id, SESSION_COOKIE);
  clearSessionStateCookie(reply, services.config, realm.id);
  const next = lr.postLogoutRedirectUri ? redirectWith(lr.postLogoutRedirectUri, { state: lr.state }) : undefined;
  // Front-Channel Logout 1.0, 2 and 4: the clients of the session are framed first, then the browser
  // moves on to the post-logout redirect URI (or this page is the signed-out page).
  if (frames.length > 0) return sendFrontchannelLogoutPage(reply, { realmName: realm.displayName ?? realm.id, frames, ...(next !== undefined ? { next } : {}) });
  if (next !== undefined) {
    reply.header('cache-control', 'no-store');
    return reply.redirect(next, 303);
  }
  return sendPage(reply, 200, () => loggedOutPage({ realmName: realm.displayName ?? realm.id }));
}

/** OpenID Connect RP-Initiated Logout 1.0. */
export async function logoutRoutes(app: FastifyInstance, opts: { services: Services }): Promise<void> {
  const { services } = opts;
  app.setErrorHandler(htmlErrorHandler(services));
  const path = '/auth/realms/:realm/protocol/openid-connect/logout';
  varyOrigin(app);
  preflight(app, services, path, 'GET, POST');

  async function handle(req: Req, reply: FastifyReply, raw: RawParams): Promise<FastifyReply> {
    const realm = await services.cache.realm(req.params.realm);
    if (!realm) return renderError(reply, 404, { realmName: 'Realmgate', title: msg('unknownRealmTitle'), description: msg('unknownRealmMessage') });
    const realmName = realm.displayName ?? realm.id;
    // The browser's language (kc_locale, its cookie, Accept-Language); a GET's menu repeats the request.
    await useTranslator(services, req, reply, realm);
    let lr: LogoutRequest;
    try {
      lr = await parseLogoutRequest(services, realm, raw);
    } catch (err) {
      if (err instanceof LogoutError) return renderError(reply, 400, { realmName, title: msg('logoutNotValidTitle'), description: err.text });
      throw err;
    }
    // A client's own page may call logout with fetch and read the outcome (its web origins only).
    corsForClient(req, reply, lr.client);
    const session = await browserSession(services, req, realm.id);
    // A valid id_token_hint for this very session shows the request comes from the application the
    // user used; anything else asks the user, so that another site cannot log them out.
    if (!session || (lr.hintSid !== undefined && lr.hintSid === session.id)) return finishLogout(services, req, reply, realm, lr);
    const binding = ensureBrowserBinding(req, reply, services.config, realm.id);
    const csrf = await formCsrf(services, 'logout', binding);
    return sendPage(reply, 200, () =>
      logoutConfirmPage({
        realmName,
        clientName: lr.client ? (lr.client.name ?? lr.client.clientId) : undefined,
        action: `/auth/realms/${encodeURIComponent(realm.id)}/protocol/openid-connect/logout/confirm`,
        csrf,
        fields: { client_id: lr.client?.clientId, post_logout_redirect_uri: lr.postLogoutRedirectUri, state: lr.state },
      }),
    );
  }

  app.get(path, (req: Req, reply) => handle(req, reply, req.query));
  app.post(path, (req: Req, reply) => handle(req, reply, req.body));

  app.post(`${path}/confirm`, async (req: Req, reply) => {
    const realm = await services.cache.realm(req.params.realm);
    if (!realm) return renderError(reply, 404, { realmName: 'Realmgate', title: msg('unknownRealmTitle'), description: msg('unknownRealmMessage') });
    const realmName = realm.displayName ?? realm.id;
    await useTranslator(services, req, reply, realm);
    if (!(await checkFormCsrf(req, services, realm.id, 'logout', req.body?.csrf))) return renderError(reply, 403, { realmName, title: msg('formExpiredTitle'), description: msg('formExpiredMessage') });
    const body = { ...req.body };
    delete body.csrf;
    let lr: LogoutRequest;
    try {
      // The hidden fields are checked again: the redirect URI must still be registered.
      lr = await parseLogoutRequest(services, realm, body);
    } catch (err) {
      if (err instanceof LogoutError) return renderError(reply, 400, { realmName, title: msg('logoutNotValidTitle'), description: err.text });
      throw err;
    }
    return finishLogout(services, req, reply, realm, lr);
  });
}
