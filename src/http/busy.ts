import type { FastifyBaseLogger, FastifyReply } from 'fastify';
import { PasswordHashingBusy } from '../crypto/passwords.js';
import { isDatabaseBusy } from '../storage/dialects/errors.js';

/**
 * Whether `error` means the server cannot take the request now but may in a moment: the password-hashing
 * queue is full, or the database is busy (src/storage/dialects/errors.ts). If so, Retry-After is set on
 * `reply` (and a busy database logged) and the caller answers 503 in its own form: RFC 6749 JSON, an
 * error page, the admin API's error shape.
 */
export function busy(error: unknown, reply: FastifyReply, log: FastifyBaseLogger): boolean {
  const hashing = error instanceof PasswordHashingBusy;
  if (!hashing && !isDatabaseBusy(error)) return false;
  if (!hashing) log.warn({ err: error }, 'database busy');
  reply.header('retry-after', '2');
  return true;
}
