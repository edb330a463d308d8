import cluster, { type Worker } from 'node:cluster';
import type { Config } from './config/config.js';
import { databaseReady } from './storage/database.js';
import type { Services } from './services.js';
import { prepareDeployment, STOP_SIGNALS } from './server.js';
import { promRegistry } from './metrics.js';
import { startManagementServer } from './http/management.js';

/** Messages from a worker to the primary. */
type WorkerMessage = { type: 'realmgate:listening'; url: string } | { type: 'realmgate:failed'; message: string };

/** A worker that dies is replaced, but no faster than this, so a crash loop does not spin. */
const RESPAWN_DELAY_MS = 1000;
/** Replacements in a row that die before they listen (for another reason than the database): then the cluster gives up (exit 1). */
const MAX_FAILED_STARTS = 5;
/** sysexits.h EX_TEMPFAIL: what a process exits with when the database is busy or unreachable (src/cli.ts). */
const EX_TEMPFAIL = 75;

/**
 * The primary process of `realmgate start --workers N`: migrates the database once (under the migration
 * lock, so several nodes may start together), runs the optional set-up, forks N workers that share the
 * listening port (node:cluster), serves the management port with every worker's metrics aggregated,
 * replaces a worker that dies, and on SIGTERM/SIGINT/SIGHUP stops every worker gracefully before exiting.
 * Workers that cannot start (the port taken, an address that is not this host's) stop the cluster with
 * exit status 1 and their error printed once: at the first start as soon as one fails, later after
 * MAX_FAILED_STARTS replacements in a row failed.
 */
export async function runPrimary(config: Config, opts: { workers: number; onReady?: (s: Services) => Promise<void>; onListening: (url: string) => void }): Promise<void> {
  // Before the workers start: the migrations, the key file, the realms' keys and the bootstrap admin, once.
  const { logger, services, db } = await prepareDeployment(config);
  if (opts.onReady) await opts.onReady(services);

  let stopping = false;
  let announced = false;
  let failedStarts = 0;
  /** Workers that have listened; the error a worker that failed to start sent. */
  const listening = new WeakSet<Worker>();
  const failures = new WeakMap<Worker, string>();
  const fork = (): Worker => {
    const w = cluster.fork();
    // Sending to a worker that has just died (SIGKILL, the OOM killer) fails with EPIPE, emitted as an
    // 'error' on the Worker: without a listener it ended the primary, and with it every worker (seen when
    // a worker died while the primary answered its request to listen). Its 'exit' follows and replaces it.
    w.on('error', (err: NodeJS.ErrnoException) => logger.warn({ pid: w.process.pid, code: err.code, reason: err.message }, 'a message to a worker failed'));
    w.on('message', (m: WorkerMessage) => {
      if (m?.type === 'realmgate:failed') failures.set(w, m.message);
      if (m?.type !== 'realmgate:listening') return;
      listening.add(w);
      logger.info({ pid: w.process.pid }, 'worker listening');
      failedStarts = 0;
      if (!announced) {
        announced = true;
        opts.onListening(m.url);
      }
    });
    return w;
  };
  for (let i = 0; i < opts.workers; i++) fork();
  cluster.on('exit', (w, code, signal) => {
    if (stopping) return;
    if (!listening.has(w) && announced && code === EX_TEMPFAIL) {
      // A replacement that could not reach the database (PostgreSQL restarting, failing over): the
      // workers still running answer 503 meanwhile, and this one is tried again every second for as long
      // as it takes. Counted as a failed start, a database outage of a few seconds stopped the cluster.
      logger.warn({ pid: w.process.pid, reason: failures.get(w) }, 'a worker could not start: the database is busy or unreachable; starting another');
      respawn();
      return;
    }
    if (!listening.has(w)) {
      failedStarts++;
      if (!announced || failedStarts >= MAX_FAILED_STARTS) {
        const cause = failures.get(w) ?? `a worker exited before it listened (${signal ?? `exit status ${code}`})`;
        process.stderr.write(`realmgate: ${cause}${announced ? ` (${failedStarts} workers in a row failed to start)` : ''}; stopping\n`);
        stop(1);
        return;
      }
    }
    logger.error({ pid: w.process.pid, code, signal }, 'worker exited; starting another');
    respawn();
  });
  // Not unref'd: with every worker gone (a crash during an outage) the timer is what keeps the primary up.
  function respawn(): void {
    setTimeout(() => {
      if (!stopping) fork();
    }, RESPAWN_DELAY_MS);
  }

  // prom-client only when there is a management port to serve the aggregated metrics on.
  const management = config.metricsPort === undefined ? undefined : await serveClusterMetrics(config.host, config.metricsPort, () => databaseReady(db));

  function stop(exitCode = 0): void {
    if (stopping) return;
    stopping = true;
    const workers = Object.values(cluster.workers ?? {}).filter((w): w is Worker => w !== undefined);
    const exited = workers.map((w) => new Promise<void>((resolve) => (w.isDead() ? resolve() : w.once('exit', () => resolve()))));
    // Each worker closes its listener, answers what is in flight, and exits on its own.
    for (const w of workers) w.process.kill('SIGTERM');
    void Promise.all(exited)
      .then(async () => {
        await management?.close();
        await db.close();
      })
      .then(
        () => process.exit(exitCode),
        () => process.exit(1),
      );
  }
  for (const signal of STOP_SIGNALS) process.on(signal, () => stop());
}

/**
 * The primary's management port: every worker's metrics, summed as prom-client aggregates them (each
 * metric by its own rule), then the primary's own process metrics under the prefix realmgate_primary_
 * (its memory, CPU, event loop, descriptors), which the workers' sums do not include: a node's memory is
 * the workers' process_resident_memory_bytes plus realmgate_primary_process_resident_memory_bytes.
 */
async function serveClusterMetrics(host: string, port: number, ready: () => Promise<boolean>): ReturnType<typeof startManagementServer> {
  const pc = await import('prom-client');
  const aggregator = new pc.AggregatorRegistry();
  const own = new pc.Registry();
  pc.collectDefaultMetrics({ register: own, prefix: 'realmgate_primary_', eventLoopMonitoringPrecision: 20 });
  return startManagementServer({
    host,
    port,
    metrics: async () => ({ contentType: aggregator.contentType, body: (await aggregator.clusterMetrics()) + (await own.metrics()) }),
    ready,
  });
}

/** In a worker whose start failed: the primary prints the error (once for all workers) and stops. */
export function workerFailed(message: string): Promise<void> {
  return new Promise((resolve) => {
    if (!process.send) return resolve();
    process.send({ type: 'realmgate:failed', message } satisfies WorkerMessage, () => resolve());
  });
}

/**
 * In a worker: answer the primary's requests for this process's metrics (prom-client is loaded after
 * start, see src/metrics.ts), and announce the URL.
 */
export function workerReady(url: string): void {
  void Promise.all([import('prom-client'), promRegistry()]).then(([{ AggregatorRegistry }, registry]) => {
    AggregatorRegistry.setRegistries([registry]);
    // Constructing one installs the worker's listener for the primary's metrics requests.
    new AggregatorRegistry();
  });
  process.send?.({ type: 'realmgate:listening', url } satisfies WorkerMessage);
}
