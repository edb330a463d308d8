import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Services } from '../../services.js';
import { nowSeconds } from '../../clock.js';
import { tokenHash } from '../../crypto/random.js';
import { OAuthError } from '../../oauth/errors.js';
import type { RawParams } from '../../oauth/params.js';
import { AuthorizePageError, checkAuthorizationRequest, checkClientAndRedirect, clientResponse, responseModeOf, stateOf } from '../../oauth/authorize/checks.js';
import { hintedProvider, redirectToProvider } from '../interaction/broker-routes.js';
import { beginInteraction, errorResponse, nextStep, promptNoneError, sessionUsable } from '../../oauth/authorize/interaction.js';
import { InteractionLimitError } from '../../oauth/authorize/interaction-caps.js';
import { takePushedRequest } from '../../oauth/par.js';
import { takeRequestObject } from '../../oauth/authorize/request-object.js';
import { realmBase } from '../../services.js';
import { SESSION_COOKIE, ensureBrowserBinding, readRealmCookie } from '../cookies.js';
import { interactionUrl, renderError, htmlErrorHandler, sendClientResponse, tooManySignIns } from '../interaction/render.js';
import { useTranslator } from '../i18n.js';
import { msg } from '../../i18n/translator.js';

export const AUTHORIZE_PATH = '/auth/realms/:realm/protocol/openid-connect/auth';
/** Keycloak's registration entry (keycloak-js register()): the authorization endpoint, opening on the registration page. */
export const REGISTRATIONS_PATH = '/auth/realms/:realm/protocol/openid-connect/registrations';

/**
 * RFC 6749 4.1.1 / 4.1.2: validate, then hand over to login, consent and organization choice. `register`
 * (or prompt=create): a user who must sign in starts on the registration page (docs/registration.md)
 * instead of the login page.
 */
async function authorize(services: Services, req: FastifyRequest<{ Params: { realm: string } }>, reply: FastifyReply, o: { register?: boolean } = {}): Promise<FastifyReply> {
  const realm = await services.cache.realm(req.params.realm);
  if (!realm) return renderError(reply, 404, { realmName: 'Realmgate', title: msg('unknownRealmTitle'), description: msg('unknownRealmMessage') });
  // The endpoint's own error pages speak the browser's language (a GET's menu links ask again with kc_locale).
  await useTranslator(services, req, reply, realm);
  // OIDC Core 3.1.2.1: a POST carries the parameters form-encoded.
  if (req.method === 'POST' && !req.headers['content-type']?.toLowerCase().startsWith('application/x-www-form-urlencoded')) {
    return renderError(reply, 400, { realmName: realm.displayName ?? realm.id, title: msg('invalidRequestTitle'), description: msg('invalidRequestMessage') });
  }
  let raw = (req.method === 'GET' ? req.query : req.body) as RawParams;
  const realmName = realm.displayName ?? realm.id;

  let client, redirectUri;
  let pushed = false;
  let requestObject;
  try {
    // OIDC Core 6.1 / RFC 9101: a request object's parameters are the request, every other one ignored.
    requestObject = await takeRequestObject(services, realm.id, raw);
    if (requestObject) raw = requestObject.params;
    // RFC 9126 4: with request_uri, the pushed parameters are the request, validated again like any other.
    const fromPush = requestObject ? undefined : await takePushedRequest(services, realm.id, raw);
    if (fromPush) {
      raw = fromPush;
      pushed = true;
    }
    ({ client, redirectUri } = await checkClientAndRedirect(raw, (id) => services.cache.client(realm.id, id)));
  } catch (err) {
    if (err instanceof AuthorizePageError) return renderError(reply, 400, { realmName, title: err.title, description: err.description });
    throw err;
  }

  let params;
  try {
    const realmScopes = (await services.cache.realmScopes(realm.id)) ?? new Map();
    // RFC 9101 6.3: a signed object whose claims fail goes back to its (verified) redirect_uri.
    if (requestObject?.problem) throw new OAuthError('invalid_request_object', requestObject.problem);
    params = checkAuthorizationRequest(raw, { client, redirectUri, realm, realmScopes, pushed, requestObject: requestObject !== undefined });
  } catch (err) {
    if (!(err instanceof OAuthError)) throw err;
    // Only now that client and redirect_uri are verified may an error go back to the client, in the
    // response mode it asked for when that much is valid.
    const response = clientResponse(
      services.config.appUrl,
      redirectUri,
      { error: err.error, error_description: err.description, state: stateOf(raw), iss: realmBase(services.config, realm.id) },
      responseModeOf(raw),
    );
    return sendClientResponse(reply, response, { realmName, clientName: client.name ?? client.clientId });
  }

  const browserHash = ensureBrowserBinding(req, reply, services.config, realm.id);
  const sessionSecret = readRealmCookie(req, services.config, realm.id, SESSION_COOKIE);
  const now = nowSeconds(services.clock);
  const found = sessionSecret ? await services.store.sessions.findActive(realm.id, tokenHash(sessionSecret), now) : undefined;
  const session = sessionUsable(params, found, now);
  let ia;
  try {
    ia = await beginInteraction(services, { realm, client, params, browserHash, session, ip: req.ip });
  } catch (err) {
    if (!(err instanceof InteractionLimitError)) throw err;
    return tooManySignIns(reply, realmName, err);
  }
  const step = await nextStep(services, realm, client, ia);
  reply.header('cache-control', 'no-store');
  if (params.prompt?.includes('none')) {
    const failure = promptNoneError(step);
    if (failure) {
      await services.store.interactions.delete(ia.id);
      return sendClientResponse(reply, errorResponse(services, realm, params, failure.error, failure.description), { realmName, clientName: client.name ?? client.clientId });
    }
  }
  if (step.kind === 'redirect') return sendClientResponse(reply, step.response, { realmName, clientName: client.name ?? client.clientId });
  // The registration page answers a realm that does not allow it with its own error page (as Keycloak's).
  if ((o.register || params.prompt?.includes('create')) && step.kind === 'login') return reply.redirect(`${interactionUrl(realm.id, ia.id)}/registration`, 303);
  // Keycloak's kc_idp_hint: straight to that identity provider instead of the login page.
  const hinted = step.kind === 'login' ? await hintedProvider(services, realm.id, params.idpHint) : undefined;
  if (hinted) return redirectToProvider(services, reply, realm, hinted, ia);
  return reply.redirect(interactionUrl(realm.id, ia.id), 303);
}

export async function authorizeRoutes(app: FastifyInstance, opts: { services: Services }): Promise<void> {
  const { services } = opts;
  app.setErrorHandler(htmlErrorHandler(services));
  app.get<{ Params: { realm: string } }>(AUTHORIZE_PATH, (req, reply) => authorize(services, req, reply));
  // OIDC Core 3.1.2.1: the authorization endpoint also accepts POST with form parameters.
  app.post<{ Params: { realm: string } }>(AUTHORIZE_PATH, (req, reply) => authorize(services, req, reply));
  app.get<{ Params: { realm: string } }>(REGISTRATIONS_PATH, (req, reply) => authorize(services, req, reply, { register: true }));
}
