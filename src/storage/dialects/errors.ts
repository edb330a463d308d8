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
  return code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED') || code === '55P03' || code === '53300' || code === '57P03';
}
