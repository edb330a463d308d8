import type { Clock } from './clock.js';
import { nowSeconds } from './clock.js';
import { sortableId } from './crypto/random.js';
import type { Store } from './storage/store.js';
import type { AuditEvent } from './storage/repos/events.js';

/**
 * Records audit events outside the token transactions (logins, consents, revocations, failures).
 * A failure to record is logged and never fails the user's request.
 */
export class Audit {
  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
    private readonly onError: (err: unknown) => void = () => undefined,
  ) {}

  async record(e: AuditEvent): Promise<void> {
    // Attempted usernames and client ids come from the request: bounded before they are stored.
    const cut = (v: string | null | undefined, n: number): string | null => (v == null ? null : v.replace(/\0/g, '').slice(0, n));
    try {
      await this.store.events.record({
        ...e,
        clientId: cut(e.clientId, 255),
        username: cut(e.username, 255),
        ip: cut(e.ip, 64),
        reason: cut(e.reason, 500),
        id: sortableId(),
        time: nowSeconds(this.clock),
      });
    } catch (err) {
      this.onError(err);
    }
  }
}
