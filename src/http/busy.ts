import type { FastifyBaseLogger, FastifyReply } from 'fastify';
import { PasswordHashingBusy } from '../crypto/passwords.js';
import { failureFields, isDatabaseBusy, isDatabaseUnreachable, isStorageFull } from '../storage/dialects/errors.js';

/**
 * Whether `error` means the server cannot take the request now but may in a moment: the password-hashing
 * queue is full, the database is busy, it cannot be reached (src/storage/dialects/errors.ts: restarted,
 * failing over, the connection lost), or its disk is full. If so, Retry-After is set on `reply` (and the database's state
 * logged) and the caller answers 503 in its own form: RFC 6749 JSON, an error page, the admin API's error shape.
 */
export function busy(error: unknown, reply: FastifyReply, log: FastifyBaseLogger): boolean {
  // An error Fastify raised about the request itself is never the database's: a client that goes away
  // while sending its body is Node's 'aborted' with code ECONNRESET (and status 400), which would
  // otherwise read as a lost database connection and log 'database unreachable' at anyone's will.
  const status = (error as { statusCode?: unknown } | null)?.statusCode;
  if (typeof status === 'number' && status >= 400 && status < 500) return false;
  if (error instanceof PasswordHashingBusy) {
    // Not logged: the hashing queue is full by design under a login flood.
  } else if (isDatabaseUnreachable(error)) log.warn(failureFields(error), 'database unreachable');
  else if (isStorageFull(error)) log.error(failureFields(error), 'the database has no room to write: free disk space');
  else if (isDatabaseBusy(error)) log.warn({ err: error }, 'database busy');
  else return false;
  reply.header('retry-after', '2');
  return true;
}
