import KcAdminClient from '@keycloak/keycloak-admin-client';
import type { Config } from '../../src/config/config.js';
import { bootstrapAdmin } from '../../src/admin/operations/bootstrap.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

export const ADMIN_USERNAME = 'admin';
export const ADMIN_PASSWORD = 'admin password 42';

export interface AdminTestServer extends TestServer {
  /** keycloak-admin-client 26, unchanged, logged in to master as the bootstrap admin. */
  kc: KcAdminClient;
  /** A new client, not logged in, for the same server (log in as someone else with `auth`). */
  newClient(realmName?: string): KcAdminClient;
}

/**
 * The test server (realm `test`, user alice, clients web-app and native-app; see test/helpers/server.ts)
 * listening on a real port, plus the bootstrap admin in realm master, and keycloak-admin-client logged in
 * as Keycloak's own tools do: password grant with the public client admin-cli.
 */
export async function startAdminServer(opts: { dialect: 'sqlite' | 'postgres'; config?: Partial<Config> }): Promise<AdminTestServer> {
  const ts = await startTestServer({ dialect: opts.dialect, listen: true, ...(opts.config ? { config: opts.config } : {}) });
  await bootstrapAdmin(ts.store, { username: ADMIN_USERNAME, password: ADMIN_PASSWORD });
  const newClient = (realmName = 'master'): KcAdminClient => new KcAdminClient({ baseUrl: `${ts.baseUrl}/auth`, realmName });
  const kc = newClient();
  await kc.auth({ username: ADMIN_USERNAME, password: ADMIN_PASSWORD, grantType: 'password', clientId: 'admin-cli' });
  return Object.assign(ts, { kc, newClient });
}

/** The HTTP status of a failed keycloak-admin-client call (its NetworkError carries the response). */
export async function statusOf(p: Promise<unknown>): Promise<number> {
  try {
    await p;
    return 200;
  } catch (err) {
    const status = (err as { response?: { status?: number } }).response?.status;
    if (status === undefined) throw err;
    return status;
  }
}
