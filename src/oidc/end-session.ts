import type { Services } from '../services.js';
import type { Client } from '../storage/types.js';
import { nowSeconds } from '../clock.js';

/**
 * A user's logout of one browser session (the end-session endpoint, the account page's Sign out): the
 * session ends, with the refresh chains started in it (offline ones stay, as in Keycloak, unless their
 * client has backchannel.logout.revoke.offline.tokens: then all the user's offline chains of that client
 * go), and the clients used in it are told by back-channel logout, after this returns. Returns those
 * clients: the browser that ended the session tells them by front-channel logout (logoutFrames).
 */
export async function logoutSession(services: Services, realmId: string, session: { id: string; userId: string }, reason: string): Promise<Client[]> {
  const { store } = services;
  const used = await store.sessionAdmin.sessionClients(realmId, { sessionIds: [session.id] });
  const clients = new Map<string, Client>();
  for (const clientId of new Set(used.map((u) => u.clientId))) {
    const c = await store.clients.get(realmId, clientId);
    if (c) clients.set(clientId, c);
  }
  const revokeOfflineOf = [...clients.values()].filter((c) => c.backchannelLogout.revokeOfflineTokens).map((c) => c.clientId);
  await store.sessionAdmin.endForLogout(realmId, session, nowSeconds(services.clock), { reason, revokeOfflineOf });
  services.backchannel.notify(realmId, used, clients);
  return [...clients.values()];
}
