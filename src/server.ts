import type { FastifyInstance } from 'fastify';
import pino from 'pino';
import type { Config } from './config/config.js';
import { buildApp } from './app.js';
import { createServices, type Services } from './services.js';
import { openDatabase, migrate } from './storage/database.js';
import { Store } from './storage/store.js';
import { systemClock, nowSeconds } from './clock.js';
import { isSigningAlg } from './crypto/keystore.js';
import { ensureRealmManagement } from './admin/operations/roles.js';
import { bootstrapAdmin } from './admin/operations/bootstrap.js';

export interface RunningServer {
  app: FastifyInstance;
  services: Services;
  url: string;
  close(): Promise<void>;
}

/** Opens the database, applies migrations, makes sure every realm can sign, and starts listening. */
export async function startServer(config: Config, opts: { onReady?: (s: Services) => Promise<void> } = {}): Promise<RunningServer> {
  const logger = pino({ level: config.logLevel });
  const db = await openDatabase(config.databaseUrl, { synchronous: config.sqliteSync });
  await migrate(db);
  const store = new Store(db);
  const services = createServices(config, store, systemClock);
  for (const realm of await store.realms.list()) {
    await services.keys.ensureKey(realm.id, isSigningAlg(realm.signingAlg) ? realm.signingAlg : 'RS256', nowSeconds(services.clock));
    await services.keys.ensureRefreshKey(realm.id, nowSeconds(services.clock));
    // Fails fast when the keys are encrypted and REALMGATE_KEY_SECRET is missing or wrong.
    await services.keys.algorithm(realm.id);
    // Realms created before the admin API get their realm-management client and roles.
    await ensureRealmManagement(store, realm.id);
  }
  if (config.bootstrapAdmin) {
    const outcome = await bootstrapAdmin(store, config.bootstrapAdmin);
    if (outcome === 'created') logger.warn({ username: config.bootstrapAdmin.username }, 'created the bootstrap admin in realm master: change its password');
  }
  if (opts.onReady) await opts.onReady(services);

  const app = await buildApp({ services, logger });
  await app.listen({ port: config.port, host: config.host });
  const addr = app.server.address();
  const port = typeof addr === 'object' && addr ? addr.port : config.port;
  const url = `http://${config.host.includes(':') ? `[${config.host}]` : config.host}:${port}`;

  // Expired interactions and codes are kept only as long as reuse detection needs them.
  const sweep = setInterval(() => {
    const now = nowSeconds(services.clock);
    void store.interactions.deleteExpired(now).catch(() => undefined);
    void store.codes.deleteExpired(now - 86_400).catch(() => undefined);
    void store.devices.deleteExpired(now - 86_400).catch(() => undefined);
    void store.tokenState.deleteExpiredRevocations(now).catch(() => undefined);
  }, 10 * 60_000);
  sweep.unref();

  return {
    app,
    services,
    url,
    async close() {
      clearInterval(sweep);
      await app.close();
      await store.close();
    },
  };
}
