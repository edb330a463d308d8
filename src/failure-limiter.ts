/** Entries kept at most; a flood of new keys pushes out the oldest idle ones, never everything. */
const DEFAULT_MAX_KEYS = 50_000;
/** Oldest entries looked at per eviction, to spare a key that is currently blocked. */
const EVICTION_SCAN = 16;

/**
 * Counts failures per key (a client and address, a client) in a sliding window and says when a key must
 * wait. In memory, per process: enough to make guessing slow; a cluster shares nothing (documented).
 * Memory is bounded: past `maxKeys` the least recently failed key goes, skipping keys that are blocked
 * right now, so that a flood of new keys cannot wash out the one being guessed.
 */
export class FailureLimiter {
  private readonly failures = new Map<string, number[]>();

  constructor(
    private readonly max: number,
    private readonly windowMs: number,
    private readonly now: () => number = Date.now,
    private readonly maxKeys: number = DEFAULT_MAX_KEYS,
  ) {}

  /** Milliseconds until `key` may try again, 0 when it may try now. */
  blockedFor(key: string): number {
    const list = this.recent(key);
    if (list.length < this.max) return 0;
    return list[list.length - this.max]! + this.windowMs - this.now();
  }

  /** True when `key` failed within the window. */
  hasFailed(key: string): boolean {
    return this.recent(key).length > 0;
  }

  fail(key: string): void {
    const list = this.recent(key);
    list.push(this.now());
    if (list.length > this.max) list.splice(0, list.length - this.max);
    // Re-inserted at the end: the Map's order is the order of last failure.
    this.failures.delete(key);
    this.failures.set(key, list);
    while (this.failures.size > this.maxKeys) this.evictOne();
  }

  get size(): number {
    return this.failures.size;
  }

  private evictOne(): void {
    let scanned = 0;
    for (const key of this.failures.keys()) {
      if (scanned++ >= EVICTION_SCAN) break;
      if (this.blockedFor(key) <= 0) {
        this.failures.delete(key);
        return;
      }
      // Still blocked: moved behind the newest, so the next scan starts with other keys.
      const list = this.failures.get(key)!;
      this.failures.delete(key);
      this.failures.set(key, list);
    }
    // Everything scanned is blocked: the oldest goes (the bound holds whatever the traffic).
    const oldest = this.failures.keys().next();
    if (!oldest.done) this.failures.delete(oldest.value);
  }

  private recent(key: string): number[] {
    const list = this.failures.get(key);
    if (!list) return [];
    const since = this.now() - this.windowMs;
    let i = 0;
    while (i < list.length && list[i]! <= since) i++;
    if (i > 0) list.splice(0, i);
    if (list.length === 0) this.failures.delete(key);
    return list;
  }
}
