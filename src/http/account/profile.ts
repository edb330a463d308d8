import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Services } from '../../services.js';
import { verifyAccessToken } from '../../oauth/access-tokens.js';
import { BearerError, bearerToken } from '../../oidc/userinfo.js';
import { corsForBearer } from '../plugins/cors.js';
import { setNoStore } from '../plugins/security-headers.js';
import { sendBearerError } from '../token/lifecycle-routes.js';

/**
 * keycloak-js's loadUserProfile calls the account URL with a bearer token and Accept: application/json;
 * a browser navigating there sends neither, and gets the HTML account page.
 */
export function wantsProfileJson(req: FastifyRequest): boolean {
  const auth = req.headers.authorization;
  if (typeof auth === 'string' && /^Bearer\b/i.test(auth)) return true;
  const accept = req.headers.accept ?? '';
  return accept.includes('application/json') && !accept.includes('text/html');
}

/** Keycloak's UserRepresentation subset that keycloak-js's KeycloakProfile describes. */
export async function sendProfile(services: Services, req: FastifyRequest<{ Params: { realm: string } }>, reply: FastifyReply): Promise<FastifyReply> {
  const realmId = req.params.realm;
  const header = req.headers.authorization;
  await corsForBearer(services, req, reply, realmId, header ? /^Bearer +(\S+)/i.exec(header)?.[1] : undefined);
  try {
    const realm = await services.cache.realm(realmId);
    if (!realm) throw new BearerError(401, 'invalid_token', 'realm not found');
    const token = bearerToken(header, undefined);
    if (!token) throw new BearerError(401, undefined, 'an access token is required');
    const claims = await verifyAccessToken(services, realm, token);
    if (!claims) throw new BearerError(401, 'invalid_token', 'the access token is invalid, expired or revoked');
    // RFC 9449 7.1: a DPoP-bound token is not a bearer token (this endpoint takes no DPoP proofs).
    if (claims.cnf?.jkt !== undefined) throw new BearerError(401, 'invalid_token', 'a DPoP-bound token is not accepted as a bearer token', 'DPoP');
    const user = await services.store.users.get(claims.sub);
    if (!user || !user.enabled || user.realmId !== realm.id) throw new BearerError(401, 'invalid_token', 'the user no longer exists or is disabled');
    setNoStore(reply);
    return reply.type('application/json').send({
      id: user.id,
      username: user.username,
      ...(user.email ? { email: user.email } : {}),
      ...(user.firstName ? { firstName: user.firstName } : {}),
      ...(user.lastName ? { lastName: user.lastName } : {}),
      emailVerified: user.emailVerified,
      attributes: {},
    });
  } catch (err) {
    if (err instanceof BearerError) return sendBearerError(reply, realmId, err);
    throw err;
  }
}
