import { CONSOLE_CALLBACK_PATH } from './admin/operations/console.js';
import type { FastifyInstance } from 'fastify';
import pino from 'pino';
import type { Config } from './config/config.js';
import { buildApp, isReady } from './app.js';
import { createServices, type Services } from './services.js';
import type { Db } from './storage/database.js';
import { systemClock, nowSeconds } from './clock.js';
import { isSigningAlg } from './crypto/keystore.js';
import { ensureRealmManagement } from './admin/operations/roles.js';
import { bootstrapAdmin } from './admin/operations/bootstrap.js';
import { openDeploymentStore } from './admin/operations/deployment.js';
import { failureFields, isDatabaseTransient } from './storage/dialects/errors.js';
import { Collector } from './collector.js';
import { collectProcessMetrics, registry } from './metrics.js';
import { startManagementServer } from './http/management.js';
import { closeConnectionsWhileDraining } from './http/plugins/draining.js';

/**
 * The signals that stop a server gracefully. SIGHUP too: a terminal that closes (an ssh session lost
 * without nohup) sends it to the whole process group, and Node's default for it is to exit at once,
 * dropping the requests in flight of every worker.
 */
export const STOP_SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;

export interface RunningServer {
  app: FastifyInstance;
  services: Services;
  url: string;
  /** The management port's base URL, when one is served by this process. */
  managementUrl: string | undefined;
  collector: Collector;
  /**
   * Graceful stop: the listener closes (no new connections), idle keep-alive connections are closed,
   * requests in flight finish and are answered (their transactions commit first, as always), then
   * background work stops and the database closes.
   */
  close(): Promise<void>;
}

export interface StartOptions {
  onReady?: (s: Services) => Promise<void>;
  /** Serve the management port from this process (false in cluster workers: the primary serves it). */
  management?: boolean;
}

/**
 * What every start does before serving, once per process (the cluster's primary does it before forking):
 * opens and migrates the database, opens the key-encryption secret (before any key is created or
 * opened: private keys are never stored in clear), makes sure every realm can sign, and creates the
 * bootstrap admin when configured.
 */
export async function prepareDeployment(config: Config): Promise<{ logger: pino.Logger; services: Services; db: Db }> {
  const logger = pino({ level: config.logLevel });
  const { db, store } = await openDeploymentStore(config, {
    keys: true,
    boundQueries: true,
    announce: (message) => logger.warn({ keyFile: config.keyFile }, message),
    // The pool replaces the connection; requests that were using it were answered 503.
    onConnectionError: (err) => logger.warn(failureFields(err), 'a database connection was lost; it is replaced when next needed'),
  });
  const services = createServices(config, store, systemClock);
  await ensureRealmKeys(services);
  await ensureBootstrapAdmin(services, logger);
  return { logger, services, db };
}

/** Opens the database, applies migrations, makes sure every realm can sign, and starts listening. */
export async function startServer(config: Config, opts: StartOptions = {}): Promise<RunningServer> {
  const { logger, services } = await prepareDeployment(config);
  const store = services.store;
  if (opts.onReady) await opts.onReady(services);

  const app = await buildApp({ services, logger });
  let closing = false;
  closeConnectionsWhileDraining(app, () => closing);
  await app.listen({ port: config.port, host: config.host });
  // For dist/realmgate.mjs (scripts/bundle-loader.mjs): every function a start runs is compiled now, the
  // moment to write the code cache of the bundle when it has none.
  (process as NodeJS.EventEmitter).emit('realmgate:listening');
  const addr = app.server.address();
  const port = typeof addr === 'object' && addr ? addr.port : config.port;
  const url = `http://${config.host.includes(':') ? `[${config.host}]` : config.host}:${port}`;

  // Expired rows are deleted in the background, by one node at a time (see src/collector.ts).
  const collector = new Collector({
    store,
    clock: services.clock,
    intervalSeconds: config.collectorIntervalS,
    eventsRetentionDays: config.eventsRetentionDays,
    adminEventsRetentionDays: config.adminEventsRetentionDays,
    onError: (err) =>
      isDatabaseTransient(err)
        ? logger.warn(failureFields(err), 'collector run failed: the database is busy or unreachable; the next tick tries again')
        : logger.warn({ err }, 'collector run failed'),
  });
  collector.start();

  let management: Awaited<ReturnType<typeof startManagementServer>> | undefined;
  if (config.metricsPort !== undefined) collectProcessMetrics();
  if (config.metricsPort !== undefined && opts.management !== false) {
    management = await startManagementServer({
      host: config.host,
      port: config.metricsPort,
      metrics: async () => ({ contentType: registry.contentType, body: await registry.metrics() }),
      ready: () => isReady(services),
    });
  }

  return {
    app,
    services,
    url,
    managementUrl: management?.url,
    collector,
    async close() {
      closing = true;
      // Connections that turn idle after their last in-flight answer are closed too, not only those idle now.
      const sweep = setInterval(() => app.server.closeIdleConnections(), 100);
      try {
        await app.close();
      } finally {
        clearInterval(sweep);
      }
      await management?.close();
      await collector.stop();
      await store.close();
    },
  };
}

/** REALMGATE_BOOTSTRAP_ADMIN_*: the master realm and its admin, once (idempotent, so every process may run it). */
export async function ensureBootstrapAdmin(services: Services, logger: { warn(obj: object, msg: string): void }): Promise<void> {
  const admin = services.config.bootstrapAdmin;
  if (!admin) return;
  // The admin console's client (security-admin-console) comes with the admin, as in Keycloak.
  const outcome = await bootstrapAdmin(services.store, { ...admin, consoleRedirectUri: `${services.config.authUrl}${CONSOLE_CALLBACK_PATH}` });
  if (outcome === 'created') logger.warn({ username: admin.username }, 'created the bootstrap admin in realm master: change its password');
}

/** Every realm has an active signing key; fails fast when the keys are encrypted and the secret is wrong. */
export async function ensureRealmKeys(services: Services): Promise<void> {
  for (const realm of await services.store.realms.list()) {
    await services.keys.ensureKey(realm.id, isSigningAlg(realm.signingAlg) ? realm.signingAlg : 'RS256', nowSeconds(services.clock));
    await services.keys.ensureRefreshKey(realm.id, nowSeconds(services.clock));
    // Fails fast when the keys are encrypted and the key secret is missing or wrong.
    await services.keys.algorithm(realm.id);
    // Realms created before the admin API get their realm-management client and roles.
    await ensureRealmManagement(services.store, realm.id);
  }
}
