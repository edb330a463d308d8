import type { Store } from '../../storage/store.js';

/** Thrown when a new authorization request would pass a cap on unfinished ones; the page says which. */
export class InteractionLimitError extends Error {
  constructor(readonly scope: 'address' | 'server') {
    super(scope === 'address' ? 'too many unfinished sign-ins from this address' : 'too many unfinished sign-ins on this server');
  }
}

/** How long the server-wide count is reused before it is read again: counting a large table per request would cost more than the cap saves. */
const TOTAL_TTL_MS = 5_000;

/**
 * Caps on unfinished authorization requests (each is a row until it completes or expires): per client
 * address, and overall. A request past a cap is REFUSED rather than evicting the oldest pending one:
 * eviction would let a flood silently cancel real users' sign-ins in progress, while a refusal only
 * affects the flooding address (or, past the overall cap, new sign-ins until the collector catches up).
 */
export class InteractionCaps {
  private total: { n: number; at: number } | undefined;

  constructor(
    private readonly store: Store,
    private readonly perAddress: number,
    private readonly overall: number,
    private readonly nowMs: () => number,
  ) {}

  async check(ip: string, now: number): Promise<void> {
    if ((await this.store.interactions.countOpenFrom(ip, now, this.perAddress)) >= this.perAddress) throw new InteractionLimitError('address');
    const t = this.nowMs();
    if (!this.total || t - this.total.at > TOTAL_TTL_MS) this.total = { n: await this.store.interactions.countOpen(now), at: t };
    if (this.total.n >= this.overall) throw new InteractionLimitError('server');
    this.total.n++;
  }
}
