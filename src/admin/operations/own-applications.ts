import type { Services } from '../../services.js';
import type { Realm, Scope, User } from '../../storage/types.js';
import { nowSeconds } from '../../clock.js';
import { endClientAccess } from './session-ends.js';

/** An application as its user sees it (Keycloak's account API /applications). */
export interface OwnApplication {
  clientId: string;
  clientName: string | null;
  /** It holds a refresh token from one of the user's live browser sessions (Keycloak: a client session). */
  inUse: boolean;
  /** It holds a live offline refresh token of the user. */
  offlineAccess: boolean;
  /** What the user granted it, merged over organizations (Keycloak keeps one consent per client). */
  consent?: { scopes: Scope[]; createdAt: number; lastUpdatedAt: number };
}

/** The applications the user has granted or that hold their tokens: existing clients only, by client id. */
export async function ownApplications(services: Services, realm: Pick<Realm, 'id'>, user: Pick<User, 'id'>): Promise<OwnApplication[]> {
  const { store } = services;
  const now = nowSeconds(services.clock);
  const [consents, chains, sessions, scopes] = await Promise.all([
    store.consents.listForUser(realm.id, user.id),
    store.refresh.lastUsedByUser(realm.id, user.id, now),
    store.sessionAdmin.listForUser(realm.id, user.id, now),
    services.cache.realmScopes(realm.id),
  ]);
  const inUse = new Set(sessions.flatMap((s) => s.clients));
  const ids = [...new Set([...consents.map((c) => c.clientId), ...chains.map((c) => c.clientId), ...inUse])].sort();
  const out: OwnApplication[] = [];
  for (const clientId of ids) {
    const client = await services.cache.client(realm.id, clientId);
    if (!client) continue;
    const granted = consents.filter((c) => c.clientId === clientId);
    const offline = chains.some((c) => c.clientId === clientId) && (await store.sessionAdmin.listOffline(realm.id, { clientId, userId: user.id }, now, { max: 1 })).length > 0;
    const names = [...new Set(granted.flatMap((c) => c.scopes))].sort();
    out.push({
      clientId,
      clientName: client.name,
      inUse: inUse.has(clientId),
      offlineAccess: offline,
      ...(granted.length > 0
        ? {
            consent: {
              scopes: names.map((n) => scopes?.get(n) ?? { name: n, consentText: n }),
              createdAt: Math.min(...granted.map((c) => c.createdAt)),
              lastUpdatedAt: Math.max(...granted.map((c) => c.createdAt)),
            },
          }
        : {}),
    });
  }
  return out;
}

/**
 * Keycloak's DELETE /account/applications/{clientId}/sessions: the user signs one application out of all
 * their sessions, online and offline, without withdrawing their consent (the next sign-in there asks
 * nothing more). Its refresh chains of the user are revoked (with the access tokens they issued), it is
 * told by back-channel logout; the browser sessions stay (other applications and the account page use
 * them). Recorded as LOGOUT when there was something to end. Returns how many chains ended.
 */
export async function endOwnApplicationSessions(services: Services, input: { realm: Pick<Realm, 'id'>; user: Pick<User, 'id' | 'username'>; clientId: string; ip: string; via: string | null }): Promise<number> {
  const { store } = services;
  const { realm, user, clientId } = input;
  const ended = await endClientAccess(store, { realmId: realm.id, userId: user.id, clientId, now: nowSeconds(services.clock), reason: 'signed out of the application by the user', consent: false });
  if (ended > 0) {
    await services.audit.record({ realmId: realm.id, type: 'LOGOUT', outcome: 'success', clientId, userId: user.id, username: user.username, ip: input.ip, reason: `the application's sessions ended through the account API${input.via ? ` (from ${input.via})` : ''}` });
  }
  return ended;
}

/**
 * The user withdraws their consent to a client (every organization's) and ends its access: its refresh
 * chains of the user are revoked (and the access tokens they issued with them), and the client is told of
 * the sessions it was used in by back-channel logout. Recorded as REVOKE (Keycloak's REVOKE_GRANT).
 */
export async function revokeOwnConsent(services: Services, input: { realm: Pick<Realm, 'id'>; user: Pick<User, 'id' | 'username'>; clientId: string; ip: string; via: string | null }): Promise<void> {
  const { store } = services;
  const { realm, user, clientId } = input;
  await endClientAccess(store, { realmId: realm.id, userId: user.id, clientId, now: nowSeconds(services.clock), reason: 'revoked by the user', consent: true });
  await services.audit.record({ realmId: realm.id, type: 'REVOKE', outcome: 'success', clientId, userId: user.id, username: user.username, ip: input.ip, reason: `revoked by the user through the account API${input.via ? ` (from ${input.via})` : ''}` });
}
