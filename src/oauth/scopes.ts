import type { Client, Scope } from '../storage/types.js';
import { OAuthError } from './errors.js';

// RFC 6749 3.3: scope = scope-token *( SP scope-token ), scope-token = 1*( %x21 / %x23-5B / %x5D-7E )
const SCOPE_TOKEN = /^[\x21\x23-\x5B\x5D-\x7E]+$/;

export function parseScope(value: string | undefined): string[] {
  if (value === undefined) return [];
  const tokens = value.split(' ');
  const out: string[] = [];
  for (const t of tokens) {
    if (t === '') continue;
    if (!SCOPE_TOKEN.test(t)) throw new OAuthError('invalid_scope', 'scope contains characters RFC 6749 3.3 does not allow');
    if (!out.includes(t)) out.push(t);
  }
  return out;
}

/** Every requested scope must exist in the realm and be allowed for the client. */
export function checkRequestedScopes(requested: string[], client: Client, realmScopes: Map<string, Scope>): void {
  if (requested.length === 0) throw new OAuthError('invalid_scope', 'scope is required');
  for (const s of requested) {
    if (!realmScopes.has(s) || !client.scopes.includes(s)) throw new OAuthError('invalid_scope', 'a requested scope is not available to this client');
  }
}

/**
 * Keycloak's default client scopes: a client registered with `profile` or `email` gets their claims
 * with `openid` alone, without asking for them (as Keycloak releases its default client scopes). They are
 * not added to the granted `scope` value; the consent page names them.
 */
export const DEFAULT_CLAIM_SCOPES: readonly string[] = ['profile', 'email'];

/**
 * A client's default scopes: all its scopes but its optional ones (Keycloak's optionalClientScopes,
 * granted only when asked for).
 */
export function defaultScopesOf(client: Pick<Client, 'scopes' | 'optionalScopes'>): string[] {
  return client.optionalScopes.length === 0 ? client.scopes : client.scopes.filter((s) => !client.optionalScopes.includes(s));
}

/**
 * The scopes whose claims a token releases: the granted ones, plus the client's default ones that openid
 * implies (an optional profile or email is released only when asked for, as in Keycloak).
 */
export function claimScopes(granted: readonly string[], client: Pick<Client, 'scopes' | 'optionalScopes'> | undefined): string[] {
  if (!granted.includes('openid') || !client) return [...granted];
  const defaults = defaultScopesOf(client);
  const implied = DEFAULT_CLAIM_SCOPES.filter((s) => defaults.includes(s) && !granted.includes(s));
  return [...granted, ...implied];
}
