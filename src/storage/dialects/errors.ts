/** Recognizes a unique-key violation from either driver (SQLite's SQLITE_CONSTRAINT_*, PostgreSQL's 23505). */
export function isUniqueViolation(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return code === '23505' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY' || code === 'SQLITE_CONSTRAINT_UNIQUE';
}

/**
 * PostgreSQL: no pooled connection came within the wait timeout (every one is in use, or the server is
 * slow to accept a new one). pg's own timeout error carries no SQLSTATE and says so only in its message,
 * so the pool's connect (dialects/postgres.ts) throws this instead.
 */
export class DatabaseWaitTimeout extends Error {}

/**
 * The database cannot take the request now, and may in a moment: SQLite's write lock held past the busy
 * timeout by another process (a long import, say), no PostgreSQL connection free within the wait timeout,
 * or PostgreSQL refusing for load (lock timeout, too many connections, starting up or shutting down).
 * The HTTP layer answers 503 with Retry-After instead of a 500.
 */
export function isDatabaseBusy(err: unknown): boolean {
  if (err instanceof DatabaseWaitTimeout) return true;
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code !== 'string') return false;
  return code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED') || BUSY_STATES.has(code);
}

/**
 * PostgreSQL's refusals for load or contention: lock_timeout (55P03), too many connections (53300), starting
 * up or shutting down (57P03), a statement canceled by a statement_timeout set on the role or by an operator
 * (57014), a deadlock or serialization failure rolled back (40P01, 40001): nothing was written.
 */
const BUSY_STATES = new Set(['55P03', '53300', '57P03', '57014', '40P01', '40001']);

/**
 * SQLSTATEs of a connection PostgreSQL ended or could not keep: the server shut down or restarted (57P01
 * admin_shutdown, 57P02 crash_shutdown), a connection exception (class 08), a transaction ended by
 * idle_in_transaction_session_timeout (25P03), a write refused by a read-only server (25006: a standby,
 * reached through an address a failover has not yet moved to the new primary). The next connection may
 * work: another node, the restarted server, the failover's new primary.
 */
const LOST_CONNECTION_STATES = new Set(['57P01', '57P02', '25P03', '08000', '08001', '08003', '08004', '08006', '08007', '25006']);

/** Socket errors on the way to the database (refused while it restarts, reset, unreachable, its name not resolving during a failover). */
const SOCKET_ERRORS = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN']);

/**
 * The database could not be reached, or the connection was lost during the request (PostgreSQL
 * restarted, failed over, ended the connection, or the network dropped it). Nothing is wrong with the
 * request: a connection opened a moment later may work, so the HTTP layer answers 503 with Retry-After,
 * as for a busy database, and the pool opens new connections by itself. pg reports a connection that
 * ended under it with a plain Error and no code, told apart only by its message.
 */
export function isDatabaseUnreachable(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code === 'string') return LOST_CONNECTION_STATES.has(code) || SOCKET_ERRORS.has(code);
  const message = (err as { message?: unknown } | null)?.message;
  // "Query read timeout": a statement past REALMGATE_DB_QUERY_TIMEOUT_MS, whose connection is closed (postgres.ts guardQueries).
  // pg-pool's "timeout exceeded when trying to connect" and pg's "timeout expired": a connection that
  // could not be opened in time.
  return (
    err instanceof Error &&
    typeof message === 'string' &&
    /^(Connection terminated|Client has encountered a connection error|Client was closed and is not queryable|Query read timeout$|timeout exceeded when trying to connect$|timeout expired$)/.test(message)
  );
}

/** Busy or unreachable: the request may succeed when tried again, and is answered 503 meanwhile. */
export function isDatabaseTransient(err: unknown): boolean {
  return isDatabaseBusy(err) || isDatabaseUnreachable(err);
}

/**
 * The database has no room to write: SQLite's file system is full (SQLITE_FULL), PostgreSQL's disk is
 * (53100). Nothing of the failed statement's transaction was written, reads still work, and writes work
 * again once space is freed: the request is answered 503, logged once per request as an error without a
 * stack trace (the operator has to act; thousands of stack traces would fill the disk further).
 */
export function isStorageFull(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return code === 'SQLITE_FULL' || code === '53100';
}

/** A database failure as a log line's fields: its code (SQLSTATE, SQLITE_*, a socket error) and message, no stack. */
export function failureFields(err: unknown): { code: unknown; reason: string } {
  return { code: (err as { code?: unknown } | null)?.code, reason: err instanceof Error ? err.message : String(err) };
}
