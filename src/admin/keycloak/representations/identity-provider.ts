import type { FederatedIdentity, IdentityProvider } from '../../../storage/types.js';
import { ValidationError } from '../../validation.js';
import { SECRET_MASK, type ProviderFields } from '../../operations/identity-providers.js';
import { asObject, optBoolean, optString } from '../read-json.js';

/**
 * Keycloak 26's IdentityProviderRepresentation. Realmgate keeps what it acts on; the fields of Keycloak's
 * authentication flows and token store are shown at the values Realmgate behaves as (a first login makes
 * or links the user; provider tokens are not stored).
 */
export interface IdentityProviderRepresentation {
  alias: string;
  displayName?: string;
  internalId: string;
  providerId: string;
  enabled: boolean;
  updateProfileFirstLoginMode: 'on';
  trustEmail: boolean;
  storeToken: false;
  addReadTokenRoleOnCreate: false;
  authenticateByDefault: false;
  linkOnly: boolean;
  hideOnLogin: boolean;
  firstBrokerLoginFlowAlias: 'first broker login';
  organizationId?: string;
  config: Record<string, string>;
}

/**
 * The representation an admin API or export shows. The client secret is Keycloak's mask unless
 * `clientSecret` (an export with secrets) is given; it is never read from the stored config.
 */
export function toIdentityProviderRepresentation(p: IdentityProvider, opts: { clientSecret?: string } = {}): IdentityProviderRepresentation {
  const config: Record<string, string> = { ...p.config };
  if (p.sealedClientSecret) config.clientSecret = opts.clientSecret ?? SECRET_MASK;
  if (p.hideOnLogin) config.hideOnLoginPage = 'true';
  return {
    alias: p.alias,
    ...(p.displayName !== null ? { displayName: p.displayName } : {}),
    internalId: p.id,
    providerId: p.providerId,
    enabled: p.enabled,
    updateProfileFirstLoginMode: 'on',
    trustEmail: p.trustEmail,
    storeToken: false,
    addReadTokenRoleOnCreate: false,
    authenticateByDefault: false,
    linkOnly: p.linkOnly,
    hideOnLogin: p.hideOnLogin,
    firstBrokerLoginFlowAlias: 'first broker login',
    ...(p.organizationId !== null ? { organizationId: p.organizationId } : {}),
    config,
  };
}

/**
 * A provider from a create or update body (the admin API, a realm import). Unknown fields are ignored,
 * as Keycloak's Jackson mapping does; a wrong type is a clear error. `storeToken: true` is refused:
 * Realmgate does not keep a provider's tokens, and silently not doing it would surprise who relies on it.
 */
export function readIdentityProvider(body: unknown): ProviderFields {
  const o = asObject(body, 'identity provider');
  const out: ProviderFields = {};
  const alias = optString(o, 'alias');
  if (alias !== undefined) out.alias = alias;
  const providerId = optString(o, 'providerId');
  if (providerId !== undefined) out.providerId = providerId;
  if (o.displayName === null) out.displayName = null;
  else {
    const displayName = optString(o, 'displayName');
    if (displayName !== undefined) out.displayName = displayName === '' ? null : displayName;
  }
  for (const key of ['enabled', 'hideOnLogin', 'trustEmail', 'linkOnly'] as const) {
    const v = optBoolean(o, key);
    if (v !== undefined) out[key] = v;
  }
  if (optBoolean(o, 'storeToken') === true) throw new ValidationError('storeToken: Realmgate does not store an identity provider\'s tokens');
  if (o.organizationId === null) out.organizationId = null;
  else {
    const organizationId = optString(o, 'organizationId');
    if (organizationId !== undefined) out.organizationId = organizationId === '' ? null : organizationId;
  }
  if (o.config !== undefined && o.config !== null) {
    const c = asObject(o.config, 'config');
    const config: Record<string, string> = {};
    for (const [k, v] of Object.entries(c)) {
      if (v === null || v === undefined) continue;
      if (typeof v !== 'string') throw new ValidationError(`config.${k} must be a string (Keycloak's config values are strings: "true", not true)`);
      config[k] = v;
    }
    // Keycloak before 26 kept "hide on login page" in the config.
    if (out.hideOnLogin === undefined && config.hideOnLoginPage !== undefined) out.hideOnLogin = config.hideOnLoginPage === 'true';
    delete config.hideOnLoginPage;
    out.config = config;
  }
  return out;
}

/** Keycloak's FederatedIdentityRepresentation: a user's account at a provider. */
export interface FederatedIdentityRepresentation {
  identityProvider: string;
  userId: string;
  userName: string;
}

export function toFederatedIdentityRepresentation(f: FederatedIdentity): FederatedIdentityRepresentation {
  return { identityProvider: f.identityProvider, userId: f.federatedUserId, userName: f.federatedUsername ?? f.federatedUserId };
}

/** The body of "link a user to a provider" (POST users/{id}/federated-identity/{alias}): userId required, userName optional. */
export function readFederatedIdentity(body: unknown): { userId: string; userName?: string } {
  const o = asObject(body, 'federated identity');
  const userId = optString(o, 'userId');
  if (!userId) throw new ValidationError('userId (the account\'s id at the provider, its sub) is required');
  const userName = optString(o, 'userName');
  return { userId, ...(userName ? { userName } : {}) };
}
