import KcAdminClient from '@keycloak/keycloak-admin-client';
import type { Config } from '../../src/config/config.js';
import { bootstrapAdmin } from '../../src/admin/operations/bootstrap.js';
import assert from 'node:assert/strict';
import { decodeJwt } from 'jose';
import { startTestServer, basic, type TestServer } from '../helpers/server.js';
import { runAuthorization, tokenRequest } from '../helpers/flow.js';

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

/** The status and error body of a failed keycloak-admin-client call (throws when the call succeeded). */
export async function errorOf(p: Promise<unknown>): Promise<{ status: number; body: Record<string, unknown> }> {
  try {
    await p;
  } catch (err) {
    const e = err as { response?: Response; responseData?: unknown };
    if (!e.response) throw err;
    return { status: e.response.status, body: (e.responseData ?? {}) as Record<string, unknown> };
  }
  throw new Error('the call succeeded');
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

/** A role of realm-management in `realm`, as a role-mapping body names it. */
export async function adminRoleRef(ts: AdminTestServer, realm: string, name: string): Promise<{ id: string; name: string }> {
  const r = await ts.kc.clients.findRole({ realm, id: 'realm-management', roleName: name });
  return { id: r!.id!, name };
}

/**
 * A confidential client of `realm` with a service account holding the realm-management `roles`, and
 * keycloak-admin-client logged in as it (client_credentials); `grant` gives the account more roles
 * (log in again for a token that carries them: the admin API reads roles per request anyway).
 */
export async function serviceAccountAdmin(
  ts: AdminTestServer,
  realm: string,
  clientId: string,
  roles: string[],
): Promise<{ kc: KcAdminClient; userId: string; grant(name: string): Promise<void> }> {
  await ts.kc.clients.create({ realm, clientId, serviceAccountsEnabled: true, standardFlowEnabled: false });
  const { value: secret } = await ts.kc.clients.generateNewClientSecret({ realm, id: clientId });
  const sa = await ts.kc.clients.getServiceAccountUser({ realm, id: clientId });
  const grant = async (name: string): Promise<void> => {
    await ts.kc.users.addClientRoleMappings({ realm, id: sa.id!, clientUniqueId: 'realm-management', roles: [await adminRoleRef(ts, realm, name)] });
  };
  for (const name of roles) await grant(name);
  const kc = ts.newClient(realm);
  await kc.auth({ grantType: 'client_credentials', clientId, clientSecret: secret! });
  return { kc, userId: sa.id!, grant };
}

/** What an access token says of the user's roles: realm roles, and the web-app client's. */
export interface RoleClaims {
  realm: string[] | undefined;
  client: string[] | undefined;
}

/**
 * alice signed in to the web app once (a code flow of the test client); `refresh()` is the access token
 * of her next refresh (the chain rotates), `roles()` the roles it carries, each list sorted.
 */
export async function aliceSession(ts: TestServer): Promise<{ refresh(): Promise<string>; roles(): Promise<RoleClaims> }> {
  const r = await runAuthorization(ts);
  const t = await tokenRequest(ts, { grant_type: 'authorization_code', code: r.code!, redirect_uri: ts.client.redirectUri }, { authorization: basic(ts.client.id, ts.client.secret) });
  assert.equal(t.statusCode, 200, t.body);
  let refreshToken = t.json().refresh_token as string;
  const refresh = async (): Promise<string> => {
    const next = await tokenRequest(ts, { grant_type: 'refresh_token', refresh_token: refreshToken }, { authorization: basic(ts.client.id, ts.client.secret) });
    assert.equal(next.statusCode, 200, next.body);
    refreshToken = next.json().refresh_token as string;
    return next.json().access_token as string;
  };
  const roles = async (): Promise<RoleClaims> => {
    const claims = decodeJwt(await refresh()) as { realm_access?: { roles: string[] }; resource_access?: Record<string, { roles: string[] }> };
    return { realm: claims.realm_access?.roles.sort(), client: claims.resource_access?.['web-app']?.roles.sort() };
  };
  return { refresh, roles };
}
