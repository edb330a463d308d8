import type { SessionSummary } from '../../../storage/repos/session-admin.js';

/** Keycloak's UserSessionRepresentation; times in milliseconds. */
export interface UserSessionRepresentation {
  id: string;
  username: string;
  userId: string;
  ipAddress: string;
  start: number;
  lastAccess: number;
  rememberMe: boolean;
  /** Keyed by the client's id in the admin API (Keycloak: its internal id), valued by its client_id. */
  clients: Record<string, string>;
  transientUser: boolean;
}

export function toSessionRepresentation(s: SessionSummary, clientKey: (clientId: string) => string = (c) => c): UserSessionRepresentation {
  return {
    id: s.id,
    username: s.username,
    userId: s.userId,
    // The address the session was started from ('' for a session from before addresses were kept).
    ipAddress: s.ipAddress ?? '',
    start: s.createdAt * 1000,
    lastAccess: s.lastAccess * 1000,
    rememberMe: s.rememberMe,
    clients: Object.fromEntries(s.clients.map((c) => [clientKey(c), c])),
    transientUser: false,
  };
}
