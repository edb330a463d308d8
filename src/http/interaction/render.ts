import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { busy } from '../busy.js';
import type { InteractionLimitError } from '../../oauth/authorize/interaction-caps.js';
import type { Services } from '../../services.js';
import { errorPage } from '../../views/pages.js';
import { accountDeletedPage } from '../../views/required-action-pages.js';
import { SESSION_COOKIE, clearRealmCookie, clearSessionStateCookie } from '../cookies.js';
import type { Config } from '../../config/config.js';
import { frontchannelLogoutCsp, setPageHeaders } from '../plugins/security-headers.js';
import { frontchannelLogoutPage } from '../../views/logout-pages.js';
import { FRONTCHANNEL_SCRIPT_HASH, type LogoutFrame } from '../../oidc/frontchannel-logout.js';
import type { ClientResponse } from '../../oauth/authorize/checks.js';
import { formPostPage } from '../../views/form-post-page.js';
import { ENGLISH, msg, withTranslator, type Text } from '../../i18n/translator.js';

export function interactionUrl(realmId: string, id: string): string {
  return `/auth/realms/${encodeURIComponent(realmId)}/login-actions/${encodeURIComponent(id)}`;
}

/**
 * Sends a page. `body` given as a view to call is rendered in the request's language (src/http/i18n.ts
 * useTranslator; English when none was chosen), and the page says which (Content-Language).
 */
export function sendPage(reply: FastifyReply, status: number, body: string | (() => string)): FastifyReply {
  setPageHeaders(reply);
  if (typeof body === 'string') return reply.code(status).send(body);
  const tr = reply.request.translator ?? ENGLISH;
  reply.header('content-language', tr.locale);
  return reply.code(status).send(withTranslator(tr, body));
}

/**
 * The front-channel logout page (views/logout-pages.ts) under its own CSP: the frames' origins and,
 * when the page moves on by itself, its inline script's hash; the other headers as on every page.
 */
export function sendFrontchannelLogoutPage(reply: FastifyReply, ctx: { realmName: string; frames: LogoutFrame[]; next?: string }): FastifyReply {
  setPageHeaders(reply);
  reply.header('content-security-policy', frontchannelLogoutCsp(ctx.frames.map((f) => f.origin), ctx.next !== undefined ? FRONTCHANNEL_SCRIPT_HASH : undefined));
  const tr = reply.request.translator ?? ENGLISH;
  reply.header('content-language', tr.locale);
  return reply.code(200).send(withTranslator(tr, () => frontchannelLogoutPage(ctx)));
}

export function renderError(reply: FastifyReply, status: number, ctx: { realmName: string; title: Text; description: Text }): FastifyReply {
  return sendPage(reply, status, () => errorPage(ctx));
}

/**
 * After a user deleted their own account (delete_account, from a sign-in or the account page): this
 * browser's session cookies are cleared and a page says the account is gone (Keycloak's info page; the
 * application is not returned to).
 */
export function sendAccountDeleted(reply: FastifyReply, config: Config, realmId: string, realmName: string): FastifyReply {
  clearRealmCookie(reply, config, realmId, SESSION_COOKIE);
  clearSessionStateCookie(reply, config, realmId);
  reply.header('cache-control', 'no-store');
  return sendPage(reply, 200, () => accountDeletedPage({ realmName }));
}

/**
 * Issue 11: a sign-in (an authorization request, or a device code entered on the verification page) that
 * would pass the cap on unfinished sign-ins per address or overall is refused with a page that says so.
 */
export function tooManySignIns(reply: FastifyReply, realmName: string, err: InteractionLimitError): FastifyReply {
  reply.header('retry-after', '60');
  return renderError(reply, 429, {
    realmName,
    title: msg('tooManySignInsTitle'),
    description: msg(err.scope === 'address' ? 'tooManySignInsAddress' : 'tooManySignInsOverall'),
  });
}

/** Errors in the browser flow become an error page; internals reach only the log. */
export function htmlErrorHandler(_services: Services) {
  return function handler(this: FastifyInstance, error: FastifyError | Error, request: FastifyRequest, reply: FastifyReply): FastifyReply {
    const status = (error as FastifyError).statusCode;
    if (status !== undefined && status >= 400 && status < 500) {
      return renderError(reply, status === 413 ? 413 : 400, { realmName: 'Realmgate', title: msg('invalidRequestTitle'), description: msg('invalidRequestMessage') });
    }
    if (busy(error, reply, request.log)) {
      return renderError(reply, 503, { realmName: 'Realmgate', title: msg('busyTitle'), description: msg('busyMessage') });
    }
    request.log.error({ err: error }, 'unexpected error');
    return renderError(reply, 500, { realmName: 'Realmgate', title: msg('internalErrorTitle'), description: msg('internalErrorMessage') });
  };
}

/** Delivers an authorization response: a 303 for query and fragment, an auto-posting form for form_post. */
export function sendClientResponse(reply: FastifyReply, response: ClientResponse, ctx: { realmName: string; clientName: string }): FastifyReply {
  if (response.mode !== 'form_post') {
    reply.header('cache-control', 'no-store');
    return reply.redirect(response.location, 303);
  }
  return sendPage(reply, 200, () => formPostPage({ ...ctx, action: response.action, fields: response.fields }));
}
