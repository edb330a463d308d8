import type { Kysely } from 'kysely';
import type { Database } from '../schema.js';

/**
 * Tables whose rows anonymous input creates and that stay pending until they finish or expire, each row
 * with the client address that created it (issue 11: bounded storage). `open`: how expires_at compares
 * with now while a row is pending.
 */
export type PendingTable = { table: 'interactions'; open: '>=' } | { table: 'device_codes'; open: '>' } | { table: 'pushed_authorization_requests'; open: '>' };

/** Pending rows of one address, counted up to `upTo` (a cap: no need to count further), or of every address. */
export async function countPending(db: Kysely<Database>, t: PendingTable, now: number, from?: { ip: string; upTo: number }): Promise<number> {
  const r = from
    ? await db
        .selectFrom((eb) => eb.selectFrom(t.table).select('expires_at').where('ip', '=', from.ip).where('expires_at', t.open, now).limit(from.upTo).as('pending'))
        .select((eb) => eb.fn.countAll<number | string>().as('n'))
        .executeTakeFirstOrThrow()
    : await db.selectFrom(t.table).select((eb) => eb.fn.countAll<number | string>().as('n')).where('expires_at', t.open, now).executeTakeFirstOrThrow();
  return Number(r.n);
}
