import type { Services } from '../services.js';
import type { Client } from '../storage/types.js';
import type { SessionClient } from '../storage/repos/session-admin.js';
import { realmBase } from '../services.js';
import { nowSeconds } from '../clock.js';
import { randomToken } from '../crypto/random.js';
import { isSigningAlg } from '../crypto/keystore.js';
import { metrics } from '../metrics.js';

/** Back-Channel Logout 1.0, 2.4: the event member of every logout token. */
export const BACKCHANNEL_LOGOUT_EVENT = 'http://schemas.openid.net/event/backchannel-logout';
/** Keycloak's extra event when the client has backchannel.logout.revoke.offline.tokens. */
export const REVOKE_OFFLINE_TOKENS_EVENT = 'http://schemas.openid.net/event/revoke-offline-tokens';
/** 2.4: "OPs are encouraged to use short expiration times in Logout Tokens, preferably at most two minutes". */
export const LOGOUT_TOKEN_LIFETIME = 120;

/** A logout delivery's end: a label of realmgate_backchannel_logout_total (a bounded set). */
export type DeliveryOutcome = 'success' | 'http_error' | 'redirect' | 'timeout' | 'network_error' | 'error' | 'dropped';

export interface BackchannelOptions {
  /** How long one POST may take, connection and answer (Keycloak's HTTP client has no shorter one). */
  timeoutMs: number;
  /** Deliveries in flight at once; more wait in a queue of at most `maxQueued`, beyond which they are dropped (logged). */
  concurrency: number;
  maxQueued: number;
}

interface Logger {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
}

const SILENT: Logger = { info: () => undefined, warn: () => undefined };

interface Delivery {
  realmId: string;
  client: Client;
  userId: string;
  /** Undefined when the client does not want sid (backchannel.logout.session.required false). */
  sessionId: string | undefined;
  /** Told once the delivery ends: answered 200/204, or not (failed, timed out, dropped). */
  done?: (ok: boolean) => void;
}

/**
 * OpenID Connect Back-Channel Logout 1.0: when a browser session ends, each client used in it that has a
 * back-channel logout URL gets a signed logout token POSTed there. Deliveries run after the logout has
 * been answered, in parallel and bounded: a slow or dead client never delays or fails a logout. Each
 * POST goes to the registered URL only (set by administrators), follows no redirect, reads no response
 * body, and ends within `timeoutMs`; it is tried once (as Keycloak does); failures are logged, recorded
 * as LOGOUT failure events and counted by outcome. At shutdown (`drain`) deliveries in flight finish or
 * are dropped, with a log line.
 */
export class BackchannelLogout {
  private log: Logger = SILENT;
  private readonly inFlight = new Map<Promise<void>, AbortController>();
  private readonly queue: Delivery[] = [];
  private closed = false;
  /** Logouts whose clients are being read (before their deliveries are queued). */
  private readonly planning = new Set<Promise<void>>();
  readonly options: BackchannelOptions;
  /** Deliveries answered 200/204, and the others (the CLI reports them). */
  readonly counts = { success: 0, failure: 0 };

  constructor(
    private readonly services: Pick<Services, 'store' | 'keys' | 'config' | 'clock' | 'audit'>,
    options: Partial<BackchannelOptions> = {},
  ) {
    this.options = { timeoutMs: 5000, concurrency: 16, maxQueued: 10_000, ...options };
  }

  useLogger(log: Logger): void {
    this.log = log;
  }

  /**
   * Tells the clients used in the ended sessions (those with a back-channel URL, enabled) that the user
   * logged out. Returns at once; the deliveries run in the background. `clients` may be given when the
   * caller has read them already.
   */
  notify(realmId: string, ended: SessionClient[], clients?: Map<string, Client>): void {
    if (ended.length === 0) return;
    const p = this.plan(realmId, ended, clients)
      .then(
        (deliveries) => {
          for (const d of deliveries) this.enqueue(d);
        },
        (err: unknown) => this.log.warn({ realm: realmId, err: errorText(err) }, 'back-channel logout: could not read the clients to tell'),
      )
      .finally(() => this.planning.delete(p));
    this.planning.add(p);
  }

  /**
   * As `notify`, and resolves with the back-channel URLs told, each a success when every delivery to it
   * was answered 200/204 within `withinMs` (Keycloak's GlobalRequestResult of a logout-all); deliveries
   * not ended by then count as failed (they still run to their own timeout).
   */
  async notifyAndReport(realmId: string, ended: SessionClient[], withinMs: number = this.options.timeoutMs + 1000): Promise<{ successRequests: string[]; failedRequests: string[] }> {
    if (ended.length === 0) return { successRequests: [], failedRequests: [] };
    let deliveries: Delivery[];
    const p = this.plan(realmId, ended);
    const planned = p.then(
      () => undefined,
      () => undefined,
    );
    this.planning.add(planned);
    try {
      deliveries = await p;
    } catch (err) {
      this.log.warn({ realm: realmId, err: errorText(err) }, 'back-channel logout: could not read the clients to tell');
      return { successRequests: [], failedRequests: [] };
    } finally {
      this.planning.delete(planned);
    }
    const byUrl = new Map<string, { total: number; ok: number }>();
    const ends = deliveries.map((d) => {
      const url = d.client.backchannelLogout.url!;
      const tally = byUrl.get(url) ?? byUrl.set(url, { total: 0, ok: 0 }).get(url)!;
      tally.total++;
      return new Promise<void>((resolve) => {
        d.done = (ok) => {
          if (ok) tally.ok++;
          resolve();
        };
        this.enqueue(d);
      });
    });
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([Promise.all(ends), new Promise<void>((r) => (timer = setTimeout(r, withinMs)))]);
    clearTimeout(timer);
    const urls = [...byUrl.entries()];
    return { successRequests: urls.filter(([, t]) => t.ok === t.total).map(([u]) => u), failedRequests: urls.filter(([, t]) => t.ok < t.total).map(([u]) => u) };
  }

  /** The deliveries of one logout: one per client and session, one per client and user when the client wants no sid. */
  private async plan(realmId: string, ended: SessionClient[], known?: Map<string, Client>): Promise<Delivery[]> {
    const clients = new Map<string, Client | undefined>(known);
    const out = new Map<string, Delivery>();
    for (const e of ended) {
      if (!clients.has(e.clientId)) clients.set(e.clientId, await this.services.store.clients.get(realmId, e.clientId));
      const client = clients.get(e.clientId);
      if (!client || !client.enabled || client.backchannelLogout.url === null) continue;
      const sessionId = client.backchannelLogout.sessionRequired ? e.sessionId : undefined;
      out.set(`${client.clientId}\0${e.userId}\0${sessionId ?? ''}`, { realmId, client, userId: e.userId, sessionId });
    }
    return [...out.values()];
  }

  private enqueue(d: Delivery): void {
    if (this.closed) return this.dropped(d, 'the server is shutting down');
    if (this.queue.length >= this.options.maxQueued) return this.dropped(d, 'too many deliveries waiting');
    this.queue.push(d);
    this.pump();
  }

  private pump(): void {
    while (this.inFlight.size < this.options.concurrency && this.queue.length > 0) {
      const abort = new AbortController();
      const p = this.deliver(this.queue.shift()!, abort).finally(() => {
        this.inFlight.delete(p);
        this.pump();
      });
      this.inFlight.set(p, abort);
    }
  }

  /** The logout token (2.4): signed like the client's ID tokens, typ logout+jwt, never a nonce. */
  async logoutToken(d: Pick<Delivery, 'realmId' | 'client' | 'userId' | 'sessionId'>): Promise<string> {
    const now = nowSeconds(this.services.clock);
    const claims: Record<string, unknown> = {
      iss: realmBase(this.services.config, d.realmId),
      sub: d.userId,
      aud: d.client.clientId,
      iat: now,
      exp: now + LOGOUT_TOKEN_LIFETIME,
      jti: randomToken(16),
      events: { [BACKCHANNEL_LOGOUT_EVENT]: {}, ...(d.client.backchannelLogout.revokeOfflineTokens ? { [REVOKE_OFFLINE_TOKENS_EVENT]: true } : {}) },
      ...(d.sessionId !== undefined ? { sid: d.sessionId } : {}),
    };
    // The same key and algorithm as the client's ID tokens, whose signature the client already checks.
    const alg = isSigningAlg(d.client.idTokenAlg) ? d.client.idTokenAlg : 'RS256';
    return this.services.keys.sign(d.realmId, claims, alg, { typ: 'logout+jwt' });
  }

  private async deliver(d: Delivery, abort: AbortController): Promise<void> {
    const url = d.client.backchannelLogout.url!;
    const timer = setTimeout(() => abort.abort(new DeliveryTimeout()), this.options.timeoutMs);
    let outcome: DeliveryOutcome;
    let detail: string | undefined;
    try {
      const token = await this.logoutToken(d);
      // 2.5: an HTTP POST of the form-encoded logout_token, to the URL the administrator registered.
      const res = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', accept: '*/*', 'cache-control': 'no-store' },
        body: new URLSearchParams({ logout_token: token }).toString(),
        redirect: 'manual',
        signal: abort.signal,
      });
      // The answer's status is all that counts (2.8: 200 or 204): the body is never read.
      await res.body?.cancel().catch(() => undefined);
      if (res.status === 200 || res.status === 204) outcome = 'success';
      else if (res.status >= 300 && res.status < 400) (outcome = 'redirect'), (detail = `answered ${res.status}, a redirect (not followed)`);
      else (outcome = 'http_error'), (detail = `answered ${res.status}`);
    } catch (err) {
      if (abort.signal.aborted && abort.signal.reason instanceof DeliveryTimeout) (outcome = 'timeout'), (detail = `no answer within ${this.options.timeoutMs} ms`);
      else if (abort.signal.aborted) (outcome = 'dropped'), (detail = 'the server shut down before it was answered');
      else if (err instanceof TypeError) (outcome = 'network_error'), (detail = errorText(err));
      else (outcome = 'error'), (detail = errorText(err));
    } finally {
      clearTimeout(timer);
    }
    metrics.backchannelLogouts.inc({ outcome });
    this.counts[outcome === 'success' ? 'success' : 'failure']++;
    d.done?.(outcome === 'success');
    if (outcome === 'success') return;
    const fields = { realm: d.realmId, client: d.client.clientId, outcome, detail, host: hostOf(url) };
    if (outcome === 'dropped') this.log.warn(fields, 'back-channel logout dropped at shutdown');
    else this.log.warn(fields, 'back-channel logout failed');
    await this.services.audit.record({
      realmId: d.realmId,
      type: 'LOGOUT',
      outcome: 'failure',
      clientId: d.client.clientId,
      userId: d.userId,
      ip: null,
      reason: `back-channel logout not delivered: ${detail}`,
    });
  }

  private dropped(d: Delivery, why: string): void {
    d.done?.(false);
    metrics.backchannelLogouts.inc({ outcome: 'dropped' });
    this.log.warn({ realm: d.realmId, client: d.client.clientId, outcome: 'dropped', detail: why }, 'back-channel logout dropped');
  }

  /** Deliveries queued or in flight (tests, shutdown). */
  get pending(): number {
    return this.planning.size + this.inFlight.size + this.queue.length;
  }

  /** Resolves when nothing is being planned, queued or in flight (tests wait on it). */
  async settled(): Promise<void> {
    while (this.pending > 0) await Promise.allSettled([...this.planning, ...this.inFlight.keys()]);
  }

  /**
   * Graceful shutdown: no new deliveries; those queued or in flight get until `withinMs` to finish (each
   * is bounded by its own timeout anyway), then the rest are aborted and dropped, each with a log line.
   */
  async drain(withinMs: number = this.options.timeoutMs): Promise<void> {
    this.closed = true;
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<void>((resolve) => (timer = setTimeout(resolve, withinMs)));
    await Promise.race([this.settled(), deadline]);
    clearTimeout(timer);
    if (this.pending === 0) return;
    // Deliveries still planned are dropped when they are queued (closed); the queued ones now.
    for (const d of this.queue.splice(0)) this.dropped(d, 'the server shut down before it was sent');
    for (const abort of this.inFlight.values()) abort.abort(new Error('shutdown'));
    await Promise.allSettled([...this.inFlight.keys()]);
  }
}

class DeliveryTimeout extends Error {}

function hostOf(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return '';
  }
}

function errorText(err: unknown): string {
  const e = err as { message?: unknown; cause?: { code?: unknown; message?: unknown } } | undefined;
  const cause = e?.cause?.code ?? e?.cause?.message;
  return `${typeof e?.message === 'string' ? e.message : String(err)}${cause !== undefined ? ` (${String(cause)})` : ''}`.slice(0, 200);
}
