import type { Client } from '../../../storage/types.js';
import type { BackchannelLogoutChange, ClientChanges, FrontchannelLogoutChange } from '../../operations/clients.js';
import { ValidationError } from '../../validation.js';

/**
 * Which ways of sending its secret a confidential client allows (RFC 6749 2.3.1, OIDC Core 9), space-separated:
 * client_secret_basic, client_secret_post or both (the CLI's --auth-method). Keycloak's ClientRepresentation
 * names only the authenticator, clientAuthenticatorType "client-secret", which takes the secret both ways
 * (its ClientIdAndSecretAuthenticator); a Realmgate client may be restricted to one, so the list is a
 * realmgate. attribute, read back on create and update (Keycloak keeps unknown attributes as they are).
 */
export const AUTH_METHODS_ATTRIBUTE = 'realmgate.token.endpoint.auth.methods';

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
    const v = a[name];
    if (v === undefined || v === null || v === '') continue;
    if (v === true || v === 'true') out[key] = true;
    else if (v === false || v === 'false') out[key] = false;
    else throw new ValidationError(`attributes.${name} must be "true" or "false"`);
  }
  return Object.keys(out).length > 0 ? out : undefined;
}

/** Keycloak's client attribute of RFC 9126 6 (its ParConfig): the client may use only pushed authorization requests. */
export const REQUIRE_PAR_ATTRIBUTE = 'require.pushed.authorization.requests';

/** The attribute as Keycloak writes it: "true" or "false" (Keycloak's exports carry "false"). */
export function parAttributes(c: Client): Record<string, string> {
  return { [REQUIRE_PAR_ATTRIBUTE]: String(c.requirePushedAuthorizationRequests) };
}

/** The attribute of a Keycloak attributes map: "true"/"false" or a boolean; undefined when absent or empty. */
export function requireParFromAttributes(a: Record<string, unknown>): boolean | undefined {
  const v = a[REQUIRE_PAR_ATTRIBUTE];
  if (v === undefined || v === null || v === '') return undefined;
  if (v === true || v === 'true') return true;
  if (v === false || v === 'false') return false;
  throw new ValidationError(`attributes.${REQUIRE_PAR_ATTRIBUTE} must be "true" or "false"`);
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
  const v = a[FRONTCHANNEL_ATTRIBUTES.sessionRequired];
  if (v === true || v === 'true') out.sessionRequired = true;
  else if (v === false || v === 'false') out.sessionRequired = false;
  else if (v !== undefined && v !== null && v !== '') throw new ValidationError(`attributes.${FRONTCHANNEL_ATTRIBUTES.sessionRequired} must be "true" or "false"`);
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
  clientAuthenticatorType: 'client-secret';
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
    clientAuthenticatorType: 'client-secret',
    standardFlowEnabled: c.standardFlowEnabled,
    implicitFlowEnabled: false,
    directAccessGrantsEnabled: c.directAccessGrantsEnabled,
    serviceAccountsEnabled: c.serviceAccountsEnabled,
    redirectUris: c.redirectUris,
    webOrigins: c.webOrigins,
    defaultClientScopes: c.scopes,
    optionalClientScopes: [],
    frontchannelLogout: c.frontchannelLogout.enabled,
    attributes: {
      ...backchannelAttributes(c),
      ...parAttributes(c),
      ...frontchannelAttributes(c),
      'pkce.code.challenge.method': c.pkceMethod,
      // Keycloak joins the post-logout redirect URIs with '##'.
      'post.logout.redirect.uris': c.postLogoutRedirectUris.join('##'),
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
  if (bool(body, 'bearerOnly') === true) throw new ValidationError('bearer-only clients are not supported');
  const authenticator = body.clientAuthenticatorType;
  // Keycloak's other authenticators (client-jwt, client-secret-jwt, client-x509) cannot be honoured; "none"
  // is what Keycloak's dynamic registration gives a public client, whose publicClient says the same.
  if (authenticator !== undefined && authenticator !== null && authenticator !== 'client-secret' && authenticator !== 'none') {
    throw new ValidationError(`clientAuthenticatorType ${JSON.stringify(authenticator)} is not supported: Realmgate clients authenticate with a secret (client-secret)`);
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
  }
  const frontchannel = frontchannelFromRepresentation(body.frontchannelLogout, attrs !== undefined && attrs !== null ? (attrs as Record<string, unknown>) : {});
  if (frontchannel) out.frontchannelLogout = frontchannel;
  return out;
}
