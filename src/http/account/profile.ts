import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Services } from '../../services.js';
import { verifyAccessToken } from '../../oauth/access-tokens.js';
import { BearerError, bearerToken } from '../../oidc/userinfo.js';
import { corsForBearer } from '../plugins/cors.js';
import { setNoStore } from '../plugins/security-headers.js';
import { sendBearerError } from '../token/lifecycle-routes.js';
import { nowSeconds } from '../../clock.js';
import { holdsAccountRole } from '../../admin/operations/account-deletion.js';
import { renameOwnAccount, updateOwnProfile, type ProfileProblem } from '../../admin/operations/profile-actions.js';
import type { Realm, User } from '../../storage/types.js';
import { ConflictError, ValidationError } from '../../admin/validation.js';
import { checkUsernameChange } from '../../admin/operations/users.js';
import { accountProfileMetadata } from '../../admin/operations/user-profile.js';
import type { AccessTokenClaims } from '../../oauth/access-tokens.js';

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

/** How long after signing in an access token may change the user's email (the account page's rule). */
export const EMAIL_CHANGE_MAX_AGE_S = 300;

/**
 * Whether the token comes from the user's own sign-in (not an impersonation) of the last
 * EMAIL_CHANGE_MAX_AGE_S seconds, as its session says: what a change that could take the account over
 * (a new email, a removed second factor) needs beyond a token, which may have been stolen.
 */
export async function recentSignIn(services: Services, user: Pick<User, 'id'>, claims: Pick<AccessTokenClaims, 'sid'>): Promise<boolean> {
  const session = claims.sid ? await services.store.sessions.get(claims.sid) : undefined;
  return session !== undefined && session.userId === user.id && session.impersonator === undefined && nowSeconds(services.clock) - session.authTime <= EMAIL_CHANGE_MAX_AGE_S;
}

/** The realm, user and claims of a valid bearer token at the account URL; a BearerError otherwise. */
export async function bearerUser(services: Services, req: FastifyRequest<{ Params: { realm: string } }>, reply: FastifyReply): Promise<{ realm: Realm; user: User; claims: AccessTokenClaims }> {
  const realmId = req.params.realm;
  const header = req.headers.authorization;
  await corsForBearer(services, req, reply, realmId, header ? /^Bearer +(\S+)/i.exec(header)?.[1] : undefined);
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
  return { realm, user, claims };
}

/** Keycloak's ErrorRepresentation: one error as itself, several as `errors`. */
export function accountErrors(reply: FastifyReply, status: number, errors: ReadonlyArray<{ field?: string; errorMessage: string }>): FastifyReply {
  const reps = errors.map((e) => ({ ...(e.field ? { field: e.field } : {}), errorMessage: e.errorMessage, params: [] as string[] }));
  setNoStore(reply);
  return reply.code(status).type('application/json').send(reps.length === 1 ? reps[0] : { errors: reps });
}

/**
 * Keycloak's account REST API update (POST /realms/{realm}/account with a UserRepresentation, a bearer
 * token of the user): first and last name and email, with the rules of the account page. The user needs
 * the account client's manage-account role where the realm has it (Keycloak's AccountRoles). A field left
 * out stays as it is; attributes can only be sent unchanged, the username too unless the realm lets it
 * change (editUsernameAllowed: changeUsername's rules, 409 when taken). A new email needs a token from a sign-in of the last five minutes (the account page asks for
 * the password or a new sign-in; a token alone, perhaps stolen, cannot take the account over through a
 * password reset to an address of its holder's): otherwise 403. 204 when saved.
 */
export async function updateProfileJson(services: Services, req: FastifyRequest<{ Params: { realm: string } }>, reply: FastifyReply): Promise<FastifyReply> {
  try {
    const { realm, user, claims } = await bearerUser(services, req, reply);
    const body = req.body;
    if (typeof body !== 'object' || body === null || Array.isArray(body)) return accountErrors(reply, 400, [{ errorMessage: 'the body must be a JSON user representation' }]);
    const rep = body as Record<string, unknown>;
    if (!(await holdsAccountRole(services.store, realm.id, user.id, ['manage-account']))) return accountErrors(reply, 403, [{ errorMessage: 'the user may not manage their account (manage-account role)' }]);
    const text = (name: 'email' | 'firstName' | 'lastName', current: string | null): string | ProfileProblem => {
      const v = rep[name];
      if (v === undefined) return current ?? '';
      return typeof v === 'string' ? v : { field: name, message: `${name} must be a string` };
    };
    const values = { email: text('email', user.email), firstName: text('firstName', user.firstName), lastName: text('lastName', user.lastName) };
    const refused: Array<{ field?: string; errorMessage: string }> = [];
    for (const v of Object.values(values)) if (typeof v !== 'string') refused.push({ field: v.field, errorMessage: v.message });
    // Keycloak's editUsernameAllowed: a new username where the realm allows it, else only the current one.
    let newUsername: string | undefined;
    if (rep.username !== undefined) {
      if (typeof rep.username !== 'string') refused.push({ field: 'username', errorMessage: 'username must be a string' });
      else if (rep.username.trim().toLowerCase() !== user.username) {
        if (!realm.editUsernameAllowed || realm.registrationEmailAsUsername) refused.push({ field: 'username', errorMessage: 'the username cannot be changed' });
        else newUsername = rep.username.trim();
      }
    }
    const attributes = rep.attributes;
    if (attributes !== undefined && attributes !== null && (typeof attributes !== 'object' || Array.isArray(attributes) || Object.keys(attributes).length > 0)) {
      refused.push({ field: 'attributes', errorMessage: 'attributes are not changed through the account API' });
    }
    if (user.federationLink) refused.push({ errorMessage: 'the profile comes from the user directory (LDAP): change it there' });
    if (refused.length > 0) return accountErrors(reply, 400, refused);
    const v = values as { email: string; firstName: string; lastName: string };
    if (v.email.trim().toLowerCase() !== (user.email ?? '').toLowerCase() && !(await recentSignIn(services, user, claims))) {
      return accountErrors(reply, 403, [{ field: 'email', errorMessage: `a new email needs a sign-in of the last ${EMAIL_CHANGE_MAX_AGE_S / 60} minutes: sign in again (max_age or prompt=login) and retry` }]);
    }
    const usernameError = (err: unknown): FastifyReply => {
      if (err instanceof ConflictError) return accountErrors(reply, 409, [{ field: 'username', errorMessage: 'Username already exists.' }]);
      if (err instanceof ValidationError) return accountErrors(reply, 400, [{ field: 'username', errorMessage: err.message }]);
      throw err;
    };
    if (newUsername !== undefined) {
      try {
        await checkUsernameChange(services.store, { realm, user, username: newUsername });
      } catch (err) {
        return usernameError(err);
      }
    }
    const problems = await updateOwnProfile(services, { realm, user, values: v, ip: req.ip, clientId: claims.azp });
    if (problems.length > 0) return accountErrors(reply, 400, problems.map((p) => ({ field: p.field, errorMessage: p.message })));
    if (newUsername !== undefined) {
      try {
        await renameOwnAccount(services, { realm, user, username: newUsername, ip: req.ip, clientId: claims.azp });
      } catch (err) {
        return usernameError(err);
      }
    }
    setNoStore(reply);
    return reply.code(204).send();
  } catch (err) {
    if (err instanceof BearerError) return sendBearerError(reply, req.params.realm, err);
    throw err;
  }
}

/** Keycloak's UserRepresentation subset that keycloak-js's KeycloakProfile describes; with ?userProfileMetadata=true, the profile's metadata for the user too. */
export async function sendProfile(services: Services, req: FastifyRequest<{ Params: { realm: string } }>, reply: FastifyReply): Promise<FastifyReply> {
  try {
    const { realm, user } = await bearerUser(services, req, reply);
    // Keycloak's account console asks for the profile's metadata with it (userProfileMetadata=true).
    const withMetadata = (req.query as Record<string, unknown> | undefined)?.userProfileMetadata === 'true';
    setNoStore(reply);
    return reply.type('application/json').send({
      id: user.id,
      username: user.username,
      ...(user.email ? { email: user.email } : {}),
      ...(user.firstName ? { firstName: user.firstName } : {}),
      ...(user.lastName ? { lastName: user.lastName } : {}),
      emailVerified: user.emailVerified,
      attributes: {},
      ...(withMetadata ? { userProfileMetadata: accountProfileMetadata(realm, user) } : {}),
    });
  } catch (err) {
    if (err instanceof BearerError) return sendBearerError(reply, req.params.realm, err);
    throw err;
  }
}
