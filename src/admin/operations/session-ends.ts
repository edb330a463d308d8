import type { Store } from '../../storage/store.js';
import type { SessionClient } from '../../storage/repos/session-admin.js';

/**
 * The clients used in the sessions a change is about to end, read before it (a deleted user's chains go
 * with the user). Only when someone listens (a running server's Store): the CLI reads nothing.
 */
export async function sessionsToEnd(store: Store, realmId: string, by: { sessionIds: string[] } | { userId: string; clientId?: string }): Promise<SessionClient[]> {
  return store.sessionEnds ? store.sessionAdmin.sessionClients(realmId, by) : [];
}

/**
 * Ends one client's access for one user: its refresh chains of the user, online and offline, are revoked
 * (and the access tokens they issued), `consent` withdraws the user's consent to it too, and the client
 * is told of the sessions it was used in by back-channel logout (as Keycloak). The administrator's and the
 * user's own revocations, and the user's "sign the application out". Returns how many chains ended.
 */
export async function endClientAccess(store: Store, input: { realmId: string; userId: string; clientId: string; now: number; reason: string; consent: boolean }): Promise<number> {
  const told = await sessionsToEnd(store, input.realmId, { userId: input.userId, clientId: input.clientId });
  const ended = await store.sessionAdmin.revokeUserClient(input.realmId, input.userId, input.clientId, input.now, input.reason, { consent: input.consent });
  tellSessionsEnded(store, input.realmId, told);
  return ended;
}

/** After the change: the listener (back-channel logout) is told of the ended sessions. */
export function tellSessionsEnded(store: Store, realmId: string, ended: SessionClient[]): void {
  if (ended.length > 0) store.sessionEnds?.(realmId, ended);
}
