import type { FastifyRequest } from 'fastify';
import { decodeJwt } from 'jose';
import type { Services } from '../../services.js';
import type { AdminCaller, AdminRole } from '../../admin/authorization.js';
import { hasAdminRole, mayMapRole } from '../../admin/authorization.js';
import type { MappingGuard } from '../../admin/operations/groups.js';
import type { Actor } from '../../admin/operations/common.js';
import { verifyAccessToken, type AccessTokenClaims } from '../../oauth/access-tokens.js';
import { callerRoles } from '../../admin/operations/roles.js';
import { forbidden, unauthorized } from './errors.js';

/**
 * RFC 6750 2.1: the admin API takes a bearer access token of any realm of this server, verified as a
 * resource server would (signature by the issuing realm's keys, expiry, not-before, revocation). The
 * issuer names the realm; authorization then decides what that realm's token may touch.
 */
export async function authenticateAdmin(services: Services, req: FastifyRequest): Promise<AdminCaller> {
  const header = req.headers.authorization;
  const m = header ? /^Bearer[ ]+([A-Za-z0-9._~+/-]+=*)[ ]*$/i.exec(header) : null;
  if (!m) throw unauthorized();
  const token = m[1]!;
  let iss: unknown;
  try {
    iss = decodeJwt(token).iss;
  } catch {
    throw unauthorized('the bearer token is malformed');
  }
  const prefix = `${services.config.authUrl}/auth/realms/`;
  if (typeof iss !== 'string' || !iss.startsWith(prefix)) throw unauthorized('the bearer token was not issued by this server');
  let realmId: string;
  try {
    realmId = decodeURIComponent(iss.slice(prefix.length));
  } catch {
    throw unauthorized('the bearer token was not issued by this server');
  }
  const realm = await services.cache.realm(realmId);
  if (!realm) throw unauthorized('the bearer token was not issued by this server');
  const claims = await verifyAccessToken(services, realm, token);
  if (!claims) throw unauthorized('the bearer token is invalid, expired or revoked');
  // RFC 9449 7.1: a DPoP-bound token is not a bearer token (the admin API takes no DPoP proofs).
  if (claims.cnf?.jkt !== undefined) throw unauthorized('a DPoP-bound token is not accepted as a bearer token');
  return callerFromClaims(services, realm.id, claims, req.ip);
}

/**
 * The admin caller a verified access token of `realmId` describes (shared with the admin console): who
 * from the token, what they may do from the database as it is now (callerRoles), not from the token's
 * role claims, which hold until it expires.
 */
export async function callerFromClaims(services: Services, realmId: string, claims: AccessTokenClaims, ip: string | null): Promise<AdminCaller> {
  const c = claims as Record<string, unknown>;
  return {
    realmId,
    userId: claims.sub,
    username: typeof c.preferred_username === 'string' ? c.preferred_username : null,
    clientId: claims.azp,
    roles: await callerRoles(services.store, realmId, claims.sub),
    ip,
    ...(typeof claims.sid === 'string' ? { sessionId: claims.sid } : {}),
  };
}

/** Throws 403 unless the caller holds `role` for the realm. */
export function requireRole(caller: AdminCaller, realmId: string, role: AdminRole): void {
  if (!hasAdminRole(caller, realmId, role)) throw forbidden(`this needs the ${role} role of realm ${realmId}`);
}

/** The admin event's "who" for an API caller. */
export function actorOf(caller: AdminCaller): Actor {
  return { via: 'api', realmId: caller.realmId, userId: caller.userId, username: caller.username, clientId: caller.clientId, ip: caller.ip };
}

/**
 * The check every change of role holding passes (a user's role mappings, a group's, a membership, a
 * group moved or deleted): 403 naming the first role the caller may not map (authorization.ts mayMapRole).
 */
export function mappingGuard(caller: AdminCaller): MappingGuard {
  return {
    authorize: (roles) => {
      const denied = roles.find((r) => !mayMapRole(caller, r));
      if (denied) throw forbidden(`only an administrator holding ${denied.name} may grant or remove it`);
    },
  };
}
