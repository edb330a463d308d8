import type { IdentityProvider, IdentityProviderType } from '../storage/types.js';

/**
 * Keycloak's social identity providers (org.keycloak.social.*), with the endpoints and checks Keycloak
 * gives them: a realm moved from Keycloak keeps its "Sign in with Google" or "with GitHub" button, and an
 * admin creates one from the client id and secret alone.
 * - google: an OpenID Connect provider (its ID token checked as any other's), with the hosted domain check;
 * - github: an OAuth 2.0 provider without ID tokens; the account is GitHub's user API's (src/oauth/broker.ts).
 * Microsoft, Facebook and the others are not brokered.
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

const PRESETS: Partial<Record<IdentityProviderType, Readonly<Record<string, string>>>> = { google: GOOGLE };

/** The social provider types, as Keycloak's serverinfo lists them (socialProviders) and GET identity-provider/providers/{id} names them. */
export const SOCIAL_PROVIDER_FACTORIES: ReadonlyArray<{ id: IdentityProviderType; name: string }> = [
  { id: 'github', name: 'GitHub' },
  { id: 'google', name: 'Google' },
];

/** GitHub's addresses (Keycloak's GitHubIdentityProvider): `baseUrl` and `apiUrl` name a GitHub Enterprise Server instead. */
export const GITHUB_BASE_URL = 'https://github.com';
export const GITHUB_API_URL = 'https://api.github.com';

/**
 * A GitHub provider's endpoints, always made from its baseUrl and apiUrl (GitHub's own when unset), as
 * Keycloak makes them: the authorization and token endpoints under the base, the user and its emails
 * under the API. Its scope is user:email unless set.
 */
function githubConfig(config: Record<string, string>): Record<string, string> {
  const trim = (url: string): string => (url.endsWith('/') ? url.slice(0, -1) : url);
  const base = trim(config.baseUrl?.trim() || GITHUB_BASE_URL);
  const api = trim(config.apiUrl?.trim() || GITHUB_API_URL);
  return {
    ...config,
    authorizationUrl: `${base}/login/oauth/authorize`,
    tokenUrl: `${base}/login/oauth/access_token`,
    userInfoUrl: `${api}/user`,
    emailUrl: `${api}/user/emails`,
    defaultScope: config.defaultScope || 'user:email',
  };
}

/**
 * The config a provider of this type is stored with: its type's endpoints and defaults wherever the
 * config names none. Keycloak sets Google's endpoints in code and ignores any in the config; here one
 * the config names is kept (a provider reached through another address, the tests' local provider).
 * GitHub's are made from its baseUrl and apiUrl (githubConfig).
 */
export function withSocialDefaults(providerId: string, config: Record<string, string>): Record<string, string> {
  if (providerId === 'github') return githubConfig(config);
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
