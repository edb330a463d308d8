import assert from 'node:assert/strict';
import { sql } from 'kysely';
import type { Db } from '../../src/storage/database.js';
import type { Store } from '../../src/storage/store.js';
import { tokenHash } from '../../src/crypto/random.js';

/** Where a refresh token a client holds stands in the database. */
export type HeldTokenState = 'missing' | 'current' | 'rotated' | 'revoked';

export async function heldTokenState(store: Store, token: string): Promise<HeldTokenState> {
  // The token is a JWT naming its chain (contract item 1); its state is the chain's row.
  const claims = JSON.parse(Buffer.from(token.split('.')[1] ?? '', 'base64url').toString('utf8')) as { chain: string };
  const state = await store.tokenState.refreshToken(tokenHash(token), claims.chain);
  if (!state) return 'missing';
  if (state.chain.revokedAt !== null) return 'revoked';
  return state.current ? 'current' : 'rotated';
}

/**
 * No half-written rows: a live chain holds its current token's hash and a generation of at least 1, and
 * has been rotated exactly when its generation passed 1; a used code names the chain its redemption
 * created, and that chain exists.
 */
export async function checkChainInvariants(db: Db, _dialect: 'sqlite' | 'postgres'): Promise<void> {
  const k = db.kysely;
  const badChains = await sql<{ id: string }>`
    SELECT id FROM refresh_chains WHERE revoked_at IS NULL
      AND (current_hash IS NULL OR generation < 1 OR (generation > 1) <> (rotated_at IS NOT NULL))`.execute(k);
  assert.deepEqual(badChains.rows, [], 'a live chain without its current token, or half rotated');
  const orphans = await sql<{ hash: string }>`
    SELECT a.hash FROM authorization_codes a LEFT JOIN refresh_chains c ON c.id = a.chain_id
    WHERE a.used_at IS NOT NULL AND c.id IS NULL`.execute(k);
  assert.deepEqual(orphans.rows, [], 'a used code without the chain it created');
  const revoked = await sql<{ n: number | string }>`SELECT count(*) AS n FROM refresh_chains WHERE revoked_at IS NOT NULL`.execute(k);
  assert.equal(Number(revoked.rows[0]!.n), 0, 'a chain was revoked: a client presented a token twice');
}
