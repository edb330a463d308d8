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

/** Ends one browser session and revokes the refresh chains started from it. */
export async function endSession(store: Store, input: { realmId: string; sessionId: string }, actor: Actor = cliActor()): Promise<void> {
  await requireRealm(store, input.realmId);
  const s = await store.sessionAdmin.get(input.realmId, input.sessionId);
  if (!s) throw new NotFound(`session ${input.sessionId} does not exist in realm ${input.realmId}`);
  const ended = s.ended ? [] : await sessionsToEnd(store, input.realmId, { sessionIds: [s.id] });
  await store.sessionAdmin.end(input.realmId, s.id, now(), 'session ended by an administrator');
  tellSessionsEnded(store, input.realmId, ended);
  await recordAdminEvent(store, actor, { realmId: input.realmId, operation: 'DELETE', resourceType: 'USER_SESSION', resourcePath: `sessions/${s.id}` });
}

/** Live sessions from which the client holds tokens. */
export async function clientSessions(store: Store, input: { realmId: string; clientId: string; first?: number; max?: number }): Promise<SessionSummary[]> {
  await requireRealm(store, input.realmId);
  checkPage(input);
  const client = await store.clients.get(input.realmId, input.clientId);
  if (!client) throw new NotFound(`client ${input.clientId} does not exist in realm ${input.realmId}`);
  return store.sessionAdmin.listForClient(input.realmId, client.clientId, now(), { first: input.first, max: input.max });
}
