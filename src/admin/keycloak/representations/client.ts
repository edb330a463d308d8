import { TOKEN_EXCHANGE_REFRESH, type Client, type TokenExchangeRefresh, type RequestObjectRequired } from '../../../storage/types.js';
import { defaultScopesOf } from '../../../oauth/scopes.js';
import type { BackchannelLogoutChange, ClientChanges, ClientJwtKeysChange, FrontchannelLogoutChange } from '../../operations/clients.js';
import { checkRequestObjectAlg, checkRequestObjectRequired } from '../../operations/clients.js';
import { ValidationError } from '../../validation.js';

/**
 * Which ways of sending its secret a confidential client allows (RFC 6749 2.3.1, OIDC Core 9), space-separated:
 * client_secret_basic, client_secret_post or both (the CLI's --auth-method). Keycloak's ClientRepresentation
 * names only the authenticator, clientAuthenticatorType "client-secret", which takes the secret both ways
 * (its ClientIdAndSecretAuthenticator); a Realmgate client may be restricted to one, so the list is a
 * realmgate. attribute, read back on create and update (Keycloak keeps unknown attributes as they are).
 */
export const AUTH_METHODS_ATTRIBUTE = 'realmgate.token.endpoint.auth.methods';

/** Keycloak's client attribute: until when the rotated (previous) secret is accepted, epoch seconds. */
export const ROTATED_SECRET_EXPIRATION_ATTRIBUTE = 'client.secret.rotated.expiration.time';

/** Keycloak's client attributes of OpenID Connect Back-Channel Logout 1.0 (its OIDCConfigAttributes). */
export const BACKCHANNEL_ATTRIBUTES = {
  url: 'backchannel.logout.url',
  sessionRequired: 'backchannel.logout.session.required',
  revokeOfflineTokens: 'backchannel.logout.revoke.offline.tokens',
} as const;

/** The three attributes as Keycloak writes them ("true"/"false"; no url attribute when there is none). */
export function backchannelAttributes(c: Client): Record<string, string> {
  const b = c.backchannelLogout;
  return {
    ...(b.url !== null ? { [BACKCHANNEL_ATTRIBUTES.url]: b.url } : {}),
    [BACKCHANNEL_ATTRIBUTES.sessionRequired]: String(b.sessionRequired),
    [BACKCHANNEL_ATTRIBUTES.revokeOfflineTokens]: String(b.revokeOfflineTokens),
  };
}

/**
 * The back-channel logout attributes of a Keycloak attributes map: "true"/"false" (Keycloak's strings) or
 * booleans; an empty or null url removes it. Undefined when none of the three is there.
 */
export function backchannelFromAttributes(a: Record<string, unknown>): BackchannelLogoutChange | undefined {
  const out: BackchannelLogoutChange = {};
  const url = a[BACKCHANNEL_ATTRIBUTES.url];
  if (url !== undefined) {
    if (url !== null && typeof url !== 'string') throw new ValidationError(`attributes.${BACKCHANNEL_ATTRIBUTES.url} must be a string`);
    out.url = url;
  }
  for (const [key, name] of [['sessionRequired', BACKCHANNEL_ATTRIBUTES.sessionRequired], ['revokeOfflineTokens', BACKCHANNEL_ATTRIBUTES.revokeOfflineTokens]] as const) {
    const v = switchFromAttributes(a, name);
    if (v !== undefined) out[key] = v;
  }
  return Object.keys(out).length > 0 ? out : undefined;
}

/** Keycloak's client attribute of RFC 9126 6 (its ParConfig): the client may use only pushed authorization requests. */
export const REQUIRE_PAR_ATTRIBUTE = 'require.pushed.authorization.requests';

/** The attribute as Keycloak writes it: "true" or "false" (Keycloak's exports carry "false"). */
export function parAttributes(c: Client): Record<string, string> {
  return { [REQUIRE_PAR_ATTRIBUTE]: String(c.requirePushedAuthorizationRequests) };
}

/** A switch of a Keycloak attributes map: "true"/"false" or a boolean; undefined when absent or empty. */
function switchFromAttributes(a: Record<string, unknown>, name: string): boolean | undefined {
  const v = a[name];
  if (v === undefined || v === null || v === '') return undefined;
  if (v === true || v === 'true') return true;
  if (v === false || v === 'false') return false;
  throw new ValidationError(`attributes.${name} must be "true" or "false"`);
}

export function requireParFromAttributes(a: Record<string, unknown>): boolean | undefined {
  return switchFromAttributes(a, REQUIRE_PAR_ATTRIBUTE);
}

/** Keycloak's client attribute of RFC 9449 (its OIDCAdvancedConfigWrapper isUseDPoP): the token endpoint requires a DPoP proof. */
export const DPOP_BOUND_ATTRIBUTE = 'dpop.bound.access.tokens';

/** The attribute as Keycloak writes it: "true" or "false". */
export function dpopAttributes(c: Client): Record<string, string> {
  return { [DPOP_BOUND_ATTRIBUTE]: String(c.dpopBoundAccessTokens) };
}

export function dpopBoundFromAttributes(a: Record<string, unknown>): boolean | undefined {
  return switchFromAttributes(a, DPOP_BOUND_ATTRIBUTE);
}

/** Keycloak's client attributes of its standard token exchange (RFC 8693; its OIDCAdvancedConfigWrapper). */
export const TOKEN_EXCHANGE_ATTRIBUTES = {
  enabled: 'standard.token.exchange.enabled',
  refresh: 'standard.token.exchange.enableRefreshRequestedTokenType',
} as const;

/** The two attributes as Keycloak writes them: "true"/"false", and NO or SAME_SESSION. */
export function tokenExchangeAttributes(c: Client): Record<string, string> {
  return { [TOKEN_EXCHANGE_ATTRIBUTES.enabled]: String(c.standardTokenExchange), [TOKEN_EXCHANGE_ATTRIBUTES.refresh]: c.tokenExchangeRefresh };
}

/** The attributes of a Keycloak attributes map, each undefined when absent or empty; a wrong value is refused. */
export function tokenExchangeFromAttributes(a: Record<string, unknown>): { standardTokenExchange?: boolean; tokenExchangeRefresh?: TokenExchangeRefresh } {
  const out: { standardTokenExchange?: boolean; tokenExchangeRefresh?: TokenExchangeRefresh } = {};
  const on = switchFromAttributes(a, TOKEN_EXCHANGE_ATTRIBUTES.enabled);
  if (on !== undefined) out.standardTokenExchange = on;
  const refresh = a[TOKEN_EXCHANGE_ATTRIBUTES.refresh];
  if (typeof refresh === 'string' && (TOKEN_EXCHANGE_REFRESH as readonly string[]).includes(refresh)) out.tokenExchangeRefresh = refresh as TokenExchangeRefresh;
  else if (refresh !== undefined && refresh !== null && refresh !== '') throw new ValidationError(`attributes.${TOKEN_EXCHANGE_ATTRIBUTES.refresh} must be "NO" or "SAME_SESSION"`);
  return out;
}

/** Keycloak's client attributes of JWT-secured authorization requests (RFC 9101; its OIDCConfigAttributes). */
export const REQUEST_OBJECT_ATTRIBUTES = {
  required: 'request.object.required',
  alg: 'request.object.signature.alg',
} as const;

/** The two attributes as Keycloak writes them: one of its four values, and an algorithm, "none" or "any". */
export function requestObjectAttributes(c: Client): Record<string, string> {
  return { [REQUEST_OBJECT_ATTRIBUTES.required]: c.requestObjectRequired, [REQUEST_OBJECT_ATTRIBUTES.alg]: c.requestObjectSignatureAlg ?? 'any' };
}

/** The attributes of a Keycloak attributes map, each undefined when absent or empty; a wrong value is refused. */
export function requestObjectFromAttributes(a: Record<string, unknown>): { requestObjectRequired?: RequestObjectRequired; requestObjectSignatureAlg?: string | null } {
  const out: { requestObjectRequired?: RequestObjectRequired; requestObjectSignatureAlg?: string | null } = {};
  const required = a[REQUEST_OBJECT_ATTRIBUTES.required];
  if (required !== undefined && required !== null && required !== '') {
    if (typeof required !== 'string') throw new ValidationError(`attributes.${REQUEST_OBJECT_ATTRIBUTES.required} must be a string`);
    out.requestObjectRequired = checkRequestObjectRequired(required);
  }
  const alg = a[REQUEST_OBJECT_ATTRIBUTES.alg];
  if (alg !== undefined && alg !== null && alg !== '') {
    if (typeof alg !== 'string') throw new ValidationError(`attributes.${REQUEST_OBJECT_ATTRIBUTES.alg} must be a string`);
    out.requestObjectSignatureAlg = checkRequestObjectAlg(alg);
  }
  return out;
}

/** Keycloak's client attributes of OpenID Connect Front-Channel Logout 1.0 (its OIDCConfigAttributes); the switch is frontchannelLogout. */
export const FRONTCHANNEL_ATTRIBUTES = {
  url: 'frontchannel.logout.url',
  sessionRequired: 'frontchannel.logout.session.required',
} as const;

/** The two attributes as Keycloak writes them ("true"/"false"; no url attribute when there is none). */
export function frontchannelAttributes(c: Client): Record<string, string> {
  const f = c.frontchannelLogout;
  return {
    ...(f.url !== null ? { [FRONTCHANNEL_ATTRIBUTES.url]: f.url } : {}),
    [FRONTCHANNEL_ATTRIBUTES.sessionRequired]: String(f.sessionRequired),
  };
}

/** Keycloak's client attributes of its client-jwt authenticator (signed JWT, private_key_jwt). */
export const JWT_ATTRIBUTES = {
  useJwksUrl: 'use.jwks.url',
  jwksUrl: 'jwks.url',
  useJwksString: 'use.jwks.string',
  jwksString: 'jwks.string',
  certificate: 'jwt.credential.certificate',
  publicKey: 'jwt.credential.public.key',
  signingAlg: 'token.endpoint.auth.signing.alg',
  maxExp: 'token.endpoint.auth.signing.max.exp',
} as const;

/** Keycloak's clientAuthenticatorType of a client. */
export function authenticatorType(c: Client): 'client-secret' | 'client-jwt' {
  return c.authMethods.includes('private_key_jwt') ? 'client-jwt' : 'client-secret';
}

/** The client-jwt attributes as Keycloak writes them (strings; none when the client has no JWT keys). */
export function jwtKeyAttributes(c: Client): Record<string, string> {
  const k = c.jwtKeys;
  if (!k) return {};
  return {
    [JWT_ATTRIBUTES.useJwksUrl]: String(k.useJwksUrl),
    ...(k.jwksUrl !== null ? { [JWT_ATTRIBUTES.jwksUrl]: k.jwksUrl } : {}),
    [JWT_ATTRIBUTES.useJwksString]: String(k.useJwksString),
    ...(k.jwksString !== null ? { [JWT_ATTRIBUTES.jwksString]: k.jwksString } : {}),
    ...(k.certificate !== null ? { [JWT_ATTRIBUTES.certificate]: k.certificate } : {}),
    ...(k.publicKey ? { [JWT_ATTRIBUTES.publicKey]: k.publicKey } : {}),
    ...(k.signingAlg !== null ? { [JWT_ATTRIBUTES.signingAlg]: k.signingAlg } : {}),
    ...(k.maxExp !== null ? { [JWT_ATTRIBUTES.maxExp]: String(k.maxExp) } : {}),
  };
}

/**
 * The front-channel logout settings of a client representation: its frontchannelLogout boolean and the
 * attributes ("true"/"false" strings or booleans; an empty or null url removes it). Undefined when none is there.
 */
export function frontchannelFromRepresentation(switchValue: unknown, a: Record<string, unknown>): FrontchannelLogoutChange | undefined {
  const out: FrontchannelLogoutChange = {};
  if (switchValue !== undefined && switchValue !== null) {
    if (typeof switchValue !== 'boolean') throw new ValidationError('frontchannelLogout must be true or false');
    out.enabled = switchValue;
  }
  const url = a[FRONTCHANNEL_ATTRIBUTES.url];
  if (url !== undefined) {
    if (url !== null && typeof url !== 'string') throw new ValidationError(`attributes.${FRONTCHANNEL_ATTRIBUTES.url} must be a string`);
    out.url = url;
  }
  const v = switchFromAttributes(a, FRONTCHANNEL_ATTRIBUTES.sessionRequired);
  if (v !== undefined) out.sessionRequired = v;
  return Object.keys(out).length > 0 ? out : undefined;
}

/**
 * The client-jwt attributes of a Keycloak attributes map ("true"/"false" strings or booleans; "" clears a
 * value, as Keycloak's exports write unset ones). Undefined when none is there.
 */
export function jwtKeysFromAttributes(a: Record<string, unknown>): ClientJwtKeysChange | undefined {
  const out: ClientJwtKeysChange = {};
  for (const [key, name] of [['useJwksUrl', JWT_ATTRIBUTES.useJwksUrl], ['useJwksString', JWT_ATTRIBUTES.useJwksString]] as const) {
    const v = switchFromAttributes(a, name);
    if (v !== undefined) out[key] = v;
  }
  for (const [key, name] of [['jwksUrl', JWT_ATTRIBUTES.jwksUrl], ['jwksString', JWT_ATTRIBUTES.jwksString], ['certificate', JWT_ATTRIBUTES.certificate], ['publicKey', JWT_ATTRIBUTES.publicKey], ['signingAlg', JWT_ATTRIBUTES.signingAlg]] as const) {
    const v = a[name];
    if (v === undefined) continue;
    if (v !== null && typeof v !== 'string') throw new ValidationError(`attributes.${name} must be a string`);
    out[key] = v;
  }
  const max = a[JWT_ATTRIBUTES.maxExp];
  if (max !== undefined) {
    if (max === null || max === '') out.maxExp = null;
    else if ((typeof max === 'string' && /^\d{1,9}$/.test(max)) || typeof max === 'number') out.maxExp = Number(max);
    else throw new ValidationError(`attributes.${JWT_ATTRIBUTES.maxExp} must be a number of seconds`);
  }
  return Object.keys(out).length > 0 ? out : undefined;
}

/** Keycloak's ClientRepresentation, the fields Realmgate has. The id is the client id. */
export interface ClientRepresentation {
  id: string;
  clientId: string;
  name?: string;
  enabled: boolean;
  protocol: 'openid-connect';
  publicClient: boolean;
  bearerOnly: boolean;
  clientAuthenticatorType: 'client-secret' | 'client-jwt';
  standardFlowEnabled: boolean;
  implicitFlowEnabled: boolean;
  directAccessGrantsEnabled: boolean;
  serviceAccountsEnabled: boolean;
  redirectUris: string[];
  webOrigins: string[];
  defaultClientScopes: string[];
  optionalClientScopes: string[];
  /** Front-Channel Logout 1.0: the browser frames attributes' frontchannel.logout.url at logout. */
  frontchannelLogout: boolean;
  /** true: tokens carry every role of their user; false: only the roles in the client's scope (its scope mappings). */
  fullScopeAllowed: boolean;
  notBefore: number;
  attributes: Record<string, string>;
}

export function toClientRepresentation(c: Client): ClientRepresentation {
  return {
    id: c.clientId,
    clientId: c.clientId,
    ...(c.name !== null ? { name: c.name } : {}),
    enabled: c.enabled,
    protocol: 'openid-connect',
    publicClient: c.public,
    bearerOnly: false,
    clientAuthenticatorType: authenticatorType(c),
    standardFlowEnabled: c.standardFlowEnabled,
    implicitFlowEnabled: false,
    directAccessGrantsEnabled: c.directAccessGrantsEnabled,
    serviceAccountsEnabled: c.serviceAccountsEnabled,
    redirectUris: c.redirectUris,
    webOrigins: c.webOrigins,
    defaultClientScopes: defaultScopesOf(c),
    optionalClientScopes: c.optionalScopes,
    frontchannelLogout: c.frontchannelLogout.enabled,
    fullScopeAllowed: c.fullScopeAllowed,
    notBefore: c.notBefore,
    attributes: {
      ...backchannelAttributes(c),
      ...parAttributes(c),
      ...requestObjectAttributes(c),
      ...tokenExchangeAttributes(c),
      ...dpopAttributes(c),
      ...frontchannelAttributes(c),
      ...jwtKeyAttributes(c),
      'pkce.code.challenge.method': c.pkceMethod,
      // Keycloak joins the post-logout redirect URIs with '##'.
      'post.logout.redirect.uris': c.postLogoutRedirectUris.join('##'),
      // Keycloak's rotated secret (ClientSecretConfig): until when the previous secret is accepted, in
      // epoch seconds; read only (the secret itself is stored only as a hash).
      ...(c.rotatedSecret ? { [ROTATED_SECRET_EXPIRATION_ATTRIBUTE]: String(c.rotatedSecret.expiresAt) } : {}),
      // A public client does not authenticate (its methods are ['none']).
      ...(c.public ? {} : { [AUTH_METHODS_ATTRIBUTE]: c.authMethods.join(' ') }),
    },
  };
}

function strList(body: Record<string, unknown>, key: string): string[] | undefined {
  const v = body[key];
  if (v === undefined || v === null) return undefined;
  if (!Array.isArray(v) || v.some((x) => typeof x !== 'string')) throw new ValidationError(`${key} must be a list of strings`);
  return v as string[];
}

function bool(body: Record<string, unknown>, key: string): boolean | undefined {
  const v = body[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'boolean') throw new ValidationError(`${key} must be true or false`);
  return v;
}

/** A create or update body in our terms; unknown fields are ignored, fields we cannot honour are refused. */
export function fromClientRepresentation(body: Record<string, unknown>): ClientChanges & { clientId?: string; secret?: string } {
  const out: ClientChanges & { clientId?: string; secret?: string } = {};
  if (body.clientId !== undefined) {
    if (typeof body.clientId !== 'string') throw new ValidationError('clientId must be a string');
    out.clientId = body.clientId;
  }
  if (body.secret !== undefined && body.secret !== null) {
    if (typeof body.secret !== 'string') throw new ValidationError('secret must be a string');
    out.secret = body.secret;
  }
  if (body.name !== undefined) {
    if (body.name !== null && typeof body.name !== 'string') throw new ValidationError('name must be a string');
    out.name = body.name === '' ? null : (body.name as string | null);
  }
  const set = <K extends keyof ClientChanges>(k: K, v: ClientChanges[K] | undefined): void => {
    if (v !== undefined) out[k] = v;
  };
  set('enabled', bool(body, 'enabled'));
  set('public', bool(body, 'publicClient'));
  set('standardFlowEnabled', bool(body, 'standardFlowEnabled'));
  set('directAccessGrantsEnabled', bool(body, 'directAccessGrantsEnabled'));
  set('serviceAccountsEnabled', bool(body, 'serviceAccountsEnabled'));
  set('redirectUris', strList(body, 'redirectUris'));
  set('webOrigins', strList(body, 'webOrigins'));
  set('scopes', strList(body, 'defaultClientScopes'));
  set('optionalScopes', strList(body, 'optionalClientScopes'));
  set('fullScopeAllowed', bool(body, 'fullScopeAllowed'));
  if (body.notBefore !== undefined && body.notBefore !== null) {
    if (typeof body.notBefore !== 'number' || !Number.isSafeInteger(body.notBefore)) throw new ValidationError('notBefore must be a whole number of seconds since the epoch (0: none)');
    out.notBefore = body.notBefore;
  }
  if (bool(body, 'bearerOnly') === true) throw new ValidationError('bearer-only clients are not supported');
  const authenticator = body.clientAuthenticatorType;
  // client-secret and client-jwt (private_key_jwt) are honoured; "none" is what Keycloak's dynamic
  // registration gives a public client, whose publicClient says the same. client-secret-jwt (HMAC with the
  // secret) cannot be: secrets are stored only as hashes; client-x509 (mutual TLS) is not offered.
  if (authenticator !== undefined && authenticator !== null && authenticator !== 'client-secret' && authenticator !== 'client-jwt' && authenticator !== 'none') {
    throw new ValidationError(`clientAuthenticatorType ${JSON.stringify(authenticator)} is not supported: use client-secret or client-jwt (signed JWT)`);
  }
  if (bool(body, 'implicitFlowEnabled') === true) throw new ValidationError('the implicit flow is not supported (RFC 9700 2.1.2)');
  const attrs = body.attributes;
  if (attrs !== undefined && attrs !== null) {
    if (typeof attrs !== 'object' || Array.isArray(attrs)) throw new ValidationError('attributes must be an object');
    const a = attrs as Record<string, unknown>;
    const pkce = a['pkce.code.challenge.method'];
    if (pkce !== undefined && pkce !== null) {
      if (pkce !== '' && pkce !== 'S256') throw new ValidationError('pkce.code.challenge.method must be S256 or empty (plain is refused, RFC 9700 2.1.1)');
      out.pkceMethod = pkce;
    }
    const logout = a['post.logout.redirect.uris'];
    if (typeof logout === 'string') out.postLogoutRedirectUris = logout.split('##').filter((u) => u !== '' && u !== '+');
    const methods = a[AUTH_METHODS_ATTRIBUTE];
    // Turning a client public drops its methods: the attribute read from it while it was confidential goes too.
    if (methods !== undefined && methods !== null && out.public !== true) {
      if (typeof methods !== 'string') throw new ValidationError(`attributes.${AUTH_METHODS_ATTRIBUTE} must be a string`);
      out.authMethods = [methods];
    }
    const backchannel = backchannelFromAttributes(a);
    if (backchannel) out.backchannelLogout = backchannel;
    const requirePar = requireParFromAttributes(a);
    if (requirePar !== undefined) out.requirePushedAuthorizationRequests = requirePar;
    Object.assign(out, tokenExchangeFromAttributes(a));
    const dpopBound = dpopBoundFromAttributes(a);
    if (dpopBound !== undefined) out.dpopBoundAccessTokens = dpopBound;
    Object.assign(out, requestObjectFromAttributes(a));
    const jwtKeys = jwtKeysFromAttributes(a);
    if (jwtKeys) out.jwtKeys = jwtKeys;
  }
  const frontchannel = frontchannelFromRepresentation(body.frontchannelLogout, attrs !== undefined && attrs !== null ? (attrs as Record<string, unknown>) : {});
  if (frontchannel) out.frontchannelLogout = frontchannel;
  // clientAuthenticatorType decides between a secret and a signed JWT; the realmgate. attribute then only
  // picks among the secret methods (one left from client-jwt is dropped).
  // Without clientAuthenticatorType, the attribute read back from a client-jwt client ("private_key_jwt")
  // changes nothing; on a client-secret client it is refused (changeClient): the authenticator decides.
  if (out.public !== true && authenticator !== 'client-jwt' && authenticator !== 'client-secret' && out.authMethods?.some((m) => m.includes('private_key_jwt'))) {
    delete out.authMethods;
    out.expectJwt = true;
  }
  if (out.public !== true && authenticator === 'client-jwt') out.authMethods = ['private_key_jwt'];
  else if (out.public !== true && authenticator === 'client-secret' && out.authMethods?.some((m) => m.includes('private_key_jwt'))) out.authMethods = ['client_secret_basic', 'client_secret_post'];
  else if (out.public !== true && authenticator === 'client-secret' && out.authMethods === undefined) out.secretAuthenticator = true;
  return out;
}
