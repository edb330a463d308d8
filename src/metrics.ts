import type { Counter, Gauge, Histogram, MetricObjectWithValues, MetricValue, Registry } from 'prom-client';

/**
 * Prometheus metrics of this process, in one registry of its own. Served at /metrics on the management
 * port (REALMGATE_METRICS_PORT); with --workers the primary process aggregates every worker's registry.
 * Label values are bounded sets (route patterns, grant types, outcomes), never request data.
 *
 * prom-client is loaded after start (src/server.ts, once listening) or by the first metric recorded, not
 * while the server starts: its loading took some 40 ms of every start. What is recorded before it has
 * loaded is kept, in order, and applied once it has (within milliseconds).
 */
type PromClient = typeof import('prom-client');

let client: PromClient | undefined;
let loading: Promise<PromClient> | undefined;
let pending: (() => void)[] = [];
const makers: ((pc: PromClient) => void)[] = [];

/** Loads prom-client, makes the registry and every metric, and applies what was recorded meanwhile. */
export function loadMetrics(): Promise<PromClient> {
  loading ??= import('prom-client').then((pc) => {
    client = pc;
    for (const make of makers) make(pc);
    const queued = pending;
    pending = [];
    for (const op of queued) op();
    return pc;
  });
  return loading;
}

/** Runs `op` now when prom-client is loaded, else once it is. */
function record(op: () => void): void {
  if (client) return op();
  pending.push(op);
  void loadMetrics();
}

let realRegistry: Registry | undefined;
makers.push((pc) => {
  realRegistry = new pc.Registry();
});

/** This process's registry, once prom-client is loaded. */
export async function promRegistry(): Promise<Registry> {
  await loadMetrics();
  return realRegistry!;
}

export const registry = {
  /** The exposition text of every metric of this process. */
  async metrics(): Promise<string> {
    return (await promRegistry()).metrics();
  },
  /** The Content-Type of `metrics()` (Prometheus text format 0.0.4). */
  get contentType(): string {
    return realRegistry?.contentType ?? 'text/plain; version=0.0.4; charset=utf-8';
  },
};

let defaultsOn = false;
/** Node's own metrics (event-loop lag, heap, GC, CPU), collected only when a metrics port is served. */
export function collectProcessMetrics(): void {
  if (defaultsOn) return;
  defaultsOn = true;
  record(() => client!.collectDefaultMetrics({ register: realRegistry!, eventLoopMonitoringPrecision: 20 }));
}

interface PoolCounts {
  totalCount: number;
  idleCount: number;
  waitingCount: number;
}
let observedPool: PoolCounts | undefined;
/** The PostgreSQL pool whose connection counts are reported (the last one opened in this process). */
export function observePool(pool: PoolCounts): void {
  observedPool = pool;
}

type Labels = Record<string, string>;

/** A metric whose prom-client object is made when prom-client loads; recording never waits for it. */
class LazyMetric<M extends Counter | Gauge | Histogram> {
  protected real: M | undefined;
  constructor(make: (pc: PromClient, registers: Registry[]) => M) {
    makers.push((pc) => {
      this.real = make(pc, [realRegistry!]);
    });
  }

  /** The current values (loads prom-client if needed). */
  async get(): Promise<MetricObjectWithValues<MetricValue<string>>> {
    await loadMetrics();
    return (await this.real!.get()) as MetricObjectWithValues<MetricValue<string>>;
  }
}

// Once prom-client is loaded each call goes straight to it: no closure per request on the hot path.
class LazyCounter extends LazyMetric<Counter> {
  inc(labels?: Labels, value?: number): void {
    const real = this.real;
    if (real) labels ? real.inc(labels, value) : real.inc(value);
    else record(() => (labels ? this.real!.inc(labels, value) : this.real!.inc(value)));
  }
}

class LazyGauge extends LazyMetric<Gauge> {
  set(value: number): void {
    if (this.real) this.real.set(value);
    else record(() => this.real!.set(value));
  }
}

class LazyHistogram extends LazyMetric<Histogram> {
  observe(labels: Labels | number, value?: number): void {
    const real = this.real;
    if (real) typeof labels === 'number' ? real.observe(labels) : real.observe(labels, value!);
    else record(() => (typeof labels === 'number' ? this.real!.observe(labels) : this.real!.observe(labels, value!)));
  }
}

const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5];

export const metrics = {
  requestDuration: new LazyHistogram(
    (pc, registers) =>
      new pc.Histogram({
        name: 'realmgate_http_request_duration_seconds',
        // Its _count is the number of requests by route and status: no separate counter on the hot path.
        help: 'HTTP request latency (and, as _count, requests) by route pattern, method and status.',
        labelNames: ['route', 'method', 'status'],
        buckets: LATENCY_BUCKETS,
        registers,
      }),
  ),
  grants: new LazyCounter((pc, registers) => new pc.Counter({ name: 'realmgate_grants_total', help: 'Token requests by grant type and outcome (success or the RFC 6749 error code).', labelNames: ['grant_type', 'outcome'], registers })),
  reuse: new LazyCounter((pc, registers) => new pc.Counter({ name: 'realmgate_reuse_detections_total', help: 'Codes, device codes and refresh tokens presented again (each revokes its chain).', labelNames: ['kind'], registers })),
  lockouts: new LazyCounter((pc, registers) => new pc.Counter({ name: 'realmgate_lockouts_total', help: 'Login lockouts by what was locked (user, ip, dev).', labelNames: ['subject'], registers })),
  previousSecretUsed: new LazyCounter((pc, registers) => new pc.Counter({ name: 'realmgate_client_previous_secret_used_total', help: 'Client authentications with the previous secret that a rotation kept valid: a client still counting here is not yet on its new secret.', labelNames: ['realm', 'client'], registers })),
  clientAuthFailures: new LazyCounter((pc, registers) => new pc.Counter({ name: 'realmgate_client_auth_failures_total', help: 'Failed client authentications at the token endpoints (all of them; only a sample is stored as audit events).', registers })),
  transactions: new LazyHistogram((pc, registers) => new pc.Histogram({ name: 'realmgate_db_token_transaction_seconds', help: 'Duration of the hot token transactions (code exchange, refresh), commit included.', buckets: LATENCY_BUCKETS, registers })),
  batchSize: new LazyHistogram((pc, registers) => new pc.Histogram({ name: 'realmgate_sqlite_group_commit_batch_size', help: 'Token transactions sharing one SQLite commit.', buckets: [1, 2, 4, 8, 16, 32, 64, 128, 256], registers })),
  pgBatchSize: new LazyHistogram((pc, registers) => new pc.Histogram({ name: 'realmgate_postgres_refresh_batch_size', help: 'Refresh rotations sharing one PostgreSQL statement and commit.', buckets: [1, 2, 4, 8, 16, 32, 64], registers })),
  dbConnectionErrors: new LazyCounter((pc, registers) => new pc.Counter({ name: 'realmgate_db_connection_errors_total', help: 'PostgreSQL connections the database or the network ended (restart, failover, reset); each is replaced when next needed.', registers })),
  pool: new LazyGauge(
    (pc, registers) =>
      new pc.Gauge({
        name: 'realmgate_db_pool_connections',
        help: 'PostgreSQL pool connections by state (total, idle, waiting clients).',
        labelNames: ['state'],
        registers,
        collect(): void {
          if (!observedPool) return;
          this.set({ state: 'total' }, observedPool.totalCount);
          this.set({ state: 'idle' }, observedPool.idleCount);
          this.set({ state: 'waiting' }, observedPool.waitingCount);
        },
      }),
  ),
  backchannelLogouts: new LazyCounter((pc, registers) => new pc.Counter({ name: 'realmgate_backchannel_logout_total', help: 'Back-channel logout tokens POSTed to clients, by outcome (success, http_error, redirect, timeout, network_error, error, dropped).', labelNames: ['outcome'], registers })),
  collectorDeleted: new LazyCounter((pc, registers) => new pc.Counter({ name: 'realmgate_collector_deleted_rows_total', help: 'Rows deleted by the collector, by table.', labelNames: ['table'], registers })),
  collectorRuns: new LazyCounter((pc, registers) => new pc.Counter({ name: 'realmgate_collector_runs_total', help: 'Collector ticks by outcome (ran, skipped: another node holds the lease, error).', labelNames: ['outcome'], registers })),
  collectorLastRun: new LazyGauge((pc, registers) => new pc.Gauge({ name: 'realmgate_collector_last_run_timestamp_seconds', help: 'When this node last completed a collector run.', registers })),
  collectorDuration: new LazyHistogram((pc, registers) => new pc.Histogram({ name: 'realmgate_collector_run_seconds', help: 'Duration of a collector run.', buckets: [0.01, 0.05, 0.1, 0.5, 1, 5, 10, 30], registers })),
};

/** Seconds since `start` (a process.hrtime.bigint() reading). */
export function secondsSince(start: bigint): number {
  return Number(process.hrtime.bigint() - start) / 1e9;
}
