import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/**
 * Prometheus metrics of this process, in one registry of its own. Served at /metrics on the management
 * port (REALMGATE_METRICS_PORT); with --workers the primary process aggregates every worker's registry.
 * Label values are bounded sets (route patterns, grant types, outcomes), never request data.
 */
export const registry = new Registry();

let defaultsOn = false;
/** Node's own metrics (event-loop lag, heap, GC, CPU), collected only when a metrics port is served. */
export function collectProcessMetrics(): void {
  if (defaultsOn) return;
  defaultsOn = true;
  collectDefaultMetrics({ register: registry, eventLoopMonitoringPrecision: 20 });
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

const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5];

export const metrics = {
  requestDuration: new Histogram({
    name: 'realmgate_http_request_duration_seconds',
    // Its _count is the number of requests by route and status: no separate counter on the hot path.
    help: 'HTTP request latency (and, as _count, requests) by route pattern, method and status.',
    labelNames: ['route', 'method', 'status'],
    buckets: LATENCY_BUCKETS,
    registers: [registry],
  }),
  grants: new Counter({ name: 'realmgate_grants_total', help: 'Token requests by grant type and outcome (success or the RFC 6749 error code).', labelNames: ['grant_type', 'outcome'], registers: [registry] }),
  reuse: new Counter({ name: 'realmgate_reuse_detections_total', help: 'Codes, device codes and refresh tokens presented again (each revokes its chain).', labelNames: ['kind'], registers: [registry] }),
  lockouts: new Counter({ name: 'realmgate_lockouts_total', help: 'Login lockouts by what was locked (user, ip, dev).', labelNames: ['subject'], registers: [registry] }),
  clientAuthFailures: new Counter({ name: 'realmgate_client_auth_failures_total', help: 'Failed client authentications at the token endpoints (all of them; only a sample is stored as audit events).', registers: [registry] }),
  transactions: new Histogram({ name: 'realmgate_db_token_transaction_seconds', help: 'Duration of the hot token transactions (code exchange, refresh), commit included.', buckets: LATENCY_BUCKETS, registers: [registry] }),
  batchSize: new Histogram({ name: 'realmgate_sqlite_group_commit_batch_size', help: 'Token transactions sharing one SQLite commit.', buckets: [1, 2, 4, 8, 16, 32, 64, 128, 256], registers: [registry] }),
  pool: new Gauge({
    name: 'realmgate_db_pool_connections',
    help: 'PostgreSQL pool connections by state (total, idle, waiting clients).',
    labelNames: ['state'],
    registers: [registry],
    collect(): void {
      if (!observedPool) return;
      this.set({ state: 'total' }, observedPool.totalCount);
      this.set({ state: 'idle' }, observedPool.idleCount);
      this.set({ state: 'waiting' }, observedPool.waitingCount);
    },
  }),
  collectorDeleted: new Counter({ name: 'realmgate_collector_deleted_rows_total', help: 'Rows deleted by the collector, by table.', labelNames: ['table'], registers: [registry] }),
  collectorRuns: new Counter({ name: 'realmgate_collector_runs_total', help: 'Collector ticks by outcome (ran, skipped: another node holds the lease, error).', labelNames: ['outcome'], registers: [registry] }),
  collectorLastRun: new Gauge({ name: 'realmgate_collector_last_run_timestamp_seconds', help: 'When this node last completed a collector run.', registers: [registry] }),
  collectorDuration: new Histogram({ name: 'realmgate_collector_run_seconds', help: 'Duration of a collector run.', buckets: [0.01, 0.05, 0.1, 0.5, 1, 5, 10, 30], registers: [registry] }),
};

/** Seconds since `start` (a process.hrtime.bigint() reading). */
export function secondsSince(start: bigint): number {
  return Number(process.hrtime.bigint() - start) / 1e9;
}
