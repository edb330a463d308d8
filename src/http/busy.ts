import type { FastifyBaseLogger, FastifyReply } from 'fastify';
import { PasswordHashingBusy } from '../crypto/passwords.js';
import { isDatabaseBusy, isDatabaseUnreachable, isStorageFull } from '../storage/dialects/errors.js';

/**
 * Whether `error` means the server cannot take the request now but may in a moment: the password-hashing
 * queue is full, the database is busy, it cannot be reached (src/storage/dialects/errors.ts: restarted,
 * failing over, the connection lost), or its disk is full. If so, Retry-After is set on `reply` (and the database's state
 * logged) and the caller answers 503 in its own form: RFC 6749 JSON, an error page, the admin API's error shape.
 */
export function busy(error: unknown, reply: FastifyReply, log: FastifyBaseLogger): boolean {
  const hashing = error instanceof PasswordHashingBusy;
  const unreachable = !hashing && isDatabaseUnreachable(error);
  const full = !hashing && !unreachable && isStorageFull(error);
  if (!hashing && !unreachable && !full && !isDatabaseBusy(error)) return false;
  const cause = (): { code: unknown; reason: string } => ({ code: (error as { code?: unknown }).code, reason: (error as Error).message });
  if (full) log.error(cause(), 'the database has no room to write: free disk space');
  else if (unreachable) log.warn(cause(), 'database unreachable');
  else if (!hashing) log.warn({ err: error }, 'database busy');
  reply.header('retry-after', '2');
  return true;
}
