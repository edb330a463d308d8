import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { RegistrationError } from '../../oauth/client-registration.js';
import { OAuthError, safeDescription } from '../../oauth/errors.js';
import { ValidationError } from '../../admin/validation.js';
import { busy } from '../busy.js';
import { setNoStore } from '../plugins/security-headers.js';
import type { Services } from '../../services.js';
import { recordFailure } from './events.js';

/** A quoted-string of RFC 9110 5.6.4 carrying only RFC 6749's error_description characters. */
const quoted = (s: string): string => safeDescription(s).replace(/"/g, "'");

/**
 * RFC 7591 3.2.2 error bodies; 401 and 403 carry RFC 6750 3's Bearer challenge with the error code, so a
 * client can tell a bad token (invalid_token) from a token without the right (insufficient_scope).
 */
export function sendRegistrationError(reply: FastifyReply, err: RegistrationError, realmId: string | undefined): FastifyReply {
  setNoStore(reply);
  if (err.status === 401 || err.status === 403) {
    const realm = (realmId ?? 'realmgate').replace(/[^A-Za-z0-9._-]/g, '');
    reply.header('www-authenticate', `Bearer realm="${realm}", error="${err.error}", error_description="${quoted(err.description)}"`);
  }
  if (err.status === 503) reply.header('retry-after', '2');
  return reply.code(err.status).type('application/json').send({ error: err.error, error_description: safeDescription(err.description) });
}

/**
 * Anything thrown at the registration endpoints, as RFC 7591 JSON; internals only reach the log. Each
 * refusal of a registration, read, update or deletion is recorded as its _ERROR event first.
 */
export function registrationErrorHandler(services: Services): (error: FastifyError | Error, request: FastifyRequest, reply: FastifyReply) => Promise<FastifyReply> {
  return async (error, request, reply) => {
    const realmId = (request.params as { realm?: string } | undefined)?.realm;
    const err = registrationErrorOf(error, request, reply);
    await recordFailure(services, request, err);
    return sendRegistrationError(reply, err, realmId);
  };
}

function registrationErrorOf(error: FastifyError | Error, request: FastifyRequest, reply: FastifyReply): RegistrationError {
  if (error instanceof RegistrationError) return error;
  // Checks of the client operations (scope names, URLs, algorithms, keys): RFC 7591 3.2.2's catch-all.
  if (error instanceof ValidationError) return new RegistrationError('invalid_client_metadata', error.message);
  if (error instanceof OAuthError) return new RegistrationError(error.error === 'invalid_request' ? 'invalid_request' : 'invalid_client_metadata', error.description, error.status);
  if (busy(error, reply, request.log)) return new RegistrationError('temporarily_unavailable', 'the server is busy, retry shortly', 503);
  const status = (error as FastifyError).statusCode;
  if (status === 413) return new RegistrationError('invalid_request', 'the request body is too large', 413);
  if (status === 415) return new RegistrationError('invalid_client_metadata', 'the client metadata must be sent as application/json');
  if (status !== undefined && status >= 400 && status < 500) return new RegistrationError('invalid_client_metadata', 'the request body is not a valid JSON document');
  request.log.error({ err: error }, 'unexpected client registration error');
  return new RegistrationError('server_error', 'the server could not handle the request', 500);
}
