import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { busy } from '../busy.js';
import type { InteractionLimitError } from '../../oauth/authorize/interaction-caps.js';
import type { Services } from '../../services.js';
import { errorPage } from '../../views/pages.js';
import { frontchannelLogoutCsp, setPageHeaders } from '../plugins/security-headers.js';
import { frontchannelLogoutPage } from '../../views/logout-pages.js';
import { FRONTCHANNEL_SCRIPT_HASH, type LogoutFrame } from '../../oidc/frontchannel-logout.js';
import type { ClientResponse } from '../../oauth/authorize/checks.js';
import { formPostPage } from '../../views/form-post-page.js';

export function interactionUrl(realmId: string, id: string): string {
  return `/auth/realms/${encodeURIComponent(realmId)}/login-actions/${encodeURIComponent(id)}`;
}

export function sendPage(reply: FastifyReply, status: number, body: string): FastifyReply {
  setPageHeaders(reply);
  return reply.code(status).send(body);
}

/**
 * The front-channel logout page (views/logout-pages.ts) under its own CSP: the frames' origins and,
 * when the page moves on by itself, its inline script's hash; the other headers as on every page.
 */
export function sendFrontchannelLogoutPage(reply: FastifyReply, ctx: { realmName: string; frames: LogoutFrame[]; next?: string }): FastifyReply {
  setPageHeaders(reply);
  reply.header('content-security-policy', frontchannelLogoutCsp(ctx.frames.map((f) => f.origin), ctx.next !== undefined ? FRONTCHANNEL_SCRIPT_HASH : undefined));
  return reply.code(200).send(frontchannelLogoutPage(ctx));
}

export function renderError(reply: FastifyReply, status: number, ctx: { realmName: string; title: string; description: string }): FastifyReply {
  return sendPage(reply, status, errorPage(ctx));
}

/**
 * Issue 11: a sign-in (an authorization request, or a device code entered on the verification page) that
 * would pass the cap on unfinished sign-ins per address or overall is refused with a page that says so.
 */
export function tooManySignIns(reply: FastifyReply, realmName: string, err: InteractionLimitError): FastifyReply {
  reply.header('retry-after', '60');
  return renderError(reply, 429, {
    realmName,
    title: 'Too many sign-ins in progress',
    description:
      err.scope === 'address'
        ? 'Too many sign-ins were started from your network and not finished. Finish or close one, or wait a few minutes, then try again.'
        : 'The server is handling too many sign-ins right now. Please wait a few minutes and try again.',
  });
}

/** Errors in the browser flow become an error page; internals reach only the log. */
export function htmlErrorHandler(_services: Services) {
  return function handler(this: FastifyInstance, error: FastifyError | Error, request: FastifyRequest, reply: FastifyReply): FastifyReply {
    const status = (error as FastifyError).statusCode;
    if (status !== undefined && status >= 400 && status < 500) {
      return renderError(reply, status === 413 ? 413 : 400, { realmName: 'Realmgate', title: 'Invalid request', description: 'The request could not be understood.' });
    }
    if (busy(error, reply, request.log)) {
      return renderError(reply, 503, { realmName: 'Realmgate', title: 'Busy', description: 'The server is busy right now. Please try again in a moment.' });
    }
    request.log.error({ err: error }, 'unexpected error');
    return renderError(reply, 500, { realmName: 'Realmgate', title: 'Something went wrong', description: 'The server could not complete your request. Please try again.' });
  };
}

/** Delivers an authorization response: a 303 for query and fragment, an auto-posting form for form_post. */
export function sendClientResponse(reply: FastifyReply, response: ClientResponse, ctx: { realmName: string; clientName: string }): FastifyReply {
  if (response.mode !== 'form_post') {
    reply.header('cache-control', 'no-store');
    return reply.redirect(response.location, 303);
  }
  return sendPage(reply, 200, formPostPage({ ...ctx, action: response.action, fields: response.fields }));
}
