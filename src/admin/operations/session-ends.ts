import type { Store } from '../../storage/store.js';
import type { SessionClient } from '../../storage/repos/session-admin.js';

/**
 * The clients used in the sessions a change is about to end, read before it (a deleted user's chains go
 * with the user). Only when someone listens (a running server's Store): the CLI reads nothing.
 */
export async function sessionsToEnd(store: Store, realmId: string, by: { sessionIds: string[] } | { userId: string; clientId?: string }): Promise<SessionClient[]> {
  return store.sessionEnds ? store.sessionAdmin.sessionClients(realmId, by) : [];
}

/** After the change: the listener (back-channel logout) is told of the ended sessions. */
export function tellSessionsEnded(store: Store, realmId: string, ended: SessionClient[]): void {
  if (ended.length > 0) store.sessionEnds?.(realmId, ended);
}
