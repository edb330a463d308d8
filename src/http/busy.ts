import type { FastifyBaseLogger, FastifyReply } from 'fastify';
import { PasswordHashingBusy } from '../crypto/passwords.js';
import { isDatabaseBusy, isDatabaseUnreachable } from '../storage/dialects/errors.js';

/**
 * Whether `error` means the server cannot take the request now but may in a moment: the password-hashing
 * queue is full, the database is busy, or it cannot be reached (src/storage/dialects/errors.ts: restarted,
 * failing over, the connection lost). If so, Retry-After is set on `reply` (and the database's state
 * logged) and the caller answers 503 in its own form: RFC 6749 JSON, an error page, the admin API's error shape.
 */
export function busy(error: unknown, reply: FastifyReply, log: FastifyBaseLogger): boolean {
  const hashing = error instanceof PasswordHashingBusy;
  const unreachable = !hashing && isDatabaseUnreachable(error);
  if (!hashing && !unreachable && !isDatabaseBusy(error)) return false;
  if (unreachable) log.warn({ code: (error as { code?: unknown }).code, reason: (error as Error).message }, 'database unreachable');
  else if (!hashing) log.warn({ err: error }, 'database busy');
  reply.header('retry-after', '2');
  return true;
}
