import type { Store } from '../../storage/store.js';
import type { Client } from '../../storage/types.js';
import type { ClientSessionCounts, SessionClient, SessionSummary } from '../../storage/repos/session-admin.js';
import { checkPage, NotFound } from '../validation.js';
import { cliActor, now, recordAdminEvent, requireRealm, type Actor } from './common.js';
import { requireUser } from './users.js';
import { tellSessionsEnded } from './session-ends.js';

/**
 * Session counts and offline sessions as Keycloak's admin API shows them, and the realm-wide logout.
 * An online session of a client: a live browser session in which the client holds a live refresh chain.
 * An offline session: a browser session in which a client was granted offline_access and whose offline
 * refresh chain still works (it outlives the browser session).
 */

/** At most this many (session, client) pairs are told of a realm-wide logout (the back-channel sender queues 10 000). */
export const LOGOUT_ALL_MAX_SESSION_CLIENTS = 10_000;

/** Keycloak's GlobalRequestResult: the client URLs told, answered with success or not. */
export interface GlobalRequestResult {
  successRequests: string[];
  failedRequests: string[];
}

async function requireClient(store: Store, realmId: string, clientId: string, message: string): Promise<Client> {
  const client = await store.clients.get(realmId, clientId);
  if (!client) throw new NotFound(message);
  return client;
}

/** Keycloak's 404 text for a client of the client endpoints. */
const CLIENT_NOT_FOUND = 'Could not find client';

/** How many live browser sessions the client holds tokens from (the sessions `clientSessions` lists). */
export async function clientSessionCount(store: Store, input: { realmId: string; clientId: string }): Promise<number> {
  await requireRealm(store, input.realmId);
  const client = await requireClient(store, input.realmId, input.clientId, CLIENT_NOT_FOUND);
  return store.sessionAdmin.countForClient(input.realmId, client.clientId, now());
}

/** How many offline sessions the client holds (browser sessions with a live offline_access chain of the client). */
export async function clientOfflineSessionCount(store: Store, input: { realmId: string; clientId: string }): Promise<number> {
  await requireRealm(store, input.realmId);
  const client = await requireClient(store, input.realmId, input.clientId, CLIENT_NOT_FOUND);
  return store.sessionAdmin.countOffline(input.realmId, client.clientId, now());
}

/** The client's offline sessions, newest first, paged. */
export async function clientOfflineSessions(store: Store, input: { realmId: string; clientId: string; first?: number; max?: number }): Promise<SessionSummary[]> {
  await requireRealm(store, input.realmId);
  checkPage(input);
  const client = await requireClient(store, input.realmId, input.clientId, CLIENT_NOT_FOUND);
  return store.sessionAdmin.listOffline(input.realmId, { clientId: client.clientId }, now(), { first: input.first, max: input.max });
}

/** The user's offline sessions in which the client holds offline access (Keycloak: 404 "Client not found" for an unknown client). */
export async function userOfflineSessions(store: Store, input: { realmId: string; user: string; clientId: string }): Promise<SessionSummary[]> {
  const user = await requireUser(store, input.realmId, input.user);
  const client = await requireClient(store, input.realmId, input.clientId, 'Client not found');
  // A user has few sessions: no paging (Keycloak has none either); bounded all the same.
  return store.sessionAdmin.listOffline(input.realmId, { clientId: client.clientId, userId: user.id }, now(), { max: 1000 });
}

/** Every client with at least one online or offline session, with both counts (Keycloak's client-session-stats). */
export async function clientSessionStats(store: Store, input: { realmId: string }): Promise<ClientSessionCounts[]> {
  await requireRealm(store, input.realmId);
  return store.sessionAdmin.clientCounts(input.realmId, now());
}

/**
 * Keycloak's logout-all: ends every browser session of the realm and revokes every refresh chain of its
 * users, offline ones included (Keycloak moves the realm's not-before, which makes every offline token
 * issued until then stale; Realmgate revokes them instead and leaves not-before alone). The clients used
 * in the ended sessions are told by back-channel logout: through `tell`, which answers which URLs took it
 * (the route waits for it), else through the store's listener (nothing to report). One admin event.
 */
export async function logoutAllUsers(
  store: Store,
  input: { realmId: string; tell?: (ended: SessionClient[]) => Promise<GlobalRequestResult> },
  actor: Actor = cliActor(),
): Promise<GlobalRequestResult & { sessions: number; chains: number }> {
  await requireRealm(store, input.realmId);
  const ended = input.tell || store.sessionEnds ? await store.sessionAdmin.realmSessionClients(input.realmId, LOGOUT_ALL_MAX_SESSION_CLIENTS) : [];
  const r = await store.sessionAdmin.endAllForRealm(input.realmId, now(), 'all users logged out by an administrator');
  let result: GlobalRequestResult = { successRequests: [], failedRequests: [] };
  if (input.tell) result = await input.tell(ended);
  else tellSessionsEnded(store, input.realmId, ended);
  await recordAdminEvent(store, actor, { realmId: input.realmId, operation: 'ACTION', resourceType: 'REALM', resourcePath: 'logout-all', representation: { ...result, ...r } });
  return { ...result, ...r };
}
