import type { EventType } from '../storage/repos/events.js';

export interface EventCount {
  realmId: string;
  type: EventType;
  outcome: 'success' | 'failure';
  count: number;
}

/**
 * Every audit event is counted here, stored or not (a realm may store no successful refreshes), so that
 * metrics can export them: `snapshot()` at scrape time, or `onCount` for a push-style counter. In-process
 * and monotonic from the start of the process, as Prometheus counters are. The key space is bounded by
 * realms x event types x 2.
 */
export class EventCounter {
  private readonly counts = new Map<string, EventCount>();
  private readonly listeners: Array<(e: Omit<EventCount, 'count'>) => void> = [];

  count(realmId: string, type: EventType, outcome: 'success' | 'failure'): void {
    const key = `${realmId}\0${type}\0${outcome}`;
    const c = this.counts.get(key);
    if (c) c.count++;
    else this.counts.set(key, { realmId, type, outcome, count: 1 });
    for (const l of this.listeners) l({ realmId, type, outcome });
  }

  /** The count of one realm, type and outcome (0 when none happened). */
  get(realmId: string, type: EventType, outcome: 'success' | 'failure'): number {
    return this.counts.get(`${realmId}\0${type}\0${outcome}`)?.count ?? 0;
  }

  snapshot(): EventCount[] {
    return [...this.counts.values()].map((c) => ({ ...c }));
  }

  /** Called on every count (after the event's transaction committed, for the token grants). */
  onCount(listener: (e: Omit<EventCount, 'count'>) => void): void {
    this.listeners.push(listener);
  }
}
