import { setImmediate as yieldToEventLoop } from 'node:timers/promises';
import type { Clock } from './clock.js';
import { nowSeconds } from './clock.js';
import type { Store } from './storage/store.js';
import { randomToken } from './crypto/random.js';
import { metrics, secondsSince } from './metrics.js';

/** Rows per slice: one short statement pair, so a run never holds the database for long. */
const SLICE = 500;
/** Slices per table per run: a run's work is bounded; a backlog is worked off over several runs. */
const MAX_SLICES = 200;
/** Codes and device codes that issued tokens stay a day past expiry, so that a late reuse is still recognised and logged. */
const CODE_GRACE = 86_400;
/**
 * A device code that issued nothing stays ten minutes past expiry (a device polling late is still told
 * expired_token, RFC 8628 3.5), then goes: with the cap on pending ones, the table stays near that cap.
 */
const UNUSED_DEVICE_CODE_GRACE = 600;
/** Dead chains and sessions stay a day, for the same reason (a token of a revoked chain is a reuse). */
const CHAIN_GRACE = 86_400;
/**
 * An expired organization invitation stays listed (Keycloak's status EXPIRED, so the administrator sees it
 * and may resend it) for 30 days past its expiry, then goes.
 */
export const EXPIRED_INVITATION_GRACE = 30 * 86_400;
const LEASE = 'collector';

export interface CollectorOptions {
  store: Store;
  clock: Clock;
  intervalSeconds: number;
  eventsRetentionDays: number;
  /** Retention of events and of admin events, each unless the realm sets its own. */
  adminEventsRetentionDays: number;
  onError?: (err: unknown) => void;
}

export interface CollectorRun {
  ran: boolean;
  deleted: Record<string, number>;
}

/**
 * Deletes what nobody needs any more: expired interactions, codes, device codes, pushed authorization
 * requests, access-token revocations, used client assertion ids, dead sessions and refresh chains, stale login counters, and events and admin events past
 * their realm's retention. Runs on a timer, never on the request path; one node at a time holds the `collector` lease
 * (a row with an expiry) and renews it at every run, so that another node takes over only when it stops.
 * The lease is no lock held across a run: each statement takes its rows' locks for a moment, so the
 * database's wait timeout (PostgreSQL's lock_timeout) does not get in its way; a run that finds a row
 * locked by another transaction for longer fails as busy, and the next tick tries again.
 */
export class Collector {
  private readonly holder = randomToken(12);
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<CollectorRun> | undefined;

  constructor(private readonly opts: CollectorOptions) {}

  start(): void {
    if (this.opts.intervalSeconds <= 0 || this.timer) return;
    this.timer = setInterval(() => void this.runOnce().catch((err) => this.opts.onError?.(err)), this.opts.intervalSeconds * 1000);
    this.timer.unref();
  }

  /** Stops the timer, waits for a run in progress, and gives the lease up so another node may take over. */
  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    await this.running?.catch(() => undefined);
    await this.opts.store.leases.release(LEASE, this.holder).catch(() => undefined);
  }

  /** One run (or none, when another node holds the lease or a run is still going). */
  runOnce(): Promise<CollectorRun> {
    if (this.running) return Promise.resolve({ ran: false, deleted: {} });
    this.running = this.run().finally(() => {
      this.running = undefined;
    });
    return this.running;
  }

  private async run(): Promise<CollectorRun> {
    const { store, clock } = this.opts;
    const now = nowSeconds(clock);
    // The lease outlives a missed tick or two, so a slow run is not taken over mid-way.
    const leaseFor = Math.max(3 * this.opts.intervalSeconds, 60);
    if (!(await store.leases.acquire(LEASE, this.holder, now, now + leaseFor))) {
      metrics.collectorRuns.inc({ outcome: 'skipped' });
      return { ran: false, deleted: {} };
    }
    const start = process.hrtime.bigint();
    const c = store.collector;
    const tasks: Array<[string, (limit: number) => Promise<number>]> = [
      ['interactions', (n) => c.expiredInteractions(now, n)],
      ['authorization_codes', (n) => c.expiredCodes(now - CODE_GRACE, n)],
      ['device_codes', (n) => c.expiredDeviceCodes(now - UNUSED_DEVICE_CODE_GRACE, now - CODE_GRACE, n)],
      // A request_uri is useless once expired (RFC 9126 4: an expired one MUST be rejected): no grace.
      ['pushed_authorization_requests', (n) => c.expiredPushedRequests(now, n)],
      // An initial access token past its expiry registers nothing (RFC 7591 3); 0 never expires.
      ['client_initial_access', (n) => store.clientRegistration.deleteExpiredInitialAccess(now, n)],
      // A WebAuthn challenge is refused once expired anyway; its row is only a leftover of an abandoned page.
      ['webauthn_challenges', (n) => store.webauthn.deleteExpiredChallenges(now, n)],
      ['revoked_access_tokens', (n) => c.expiredRevocations(now, n)],
      ['client_assertion_jtis', (n) => c.expiredUsedIds('client_assertion_jtis', now, n)],
      ['dpop_proof_jtis', (n) => c.expiredUsedIds('dpop_proof_jtis', now, n)],
      ['refresh_chains', (n) => c.deadChains(now - CHAIN_GRACE, n)],
      ['browser_sessions', (n) => c.deadSessions(now - CHAIN_GRACE, n)],
      ['organization_invitations', (n) => store.invitations.deleteExpired(now - EXPIRED_INVITATION_GRACE, n)],
      ['login_failures', (n) => c.staleLoginFailures(now - 86_400, n)],
      ['events', (n) => c.oldEvents(now, this.opts.eventsRetentionDays * 86_400, n)],
      ['admin_events', (n) => c.oldAdminEvents(now, this.opts.adminEventsRetentionDays * 86_400, n)],
    ];
    const deleted: Record<string, number> = {};
    try {
      for (const [table, task] of tasks) {
        let total = 0;
        for (let i = 0; i < MAX_SLICES; i++) {
          const n = await task(SLICE);
          total += n;
          if (n < SLICE) break;
          // Requests of this node go between two slices.
          await yieldToEventLoop();
        }
        deleted[table] = total;
        if (total > 0) metrics.collectorDeleted.inc({ table }, total);
      }
    } catch (err) {
      metrics.collectorRuns.inc({ outcome: 'error' });
      throw err;
    }
    metrics.collectorRuns.inc({ outcome: 'ran' });
    metrics.collectorLastRun.set(Date.now() / 1000);
    metrics.collectorDuration.observe(secondsSince(start));
    return { ran: true, deleted };
  }
}
