import type { Store } from '../../storage/store.js';
import { checkPage, NotFound, ValidationError } from '../validation.js';
import { cliActor, now, recordAdminEvent, requireRealm, type Actor } from './common.js';
import { requireUser } from './users.js';
import type { SessionSummary } from '../../storage/repos/session-admin.js';
import { sessionsToEnd, tellSessionsEnded } from './session-ends.js';

/**
 * Revokes every refresh chain of one user or of one client in a realm. The access tokens those chains
 * issued are refused at once too: their jti names the chain, and introspection and userinfo check it.
 */
export async function revokeTokens(store: Store, input: { realmId: string; user?: string; clientId?: string }, actor: Actor = cliActor()): Promise<{ chains: number }> {
  await requireRealm(store, input.realmId);
  if ((input.user === undefined) === (input.clientId === undefined)) throw new ValidationError('name either a user or a client whose tokens to revoke');
  let chains: number;
  let resourcePath: string;
  if (input.user !== undefined) {
    const user = await requireUser(store, input.realmId, input.user);
    chains = await store.sessionAdmin.revokeChains(input.realmId, { userId: user.id }, now(), 'revoked by an administrator');
    resourcePath = `users/${user.id}/tokens`;
  } else {
    const client = await store.clients.get(input.realmId, input.clientId!);
    if (!client) throw new NotFound(`client ${input.clientId} does not exist in realm ${input.realmId}`);
    chains = await store.sessionAdmin.revokeChains(input.realmId, { clientId: client.clientId }, now(), 'revoked by an administrator');
    resourcePath = `clients/${client.clientId}/tokens`;
  }
  await recordAdminEvent(store, actor, { realmId: input.realmId, operation: 'ACTION', resourceType: 'TOKENS', resourcePath, representation: { chains } });
  return { chains };
}

/**
 * An administrator ends one session, as Keycloak's `DELETE /sessions/{id}?isOffline=`:
 * - online (the default): the browser session ends as at the user's own logout, with the refresh chains
 *   started in it but the offline ones (offline_access outlives the session, as in Keycloak), and the
 *   user's offline chains of clients with backchannel.logout.revoke.offline.tokens; the clients used in
 *   it are told by back-channel logout.
 * - offline: the offline chains started in that session are revoked (Keycloak's offline session of the
 *   same id); the browser session is left alone. NotFound when it has none.
 */
export async function endSession(store: Store, input: { realmId: string; sessionId: string; offline?: boolean }, actor: Actor = cliActor()): Promise<void> {
  await requireRealm(store, input.realmId);
  const s = await store.sessionAdmin.get(input.realmId, input.sessionId);
  if (!s) throw new NotFound(`session ${input.sessionId} does not exist in realm ${input.realmId}`);
  const reason = 'session ended by an administrator';
  if (input.offline) {
    const revoked = await store.sessionAdmin.revokeOffline(input.realmId, s.id, now(), reason);
    if (revoked === 0) throw new NotFound(`session ${input.sessionId} has no offline tokens in realm ${input.realmId}`);
  } else {
    const ended = s.ended ? [] : await sessionsToEnd(store, input.realmId, { sessionIds: [s.id] });
    const used = await store.sessionAdmin.sessionClients(input.realmId, { sessionIds: [s.id] });
    const revokeOfflineOf: string[] = [];
    for (const clientId of new Set(used.map((u) => u.clientId))) {
      if ((await store.clients.get(input.realmId, clientId))?.backchannelLogout.revokeOfflineTokens) revokeOfflineOf.push(clientId);
    }
    await store.sessionAdmin.endForLogout(input.realmId, { id: s.id, userId: s.userId }, now(), { reason, revokeOfflineOf });
    tellSessionsEnded(store, input.realmId, ended);
  }
  await recordAdminEvent(store, actor, { realmId: input.realmId, operation: 'DELETE', resourceType: 'USER_SESSION', resourcePath: `sessions/${s.id}`, ...(input.offline ? { representation: { isOffline: true } } : {}) });
}

/** Live sessions from which the client holds tokens. */
export async function clientSessions(store: Store, input: { realmId: string; clientId: string; first?: number; max?: number }): Promise<SessionSummary[]> {
  await requireRealm(store, input.realmId);
  checkPage(input);
  const client = await store.clients.get(input.realmId, input.clientId);
  if (!client) throw new NotFound(`client ${input.clientId} does not exist in realm ${input.realmId}`);
  return store.sessionAdmin.listForClient(input.realmId, client.clientId, now(), { first: input.first, max: input.max });
}
