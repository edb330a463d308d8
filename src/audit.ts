import type { Clock } from './clock.js';
import { nowSeconds } from './clock.js';
import { sortableId } from './crypto/random.js';
import type { Store } from './storage/store.js';
import type { AuditEvent } from './storage/repos/events.js';
import { EventCounter } from './events/counter.js';
import { isEventStored } from './events/stored-types.js';
import { FailureSampler, notStored } from './oauth/failure-sampling.js';

export interface AuditOptions {
  onError?: (err: unknown) => void;
  /** Every event is counted here, stored or not. */
  counter?: EventCounter;
  /** The realm's optional event types to store (cached); undefined: the defaults. */
  storedEventTypes?: (realmId: string) => Promise<readonly string[] | undefined>;
}

/**
 * Records audit events outside the token transactions (logins, consents, revocations, failures).
 * A failure to record is logged and never fails the user's request.
 */
export class Audit {
  readonly counter: EventCounter;
  private readonly onError: (err: unknown) => void;
  private readonly storedEventTypes: (realmId: string) => Promise<readonly string[] | undefined>;
  /** Failures anyone can cause, sampled per realm and event type (record's `anonymous`). */
  private readonly anonymous = new FailureSampler();

  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
    opts: AuditOptions = {},
  ) {
    this.counter = opts.counter ?? new EventCounter();
    this.onError = opts.onError ?? (() => undefined);
    this.storedEventTypes = opts.storedEventTypes ?? (async () => undefined);
  }

  /**
   * `anonymous`: a failure anyone can cause as often as they like (a made-up link, a sign-in refused
   * without a password check, an unknown username): counted always, but only the first 10 of each minute
   * per realm and type are stored; the next stored one says how many were not. A flood cannot fill the
   * events table (issue 11).
   */
  async record(e: AuditEvent, o: { anonymous?: boolean } = {}): Promise<void> {
    // Attempted usernames and client ids come from the request: bounded before they are stored.
    const cut = (v: string | null | undefined, n: number): string | null => (v == null ? null : v.replace(/\0/g, '').slice(0, n));
    try {
      this.counter.count(e.realmId, e.type, e.outcome);
      if (!isEventStored(await this.storedEventTypes(e.realmId), e.type, e.outcome)) return;
      if (o.anonymous) {
        const sample = this.anonymous.sample(`${e.realmId}\0${e.type}`, this.clock.nowMs());
        if (!sample.store) return;
        if (sample.skipped > 0) e = { ...e, reason: `${e.reason ?? ''}${notStored(sample.skipped)}` };
      }
      // An event about a known user names them (the events list's username, Keycloak's details.username):
      // read here when the caller has not read the user itself (a consent, a code, a logout, a revocation).
      const username = e.username !== undefined || !e.userId ? e.username : await this.store.users.usernameOf(e.realmId, e.userId);
      await this.store.events.record({
        ...e,
        clientId: cut(e.clientId, 255),
        username: cut(username, 255),
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
