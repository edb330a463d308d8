import type { IdentityProvider, IdentityProviderType } from '../storage/types.js';

/**
 * Keycloak's social identity providers (org.keycloak.social.*), with the endpoints and checks Keycloak
 * gives them: a realm moved from Keycloak keeps its "Sign in with Google" or "with GitHub" button, and an
 * admin creates one from the client id and secret alone.
 * - google: an OpenID Connect provider (its ID token checked as any other's), with the hosted domain check;
 * - gitlab: an OpenID Connect provider (GitLab.com's endpoints; a self-managed GitLab's when the config names them);
 * - linkedin-openid-connect: an OpenID Connect provider that does not return the nonce;
 * - github, microsoft, facebook, bitbucket: OAuth 2.0 providers without ID tokens; the account is their user API's
 *   answer to the access token (src/oauth/broker.ts).
 * Twitter, Instagram, PayPal, Stack Overflow and OpenShift are not brokered.
 */

/** Google's OpenID Connect endpoints (https://accounts.google.com/.well-known/openid-configuration), as Keycloak's GoogleIdentityProvider has them. */
const GOOGLE: Readonly<Record<string, string>> = {
  issuer: 'https://accounts.google.com',
  authorizationUrl: 'https://accounts.google.com/o/oauth2/v2/auth',
  tokenUrl: 'https://oauth2.googleapis.com/token',
  userInfoUrl: 'https://openidconnect.googleapis.com/v1/userinfo',
  jwksUrl: 'https://www.googleapis.com/oauth2/v3/certs',
  useJwksUrl: 'true',
  validateSignature: 'true',
  defaultScope: 'openid profile email',
};

/**
 * GitLab.com's OpenID Connect endpoints (https://gitlab.com/.well-known/openid-configuration), those of
 * Keycloak's GitLabIdentityProvider but for the account: Keycloak reads GitLab's REST API (/api/v4/user,
 * the read_user scope); here it is the standard UserInfo (/oauth/userinfo: sub, nickname,
 * preferred_username, email, email_verified), whose sub is the same user id, so links made by Keycloak
 * still match. The scope stays Keycloak's, so an application registered at GitLab for Keycloak (openid
 * and read_user) needs no change.
 */
const GITLAB: Readonly<Record<string, string>> = {
  issuer: 'https://gitlab.com',
  authorizationUrl: 'https://gitlab.com/oauth/authorize',
  tokenUrl: 'https://gitlab.com/oauth/token',
  userInfoUrl: 'https://gitlab.com/oauth/userinfo',
  jwksUrl: 'https://gitlab.com/oauth/discovery/keys',
  useJwksUrl: 'true',
  validateSignature: 'true',
  defaultScope: 'openid read_user',
};

/**
 * LinkedIn's OpenID Connect endpoints (https://www.linkedin.com/oauth/.well-known/openid-configuration), as
 * Keycloak's LinkedInOIDCIdentityProviderFactory reads them, with its workaround: LinkedIn does not return
 * the nonce in its ID tokens, so none is sent (disableNonce). Its JWKS keys have no "use", which jose takes.
 */
const LINKEDIN: Readonly<Record<string, string>> = {
  issuer: 'https://www.linkedin.com/oauth',
  authorizationUrl: 'https://www.linkedin.com/oauth/v2/authorization',
  tokenUrl: 'https://www.linkedin.com/oauth/v2/accessToken',
  userInfoUrl: 'https://api.linkedin.com/v2/userinfo',
  jwksUrl: 'https://www.linkedin.com/oauth/openid/jwks',
  useJwksUrl: 'true',
  validateSignature: 'true',
  disableNonce: 'true',
  defaultScope: 'openid profile email',
};

const PRESETS: Partial<Record<IdentityProviderType, Readonly<Record<string, string>>>> = { google: GOOGLE, gitlab: GITLAB, 'linkedin-openid-connect': LINKEDIN };

/** The social provider types, as Keycloak's serverinfo lists them (socialProviders) and GET identity-provider/providers/{id} names them. */
export const SOCIAL_PROVIDER_FACTORIES: ReadonlyArray<{ id: IdentityProviderType; name: string }> = [
  { id: 'bitbucket', name: 'Bitbucket' },
  { id: 'facebook', name: 'Facebook' },
  { id: 'github', name: 'GitHub' },
  { id: 'gitlab', name: 'GitLab' },
  { id: 'google', name: 'Google' },
  { id: 'linkedin-openid-connect', name: 'LinkedIn' },
  { id: 'microsoft', name: 'Microsoft' },
];

/** The types without OpenID Connect: no ID token, no nonce, their scope as set (no openid added); the account comes from their user API. */
export const isOAuth2Only = (providerId: string): boolean => Object.hasOwn(ADDRESSED, providerId);

/**
 * Whether a provider of this type vouches for the emails it gives, so that trustEmail may mark them
 * verified: not Microsoft, whose Graph mail is whatever the account's tenant wrote (nOAuth, 2023).
 */
export const vouchesForEmail = (providerId: string): boolean => providerId !== 'microsoft';

const trimSlash = (url: string): string => (url.endsWith('/') ? url.slice(0, -1) : url);

/** A tenant: its id (a GUID), one of its domains, or common, organizations or consumers; it is a segment of Microsoft's endpoints' path. */
export const MICROSOFT_TENANT_RE = /^[A-Za-z0-9][A-Za-z0-9.-]{0,127}$/;
/** The profile's fields Keycloak asks Facebook for; config.fetchedFields adds more (comma-separated, as Keycloak appends them). */
const FACEBOOK_FIELDS = 'id,name,email,first_name,last_name';
export const FACEBOOK_FETCHED_FIELDS_RE = /^[A-Za-z0-9_.,{}()]{1,512}$/;

/**
 * The OAuth 2.0 providers' endpoints, made from two addresses as Keycloak makes them: `base` (the
 * authorization server) and `api` (the user API), the provider's own unless the config's baseUrl and
 * apiUrl name others; `scope` is the type's scope unless the config sets one.
 * - github: Keycloak's GitHubIdentityProvider; baseUrl and apiUrl name a GitHub Enterprise Server, as in Keycloak.
 * - microsoft: Keycloak's MicrosoftIdentityProvider; the endpoints are under config.tenantId (the multi-tenant
 *   "common" when unset: any Microsoft account, work or personal), the account is Graph's /v1.0/me/.
 *   baseUrl and apiUrl are Realmgate's own: another cloud's sign-in and Graph (Azure Government, China).
 * - facebook: Keycloak's FacebookIdentityProvider; everything under the Graph API's address (apiUrl, Realmgate's
 *   own); the profile is /me with Keycloak's fields and config.fetchedFields.
 * - bitbucket: Keycloak's BitbucketIdentityProvider, Bitbucket Cloud; baseUrl and apiUrl are Realmgate's own.
 */
const ADDRESSED: Readonly<Record<string, { base: string; api: string; scope: string; endpoints: (base: string, api: string, config: Record<string, string>) => Record<string, string> }>> = {
  github: {
    base: 'https://github.com',
    api: 'https://api.github.com',
    scope: 'user:email',
    endpoints: (base, api) => ({ authorizationUrl: `${base}/login/oauth/authorize`, tokenUrl: `${base}/login/oauth/access_token`, userInfoUrl: `${api}/user`, emailUrl: `${api}/user/emails` }),
  },
  microsoft: {
    base: 'https://login.microsoftonline.com',
    api: 'https://graph.microsoft.com',
    scope: 'User.read',
    endpoints: (base, api, config) => {
      const tenant = config.tenantId?.trim() || 'common';
      return { authorizationUrl: `${base}/${tenant}/oauth2/v2.0/authorize`, tokenUrl: `${base}/${tenant}/oauth2/v2.0/token`, userInfoUrl: `${api}/v1.0/me/` };
    },
  },
  facebook: {
    base: 'https://graph.facebook.com',
    api: 'https://graph.facebook.com',
    scope: 'email',
    endpoints: (_base, api, config) => {
      const extra = config.fetchedFields?.trim();
      const fields = extra ? `${FACEBOOK_FIELDS},${extra}` : FACEBOOK_FIELDS;
      return { authorizationUrl: `${api}/oauth/authorize`, tokenUrl: `${api}/oauth/access_token`, userInfoUrl: `${api}/me?fields=${encodeURIComponent(fields)}` };
    },
  },
  bitbucket: {
    base: 'https://bitbucket.org',
    api: 'https://api.bitbucket.org',
    scope: 'account email',
    endpoints: (base, api) => ({ authorizationUrl: `${base}/site/oauth2/authorize`, tokenUrl: `${base}/site/oauth2/access_token`, userInfoUrl: `${api}/2.0/user`, emailUrl: `${api}/2.0/user/emails` }),
  },
};

/**
 * The config a provider of this type is stored with: its type's endpoints and defaults wherever the
 * config names none. Keycloak sets Google's endpoints in code and ignores any in the config; here one
 * the config names is kept (a provider reached through another address, the tests' local provider).
 * The OAuth 2.0 providers' are made from their addresses (ADDRESSED) at every change, as Keycloak makes them.
 */
export function withSocialDefaults(providerId: string, config: Record<string, string>): Record<string, string> {
  const addressed = ADDRESSED[providerId];
  if (addressed) {
    const base = trimSlash(config.baseUrl?.trim() || addressed.base);
    const api = trimSlash(config.apiUrl?.trim() || addressed.api);
    return { ...config, ...addressed.endpoints(base, api, config), defaultScope: config.defaultScope || addressed.scope };
  }
  if (providerId === 'gitlab' && config.defaultScope?.trim() === 'openid') {
    // Keycloak's GitLab provider adds read_user to a scope of openid alone.
    return withSocialDefaults(providerId, { ...config, defaultScope: 'openid read_user' });
  }
  const preset = PRESETS[providerId as IdentityProviderType];
  if (!preset) return config;
  const out = { ...config };
  for (const [k, v] of Object.entries(preset)) if (!out[k]) out[k] = v;
  return out;
}

/** The login page's name of a provider: its display name, else a social provider's name ("Google"), else its alias (as Keycloak's login theme). */
export function providerName(p: Pick<IdentityProvider, 'alias' | 'displayName' | 'providerId'>): string {
  return p.displayName || (SOCIAL_PROVIDER_FACTORIES.find((f) => f.id === p.providerId)?.name ?? p.alias);
}

/**
 * A Google provider's hosted domains (config.hostedDomain: one, or several comma-separated, as Keycloak
 * reads it): undefined when any Google account may sign in (none set, or "*").
 */
export function hostedDomains(p: Pick<IdentityProvider, 'providerId' | 'config'>): string[] | undefined {
  if (p.providerId !== 'google') return undefined;
  const value = p.config.hostedDomain?.trim();
  if (!value || value === '*') return undefined;
  return value
    .split(',')
    .map((d) => d.trim().toLowerCase())
    .filter((d) => d !== '');
}
