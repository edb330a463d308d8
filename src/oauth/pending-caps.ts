/** Which cap a new pending row would pass: its client address's, or the server's. */
export type CapScope = 'address' | 'server';

/** Rows that stay pending until they finish or expire, counted as of `now` (seconds). */
export interface PendingRows {
  /** Pending rows created from one address, counted up to `upTo`. */
  countPendingFrom(ip: string, now: number, upTo: number): Promise<number>;
  countPending(now: number): Promise<number>;
}

/** How long the server-wide count is reused before it is read again: counting a large table per request would cost more than the cap saves. */
const TOTAL_TTL_MS = 5_000;

/**
 * Caps on rows that anonymous requests create and that stay until they finish or expire (issue 11:
 * bounded storage): per client address, and overall. Each kind of row has its own caps (one instance
 * each). A request past a cap is REFUSED rather than evicting the oldest pending row: eviction would let
 * a flood silently cancel real users' requests in progress, while a refusal only affects the flooding
 * address (or, past the overall cap, new requests until some finish or expire).
 */
export class PendingCaps {
  private total: { n: number; at: number } | undefined;

  constructor(
    private readonly rows: PendingRows,
    private readonly perAddress: number,
    private readonly overall: number,
    private readonly nowMs: () => number,
  ) {}

  /**
   * The cap a new row would pass, or undefined, and then the row is counted towards the overall cap.
   * `ip` undefined: no cap per address (the caller is an authenticated client).
   */
  async exceeded(ip: string | undefined, now: number): Promise<CapScope | undefined> {
    if (ip !== undefined && (await this.rows.countPendingFrom(ip, now, this.perAddress)) >= this.perAddress) return 'address';
    const t = this.nowMs();
    if (!this.total || t - this.total.at > TOTAL_TTL_MS) this.total = { n: await this.rows.countPending(now), at: t };
    if (this.total.n >= this.overall) return 'server';
    this.total.n++;
    return undefined;
  }
}
