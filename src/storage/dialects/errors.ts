/** Recognizes a unique-key violation from either driver (SQLite's SQLITE_CONSTRAINT_*, PostgreSQL's 23505). */
export function isUniqueViolation(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return code === '23505' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY' || code === 'SQLITE_CONSTRAINT_UNIQUE';
}

/**
 * The database cannot take the request now, and may in a moment: SQLite's write lock held past the busy
 * timeout by another process (a long import, say), or PostgreSQL refusing for load (lock timeout,
 * too many connections, starting up or shutting down). The HTTP layer answers 503 with Retry-After
 * instead of a 500.
 */
export function isDatabaseBusy(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code !== 'string') return false;
  return code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED') || code === '55P03' || code === '53300' || code === '57P03';
}
