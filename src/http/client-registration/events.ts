import type { FastifyRequest } from 'fastify';
import type { Services } from '../../services.js';
import { isClientId } from '../../services.js';
import type { EventType } from '../../storage/repos/events.js';
import type { RegistrationError } from '../../oauth/client-registration.js';
import { CLIENT_CONFIGURATION_PATH, CLIENT_REGISTRATION_PATH } from './paths.js';

/** Keycloak's login events of the client registration provider, by route and method. */
const EVENTS: Record<string, { success: EventType; failure: EventType }> = {
  [`POST ${CLIENT_REGISTRATION_PATH}`]: { success: 'CLIENT_REGISTER', failure: 'CLIENT_REGISTER_ERROR' },
  [`GET ${CLIENT_CONFIGURATION_PATH}`]: { success: 'CLIENT_INFO', failure: 'CLIENT_INFO_ERROR' },
  [`PUT ${CLIENT_CONFIGURATION_PATH}`]: { success: 'CLIENT_UPDATE', failure: 'CLIENT_UPDATE_ERROR' },
  [`DELETE ${CLIENT_CONFIGURATION_PATH}`]: { success: 'CLIENT_DELETE', failure: 'CLIENT_DELETE_ERROR' },
};

/** Who a registration request speaks for, once its token was checked. */
export interface Caller {
  clientId: string | null;
  userId: string | null;
  username: string | null;
  /**
   * False for a token that proved nothing worth a row of its own (a realm user's access token without
   * create-client): its failures are sampled like those of a bad token.
   */
  attributable: boolean;
}

const callers = new WeakMap<FastifyRequest, Caller>();

/** Marks the request as made by `caller`: its failures from here on are recorded as theirs, unsampled. */
export function identify(req: FastifyRequest, caller: Caller): void {
  callers.set(req, caller);
}

const eventsOf = (req: FastifyRequest): { success: EventType; failure: EventType } | undefined => EVENTS[`${req.method} ${req.routeOptions.url ?? ''}`];

/** A registration, read, update or deletion that went through, with the client it concerns. */
export async function recordSuccess(services: Services, req: FastifyRequest, e: { realmId: string; clientId: string; userId?: string | null; username?: string | null; reason?: string }): Promise<void> {
  const type = eventsOf(req)?.success;
  if (!type) return;
  await services.audit.record({ realmId: e.realmId, type, outcome: 'success', clientId: e.clientId, userId: e.userId ?? null, username: e.username ?? null, ip: req.ip, ...(e.reason !== undefined ? { reason: e.reason } : {}) });
}

/**
 * A refused registration request, with its error code and description (never a token: descriptions are
 * the server's own words and the metadata the caller sent). A request whose token was not accepted is
 * anyone's: sampled per realm and type (src/audit.ts), so that a flood of made-up tokens writes a bounded
 * number of rows. Not recorded: a realm that does not exist (its name is the caller's, and each new one
 * would open a sampling window of its own), a method the endpoint does not take, and 503 (the database is
 * already struggling; the request may be retried).
 */
export async function recordFailure(services: Services, req: FastifyRequest, err: RegistrationError): Promise<void> {
  const type = eventsOf(req)?.failure;
  if (!type || err.status === 503) return;
  const params = req.params as { realm?: unknown; clientId?: unknown } | undefined;
  const realmId = typeof params?.realm === 'string' ? params.realm : undefined;
  if (realmId === undefined) return;
  const realm = await services.cache.realm(realmId).catch(() => null);
  if (!realm) return;
  const caller = callers.get(req);
  // RFC 7592: the client the path names, when it has a client id's shape (the caller's say-so until its token is checked).
  const named = typeof params?.clientId === 'string' && isClientId(params.clientId) ? params.clientId : null;
  await services.audit.record(
    { realmId: realm.id, type, outcome: 'failure', clientId: caller?.clientId ?? named, userId: caller?.userId ?? null, username: caller?.username ?? null, ip: req.ip, reason: `${err.error}: ${err.description}` },
    { anonymous: !caller?.attributable },
  );
}
