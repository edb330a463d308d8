import { randomUUID } from 'node:crypto';
import type { Services } from '../../services.js';
import { isClientId, realmBase } from '../../services.js';
import type { Client } from '../../storage/types.js';
import type { InitialAccess } from '../../storage/repos/client-registration.js';
import type { Actor } from '../../admin/operations/common.js';
import { hasAdminRole } from '../../admin/authorization.js';
import { createClient, deleteClient, realmScopeDefaults, updateClientShowingSecret, type ClientUpdate } from '../../admin/operations/clients.js';
import { NotFound, ValidationError } from '../../admin/validation.js';
import { randomToken, tokenHash } from '../../crypto/random.js';
import { verifyClientSecret } from '../../crypto/client-secrets.js';
import { nowSeconds } from '../../clock.js';
import { metadataOf, readMetadata, RegistrationError, scopeSplit, settingsOf, type RegistrationMetadata, type RegistrationSettings } from '../../oauth/client-registration.js';
import { AdminHttpError } from '../admin/errors.js';
import { actorOf, authenticateAdmin } from '../admin/authenticate.js';
import type { FastifyRequest } from 'fastify';
import { identify, recordSuccess } from './events.js';

import { REGISTRATION_SUFFIX } from './paths.js';

export function registrationEndpoint(services: Services, realmId: string): string {
  return `${realmBase(services.config, realmId)}${REGISTRATION_SUFFIX}`;
}

/** RFC 7592 3: where the client reads, changes and deletes its registration. */
export function registrationClientUri(services: Services, realmId: string, clientId: string): string {
  return `${registrationEndpoint(services, realmId)}/${encodeURIComponent(clientId)}`;
}

const invalidToken = (description = 'the registration access token is invalid'): RegistrationError => new RegistrationError('invalid_token', description);

/** RFC 6750 2.1: the token of an `Authorization: Bearer` header; none: 401 invalid_token. */
export function bearerOf(authorization: string | undefined): string {
  const m = authorization ? /^Bearer[ ]+([A-Za-z0-9._~+/-]+=*)[ ]*$/i.exec(authorization) : null;
  if (!m) throw invalidToken('an Authorization: Bearer token is required');
  return m[1]!;
}

/** Who may register: the bearer of a live initial access token, or an administrator of the realm. */
type Registrant = { kind: 'initial-access'; access: InitialAccess & { tokenHash: string }; actor: Actor } | { kind: 'admin'; actor: Actor };

/**
 * RFC 7591 3: an initial access token (one of its registrations used up here, atomically) or a bearer
 * access token of this realm whose user holds realm-management create-client (or manage-clients, which
 * implies it), as Keycloak takes them. An initial access token is random; an access token is a JWT.
 */
async function authorizeRegistration(services: Services, req: FastifyRequest, realmId: string): Promise<Registrant> {
  const token = bearerOf(req.headers.authorization);
  if (!token.includes('.')) {
    const hash = tokenHash(token);
    const access = await services.store.clientRegistration.consumeInitialAccess(realmId, hash, nowSeconds(services.clock));
    if (!access) throw invalidToken('the initial access token is invalid, expired or used up');
    identify(req, { clientId: null, userId: null, username: null, attributable: true });
    // Nobody signs in with an initial access token: the change is recorded as the API's, from this address.
    return { kind: 'initial-access', access: { ...access, tokenHash: hash }, actor: { via: 'api', realmId, userId: null, username: null, clientId: null, ip: req.ip } };
  }
  let caller;
  try {
    caller = await authenticateAdmin(services, req);
  } catch (err) {
    if (err instanceof AdminHttpError) throw invalidToken(err.message);
    throw err;
  }
  if (caller.realmId !== realmId) throw invalidToken(`the token was not issued by realm ${realmId}`);
  const actor = actorOf(caller);
  // A user without the role is known, but any user of the realm may send as many: sampled all the same.
  identify(req, { clientId: null, userId: actor.userId, username: actor.username, attributable: false });
  if (!hasAdminRole(caller, realmId, 'create-client')) throw new RegistrationError('insufficient_scope', 'registering a client needs the create-client or manage-clients role of realm-management');
  identify(req, { clientId: null, userId: actor.userId, username: actor.username, attributable: true });
  return { kind: 'admin', actor };
}

/** RFC 7591 3.2.1 / RFC 7592 3: the stored metadata, the secret when one was just made, the management fields. */
function response(services: Services, client: Client, registrationToken: string, secret: string | undefined): Record<string, unknown> {
  const { client_id, ...rest } = metadataOf(client);
  return {
    client_id,
    ...(secret !== undefined ? { client_secret: secret } : {}),
    ...rest,
    registration_access_token: registrationToken,
    registration_client_uri: registrationClientUri(services, client.realmId, client.clientId),
  };
}

/** The scopes a registration without `scope` gets, or an update that leaves it out: the realm's for new clients. */
async function defaultScopes(services: Services, realmId: string): Promise<{ scopes: string; optionalScopes: string }> {
  const realm = await services.store.realms.get(realmId);
  if (!realm) throw new NotFound(`realm ${realmId} does not exist`);
  const d = realmScopeDefaults(realm, (await services.store.realms.scopes(realmId)).map((s) => s.name));
  return { scopes: ['openid', ...d.default].join(' '), optionalScopes: d.optional.join(' ') };
}

/** The settings a registration and an update both take from the metadata as they are (lists and scopes differ). */
function clientSettings(s: RegistrationSettings) {
  return {
    public: s.public,
    ...(s.authMethods ? { authMethods: s.authMethods } : {}),
    idTokenAlg: s.idTokenAlg,
    standardFlowEnabled: s.standardFlowEnabled,
    directAccessGrantsEnabled: s.directAccessGrantsEnabled,
    serviceAccountsEnabled: s.serviceAccountsEnabled,
    backchannelLogout: s.backchannelLogout,
    frontchannelLogout: s.frontchannelLogout,
    dpopBoundAccessTokens: s.dpopBoundAccessTokens,
    requirePushedAuthorizationRequests: s.requirePushedAuthorizationRequests,
    requestObjectSignatureAlg: s.requestObjectSignatureAlg,
    jwtKeys: s.jwtKeys,
  };
}

/** RFC 7591 3.1: registers a client from its metadata; 201's body. */
export async function register(services: Services, req: FastifyRequest, realmId: string): Promise<Record<string, unknown>> {
  const registrant = await authorizeRegistration(services, req, realmId);
  try {
    const meta = readMetadata(req.body);
    const s = settingsOf(meta);
    const scopes = meta.scope !== undefined ? scopeSplit(meta.scope) : await defaultScopes(services, realmId);
    const { client, secret } = await createClient(
      services.store,
      {
        realmId,
        // RFC 7591 3.2.1: the server assigns the identifier.
        clientId: randomUUID(),
        redirectUris: s.redirectUris,
        ...(s.name !== null ? { name: s.name } : {}),
        ...scopes,
        postLogoutRedirectUris: s.postLogoutRedirectUris,
        ...clientSettings(s),
        // Keycloak's "Full Scope Disabled" policy for registrations it cannot tie to an administrator:
        // tokens of such a client carry only the roles in its scope, not every role of the user.
        ...(registrant.kind === 'initial-access' ? { fullScopeAllowed: false } : {}),
      },
      registrant.actor,
    );
    const registrationToken = randomToken();
    await services.store.clientRegistration.setRegistrationToken(realmId, client.clientId, tokenHash(registrationToken));
    await recordSuccess(services, req, {
      realmId,
      clientId: client.clientId,
      userId: registrant.actor.userId,
      username: registrant.actor.username,
      reason: registrant.kind === 'initial-access' ? `registered with initial access token ${registrant.access.id}` : 'registered by an administrator',
    });
    return response(services, client, registrationToken, secret);
  } catch (err) {
    // The client was not made: the registration goes back to the initial access token.
    if (registrant.kind === 'initial-access') await services.store.clientRegistration.restoreInitialAccess(registrant.access).catch((e: unknown) => req.log.warn({ err: e }, 'could not give back an initial access token registration'));
    throw err;
  }
}

/**
 * RFC 7592 2 and 3: the registration access token of this client, replaced by a new one (as Keycloak
 * does at each read and update) in one conditional update, so that of two requests with the same token
 * exactly one goes on. Any other token, or a client that does not exist: 401, the same answer.
 */
async function claim(services: Services, req: FastifyRequest, realmId: string, clientId: string): Promise<{ next: string; nextHash: string; currentHash: string }> {
  const token = bearerOf(req.headers.authorization);
  if (!isClientId(clientId) || !(await services.cache.realm(realmId))) throw invalidToken();
  const currentHash = tokenHash(token);
  const next = randomToken();
  const nextHash = tokenHash(next);
  if (!(await services.store.clientRegistration.rotateRegistrationToken(realmId, clientId, currentHash, nextHash))) throw invalidToken();
  identify(req, { clientId, userId: null, username: null, attributable: true });
  return { next, nextHash, currentHash };
}

/** The client acting on its own registration (RFC 7592). */
function selfActor(req: FastifyRequest, realmId: string, clientId: string): Actor {
  return { via: 'api', realmId, userId: null, username: null, clientId, ip: req.ip };
}

/** RFC 7592 2.1: the client's registration, with a new registration access token. */
export async function read(services: Services, req: FastifyRequest, realmId: string, clientId: string): Promise<Record<string, unknown>> {
  const { next } = await claim(services, req, realmId, clientId);
  const client = await services.store.clients.get(realmId, clientId);
  if (!client) throw invalidToken();
  await recordSuccess(services, req, { realmId, clientId });
  return response(services, client, next, undefined);
}

/** RFC 7592 2.2: replaces the client's metadata with the body's (absent: the defaults), with a new registration access token. */
export async function update(services: Services, req: FastifyRequest, realmId: string, clientId: string): Promise<Record<string, unknown>> {
  const claimed = await claim(services, req, realmId, clientId);
  try {
    const meta = readMetadata(req.body);
    const client = await services.store.clients.get(realmId, clientId);
    if (!client) throw invalidToken();
    await checkIdentity(meta, client);
    const s = settingsOf(meta);
    const scopes = meta.scope !== undefined ? scopeSplit(meta.scope, client.optionalScopes) : await defaultScopes(services, realmId);
    const change: ClientUpdate = {
      realmId,
      clientId,
      name: s.name,
      redirectUris: { set: s.redirectUris },
      postLogoutRedirectUris: { set: s.postLogoutRedirectUris },
      ...scopes,
      ...clientSettings(s),
    };
    const { client: updated, secret } = await updateClientShowingSecret(services.store, change, selfActor(req, realmId, clientId));
    services.cache.clear();
    await recordSuccess(services, req, { realmId, clientId, ...(secret !== undefined ? { reason: 'a new client secret issued' } : {}) });
    return response(services, updated, claimed.next, secret);
  } catch (err) {
    // Nothing changed: the token the client holds stays its token (the new one was never sent).
    await services.store.clientRegistration.rotateRegistrationToken(realmId, clientId, claimed.nextHash, claimed.currentHash).catch((e: unknown) => req.log.warn({ err: e }, 'could not restore a registration access token'));
    throw err instanceof NotFound ? invalidToken() : err;
  }
}

/** RFC 7592 2.2: the body names this client, and its current secret if any. */
async function checkIdentity(meta: RegistrationMetadata, client: Client): Promise<void> {
  if (meta.clientId === undefined) throw new RegistrationError('invalid_client_metadata', 'client_id is required in an update (RFC 7592 2.2)');
  if (meta.clientId !== client.clientId) throw new RegistrationError('invalid_client_metadata', 'client_id does not match the client of this registration');
  if (meta.clientSecret !== undefined && !(client.secretHash && (await verifyClientSecret(client.secretHash, meta.clientSecret)))) {
    throw new RegistrationError('invalid_client_metadata', 'client_secret does not match the client\'s current secret');
  }
}

/** RFC 7592 2.3: deletes the client; its registration access token goes with it. */
export async function remove(services: Services, req: FastifyRequest, realmId: string, clientId: string): Promise<void> {
  await claim(services, req, realmId, clientId);
  try {
    await deleteClient(services.store, { realmId, clientId }, selfActor(req, realmId, clientId));
  } catch (err) {
    if (err instanceof NotFound) throw invalidToken();
    if (err instanceof ValidationError) throw new RegistrationError('invalid_request', err.message);
    throw err;
  }
  services.cache.clear();
  await recordSuccess(services, req, { realmId, clientId });
}
