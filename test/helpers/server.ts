import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/app.js';
import { loadConfig, type Config } from '../../src/config/config.js';
import { ManualClock } from '../../src/clock.js';
import { createServices, type Services } from '../../src/services.js';
import { Store } from '../../src/storage/store.js';
import { createClient, createOrganization, createRealm, createUser } from '../../src/admin/operations.js';
import { createTestDatabase, type TestDatabase } from './db.js';

export const REALM = 'test';
export const PASSWORD = 'correct horse battery';

export interface TestServer {
  app: FastifyInstance;
  services: Services;
  store: Store;
  clock: ManualClock;
  db: TestDatabase;
  config: Config;
  /** Base URL when started with `listen: true`, else the configured AUTH_URL. */
  baseUrl: string;
  client: { id: string; secret: string; redirectUri: string };
  publicClient: { id: string; redirectUri: string };
  user: { username: string; password: string; id: string };
  close(): Promise<void>;
}

/**
 * A server over a fresh database with one realm (`test`), one organization (`acme`), a user `alice`
 * in it, a confidential client `web-app` and a public client `native-app`. The clock is manual.
 */
export async function startTestServer(opts: { dialect: 'sqlite' | 'postgres'; listen?: boolean; config?: Partial<Config> }): Promise<TestServer> {
  // The database as the server would open it with this configuration's REALMGATE_DB_WAIT_TIMEOUT_MS.
  const db = await createTestDatabase(opts.dialect, opts.config?.dbWaitTimeoutMs === undefined ? {} : { waitTimeoutMs: opts.config.dbWaitTimeoutMs });
  const store = new Store(db.db);
  const clock = new ManualClock(Date.now());
  // Port 0 in AUTH_URL is replaced once listening.
  const config = loadConfig({}, { port: 0, authUrl: 'http://localhost:8080', cacheTtlMs: 0, databaseUrl: db.url, ...opts.config });
  await createRealm(store, { id: REALM, displayName: 'Test Realm' });
  await createOrganization(store, { realmId: REALM, alias: 'acme', name: 'Acme Inc.' });
  const { id: userId } = await createUser(store, { realmId: REALM, username: 'alice', password: PASSWORD, email: 'alice@example.com', orgAliases: ['acme'] });
  const redirectUri = 'https://app.example.com/callback';
  const { secret } = await createClient(store, { realmId: REALM, clientId: 'web-app', redirectUris: [redirectUri, 'http://127.0.0.1:9999/cb'], name: 'Web App' });
  await createClient(store, { realmId: REALM, clientId: 'native-app', redirectUris: ['http://127.0.0.1/callback'], public: true });

  const services: Services = createServices(config, store, clock);
  const app: FastifyInstance = await buildApp({ services });
  let baseUrl = config.authUrl;
  if (opts.listen) {
    await app.listen({ port: 0, host: '127.0.0.1' });
    const port = (app.server.address() as { port: number }).port;
    // Routes read the configuration per request, so AUTH_URL can point at the real port now.
    baseUrl = `http://127.0.0.1:${port}`;
    Object.assign(config, { port, authUrl: baseUrl, appUrl: opts.config?.appUrl ?? baseUrl });
  } else {
    await app.ready();
  }
  return {
    app,
    services,
    store,
    clock,
    db,
    config,
    baseUrl,
    client: { id: 'web-app', secret: secret!, redirectUri },
    publicClient: { id: 'native-app', redirectUri: 'http://127.0.0.1/callback' },
    user: { username: 'alice', password: PASSWORD, id: userId },
    async close() {
      await app.close();
      await db.drop();
    },
  };
}

export function basic(id: string, secret: string): string {
  // RFC 6749 2.3.1: each part form-urlencoded before base64.
  const enc = (s: string): string => encodeURIComponent(s).replace(/%20/g, '+');
  return 'Basic ' + Buffer.from(`${enc(id)}:${enc(secret)}`).toString('base64');
}

export function realmPath(p: string): string {
  return `/auth/realms/${REALM}${p}`;
}
