const PER_WINDOW = 10;
const WINDOW_MS = 60_000;
const MAX_REALMS = 10_000;

/**
 * Failed client authentications come from anyone, so storing an audit row for each lets a flood fill
 * the database. Per realm, the first few of each minute are stored; the rest are only counted (in the
 * metrics, and as a count on the next stored row). The map of realms has a fixed bound, oldest out first.
 */
export class FailureSampler {
  private readonly windows = new Map<string, { start: number; stored: number; skipped: number }>();

  constructor(private readonly perWindow = PER_WINDOW) {}

  /** Whether to store this failure, and how many failures before it went unstored. */
  sample(realmId: string, nowMs: number): { store: boolean; skipped: number } {
    const w = this.windows.get(realmId);
    if (!w || nowMs - w.start >= WINDOW_MS) {
      this.windows.delete(realmId);
      if (this.windows.size >= MAX_REALMS) this.windows.delete(this.windows.keys().next().value!);
      this.windows.set(realmId, { start: nowMs, stored: 1, skipped: 0 });
      return { store: true, skipped: w ? w.skipped : 0 };
    }
    if (w.stored < this.perWindow) {
      w.stored++;
      const skipped = w.skipped;
      w.skipped = 0;
      return { store: true, skipped };
    }
    w.skipped++;
    return { store: false, skipped: 0 };
  }
}

/** What a stored failure says of the ones before it that were not stored ('' when none). */
export const notStored = (skipped: number): string => (skipped > 0 ? ` (${skipped} more not stored)` : '');
