import { realmLocales } from '../../i18n/locales.js';
import type { FastifyInstance } from 'fastify';
import { REGISTRATION_SUFFIX } from '../client-registration/paths.js';
import { realmBase, type Services } from '../../services.js';
import { OAuthError } from '../../oauth/errors.js';
import { GRANTS } from '../../oauth/grants/index.js';
import { SIGNING_ALGS } from '../../crypto/keystore.js';
import { jsonErrorHandler } from '../token/routes.js';
import { allowOrigin, preflight, requestOrigin, varyOrigin } from '../plugins/cors.js';
import { realmDocument } from './realm-document.js';
import { ASSERTION_ALGS } from '../../oauth/client-assertion.js';
import { DPOP_ALGS } from '../../oauth/dpop.js';

/** RFC 8414 / OpenID Connect Discovery 1.0: lists only what is implemented. */
export function discoveryDocument(services: Services, realmId: string, scopes: string[], idTokenAlgs: string[], prompts: string[], uiLocales?: string[]): Record<string, unknown> {
  const issuer = realmBase(services.config, realmId);
  const oidc = `${issuer}/protocol/openid-connect`;
  return {
    issuer,
    authorization_endpoint: `${oidc}/auth`,
    token_endpoint: `${oidc}/token`,
    jwks_uri: `${oidc}/certs`,
    device_authorization_endpoint: `${oidc}/auth/device`,
    userinfo_endpoint: `${oidc}/userinfo`,
    introspection_endpoint: `${oidc}/token/introspect`,
    introspection_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'private_key_jwt'],
    introspection_endpoint_auth_signing_alg_values_supported: [...ASSERTION_ALGS],
    revocation_endpoint: `${oidc}/revoke`,
    end_session_endpoint: `${oidc}/logout`,
    // Back-Channel Logout 1.0, 2.1.
    backchannel_logout_supported: true,
    backchannel_logout_session_supported: true,
    // Front-Channel Logout 1.0, 3: iss and sid are added to the URLs of clients that ask for them, and
    // every ID token carries sid.
    frontchannel_logout_supported: true,
    frontchannel_logout_session_supported: true,
    revocation_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'private_key_jwt', 'none'],
    revocation_endpoint_auth_signing_alg_values_supported: [...ASSERTION_ALGS],
    response_types_supported: ['code'],
    response_modes_supported: ['query', 'fragment', 'form_post'],
    grant_types_supported: [...GRANTS.keys()],
    subject_types_supported: ['public'],
    id_token_signing_alg_values_supported: idTokenAlgs,
    // private_key_jwt (RFC 7523); client_secret_jwt is not offered: secrets are stored only as hashes.
    token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'private_key_jwt', 'none'],
    token_endpoint_auth_signing_alg_values_supported: [...ASSERTION_ALGS],
    code_challenge_methods_supported: ['S256'],
    scopes_supported: scopes,
    authorization_response_iss_parameter_supported: true,
    prompt_values_supported: prompts,
    // RFC 9126 5: where requests are pushed; a client may be required to (its own setting), not every one.
    pushed_authorization_request_endpoint: `${oidc}/ext/par/request`,
    // RFC 7591 / OIDC Discovery 3: dynamic client registration, with an initial access token or an admin's token.
    registration_endpoint: `${issuer}${REGISTRATION_SUFFIX}`,
    require_pushed_authorization_requests: false,
    // RFC 9449 5.1: the algorithms of the DPoP proofs the token and userinfo endpoints accept.
    dpop_signing_alg_values_supported: [...DPOP_ALGS],
    claims_supported: ['iss', 'sub', 'aud', 'azp', 'exp', 'iat', 'auth_time', 'nonce', 'at_hash', 'jti', 'scope', 'sid', 'organization', 'preferred_username', 'name', 'given_name', 'family_name', 'middle_name', 'nickname', 'picture', 'website', 'gender', 'birthdate', 'zoneinfo', 'locale', 'profile', 'updated_at', 'email', 'email_verified', 'phone_number', 'phone_number_verified', 'address', 'groups'],
    claims_parameter_supported: false,
    // OIDC Core 6.1 / RFC 9101: signed request objects by value; request_uri only from our PAR endpoint.
    request_parameter_supported: true,
    request_object_signing_alg_values_supported: [...ASSERTION_ALGS],
    request_uri_parameter_supported: false,
    // OIDC Discovery 3 / RFC 8414 2: the languages of the pages, for ui_locales (src/http/i18n.ts); a
    // realm without internationalization lists none (its pages are English whatever is asked).
    ...(uiLocales ? { ui_locales_supported: uiLocales } : {}),
  };
}

/**
 * OIDC Core 3.1.2.1's prompt values, and `create` (Initiating User Registration via OpenID Connect 1.0,
 * 4.2) when the realm lets users register, as Keycloak lists it.
 */
function promptValues(realm: { registrationAllowed: boolean }): string[] {
  return ['none', 'login', 'consent', 'select_account', ...(realm.registrationAllowed ? ['create'] : [])];
}

/**
 * The algorithms the realm's ID tokens are signed with: those its clients chose, RS256 always (OIDC
 * Discovery 3 requires it, and it is the default of id_token_signed_response_alg).
 */
async function idTokenAlgorithms(services: Services, realmId: string): Promise<string[]> {
  const chosen = new Set((await services.store.clients.list(realmId)).map((c) => c.idTokenAlg));
  return Object.keys(SIGNING_ALGS).filter((alg) => alg === 'RS256' || chosen.has(alg));
}

export async function discoveryRoutes(app: FastifyInstance, opts: { services: Services }): Promise<void> {
  const { services } = opts;
  app.setErrorHandler(jsonErrorHandler(services));
  // Public documents: any origin may read them, as Keycloak answers them (they hold no user data).
  varyOrigin(app);
  app.addHook('onRequest', async (req, reply) => {
    const origin = requestOrigin(req);
    if (origin && req.method === 'GET') allowOrigin(reply, origin);
  });
  const publicPaths = [
    '/auth/realms/:realm',
    '/auth/realms/:realm/.well-known/openid-configuration',
    '/.well-known/oauth-authorization-server/auth/realms/:realm',
    '/auth/realms/:realm/protocol/openid-connect/certs',
  ];
  for (const path of publicPaths) preflight(app, services, path, 'GET', { public: true });

  app.get<{ Params: { realm: string } }>('/auth/realms/:realm', async (req, reply) => {
    const realm = await services.cache.realm(req.params.realm);
    if (!realm) throw new OAuthError('invalid_request', 'realm not found', { status: 404 });
    reply.header('cache-control', 'no-cache');
    return realmDocument(services, realm);
  });

  app.get<{ Params: { realm: string } }>('/auth/realms/:realm/.well-known/openid-configuration', async (req, reply) => {
    const realm = await services.cache.realm(req.params.realm);
    if (!realm) throw new OAuthError('invalid_request', 'realm not found', { status: 404 });
    const scopes = [...((await services.cache.realmScopes(realm.id))?.keys() ?? [])];
    reply.header('cache-control', 'public, max-age=60');
    return discoveryDocument(services, realm.id, scopes, await idTokenAlgorithms(services, realm.id), promptValues(realm), realm.internationalizationEnabled ? realmLocales(realm) : undefined);
  });

  // RFC 8414 3: the same metadata at the OAuth well-known path.
  app.get<{ Params: { realm: string } }>('/.well-known/oauth-authorization-server/auth/realms/:realm', async (req, reply) => {
    const realm = await services.cache.realm(req.params.realm);
    if (!realm) throw new OAuthError('invalid_request', 'realm not found', { status: 404 });
    const scopes = [...((await services.cache.realmScopes(realm.id))?.keys() ?? [])];
    reply.header('cache-control', 'public, max-age=60');
    return discoveryDocument(services, realm.id, scopes, await idTokenAlgorithms(services, realm.id), promptValues(realm), realm.internationalizationEnabled ? realmLocales(realm) : undefined);
  });

  app.get<{ Params: { realm: string } }>('/auth/realms/:realm/protocol/openid-connect/certs', async (req, reply) => {
    const realm = await services.cache.realm(req.params.realm);
    if (!realm) throw new OAuthError('invalid_request', 'realm not found', { status: 404 });
    reply.header('cache-control', 'public, max-age=60');
    reply.type('application/jwk-set+json');
    return services.keys.jwks(realm.id);
  });
}
