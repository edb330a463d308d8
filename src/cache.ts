/**
 * A small time-bounded cache for configuration read on hot paths (realms, clients, scopes, keys).
 * Other processes (the CLI, other servers) change the database directly, so entries expire after
 * `ttlMs`; misses are not cached, so a newly created client works at once. Concurrent loads of one key
 * share a single query. Past `maxEntries` the oldest entry goes (never all at once: a flood of new keys
 * must not turn every hot lookup into a query).
 */
export class TtlCache<V> {
  private readonly entries = new Map<string, { value: V; until: number }>();
  private readonly loading = new Map<string, Promise<V | undefined>>();

  constructor(
    private readonly ttlMs: number,
    private readonly maxEntries = 10_000,
    private readonly nowMs: () => number = Date.now,
  ) {}

  async get(key: string, load: () => Promise<V | undefined>): Promise<V | undefined> {
    const hit = this.entries.get(key);
    const now = this.nowMs();
    if (hit && hit.until > now) return hit.value;
    let p = this.loading.get(key);
    if (!p) {
      p = load().finally(() => this.loading.delete(key));
      this.loading.set(key, p);
    }
    const value = await p;
    if (value !== undefined && this.ttlMs > 0) {
      this.entries.delete(key);
      if (this.entries.size >= this.maxEntries) this.entries.delete(this.entries.keys().next().value!);
      this.entries.set(key, { value, until: now + this.ttlMs });
    } else {
      this.entries.delete(key);
    }
    return value;
  }

  clear(): void {
    this.entries.clear();
  }
}
