import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { ConflictError, ValidationError, NotFound } from '../../admin/validation.js';
import { busy } from '../busy.js';
import { keycloakText, PasswordPolicyError } from '../../admin/password-policy.js';
import { setNoStore } from '../plugins/security-headers.js';

/** An admin API failure with its HTTP status, answered in Keycloak's error shape. */
export class AdminHttpError extends Error {
  constructor(
    readonly status: number,
    readonly error: string,
    message: string,
  ) {
    super(message);
  }
}

export function unauthorized(message = 'a valid bearer token is required'): AdminHttpError {
  return new AdminHttpError(401, 'HTTP 401 Unauthorized', message);
}

export function forbidden(message = 'the caller lacks the role this request needs'): AdminHttpError {
  return new AdminHttpError(403, 'HTTP 403 Forbidden', message);
}

export function notFound(message: string): AdminHttpError {
  return new AdminHttpError(404, 'HTTP 404 Not Found', message);
}

/**
 * Keycloak's admin API answers errors as JSON with `error` and, for validation and conflicts,
 * `errorMessage`; keycloak-admin-client reads either. Nothing internal reaches the body.
 */
export function sendAdminError(reply: FastifyReply, status: number, error: string, message: string): FastifyReply {
  setNoStore(reply);
  if (status === 401) reply.header('www-authenticate', 'Bearer realm="admin"');
  return reply.code(status).type('application/json').send({ error, errorMessage: message });
}

export function adminErrorHandler(error: FastifyError | Error, request: FastifyRequest, reply: FastifyReply): FastifyReply {
  if (error instanceof AdminHttpError) return sendAdminError(reply, error.status, error.error, error.message);
  if (error instanceof NotFound) return sendAdminError(reply, 404, 'HTTP 404 Not Found', error.message);
  if (error instanceof PasswordPolicyError) {
    // Keycloak's reset-password: the first rule failed, its message key and text; errorMessage names them all.
    const first = error.failures[0]!;
    setNoStore(reply);
    return reply.code(400).type('application/json').send({ error: first.key, error_description: keycloakText(first), errorMessage: error.message });
  }
  if (error instanceof ValidationError) return sendAdminError(reply, 400, 'invalid_request', error.message);
  if (error instanceof ConflictError) return sendAdminError(reply, 409, 'conflict', error.message);
  if (busy(error, reply, request.log)) {
    return sendAdminError(reply, 503, 'temporarily_unavailable', 'the server is busy, retry shortly');
  }
  const fe = error as FastifyError;
  if (fe.validation) return sendAdminError(reply, 400, 'invalid_request', `invalid request: ${fe.message}`);
  const status = fe.statusCode;
  if (status === 413) return sendAdminError(reply, 413, 'invalid_request', 'the request body is too large');
  if (status === 415) return sendAdminError(reply, 415, 'invalid_request', 'the request body must be JSON');
  if (status !== undefined && status >= 400 && status < 500) return sendAdminError(reply, status, 'invalid_request', 'malformed request');
  request.log.error({ err: error }, 'unexpected admin API error');
  return sendAdminError(reply, 500, 'unknown_error', 'the server could not handle the request');
}
