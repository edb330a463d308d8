import assert from 'node:assert/strict';
import { sql } from 'kysely';
import type { Db } from '../../src/storage/database.js';
import type { Store } from '../../src/storage/store.js';
import { tokenHash } from '../../src/crypto/random.js';

/** Where a refresh token a client holds stands in the database. */
export type HeldTokenState = 'missing' | 'current' | 'rotated' | 'revoked';

export async function heldTokenState(store: Store, token: string): Promise<HeldTokenState> {
  const state = await store.tokenState.refreshToken(tokenHash(token));
  if (!state) return 'missing';
  if (state.chain.revokedAt !== null) return 'revoked';
  return state.token.usedAt === null ? 'current' : 'rotated';
}

/**
 * No half-written rows: a live chain has exactly one current (unused) token, whatever was cut off; a
 * used code names the chain its redemption created, and that chain exists.
 */
export async function checkChainInvariants(db: Db, _dialect: 'sqlite' | 'postgres'): Promise<void> {
  const k = db.kysely;
  const badChains = await sql<{ id: string; current: number | string }>`
    SELECT c.id, (SELECT count(*) FROM refresh_tokens t WHERE t.chain_id = c.id AND t.used_at IS NULL) AS current
    FROM refresh_chains c WHERE c.revoked_at IS NULL`.execute(k);
  const wrong = badChains.rows.filter((r) => Number(r.current) !== 1);
  assert.deepEqual(wrong, [], 'a live chain without exactly one current token');
  const orphans = await sql<{ hash: string }>`
    SELECT a.hash FROM authorization_codes a LEFT JOIN refresh_chains c ON c.id = a.chain_id
    WHERE a.used_at IS NOT NULL AND c.id IS NULL`.execute(k);
  assert.deepEqual(orphans.rows, [], 'a used code without the chain it created');
  const revoked = await sql<{ n: number | string }>`SELECT count(*) AS n FROM refresh_chains WHERE revoked_at IS NOT NULL`.execute(k);
  assert.equal(Number(revoked.rows[0]!.n), 0, 'a chain was revoked: a client presented a token twice');
}
