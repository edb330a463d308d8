import type { FastifyInstance, FastifyReply } from 'fastify';
import { hasAdminRole } from '../../admin/authorization.js';
import {
  createIdentityProvider,
  deleteIdentityProvider,
  discoverProvider,
  listFederatedIdentities,
  listIdentityProviders,
  requireIdentityProvider,
  unlinkFederatedIdentity,
  updateIdentityProvider,
  PROVIDER_TYPES,
  type ProviderFields,
} from '../../admin/operations/identity-providers.js';
import { listOrganizations } from '../../admin/operations/organizations.js';
import { requireUser } from '../../admin/operations/users.js';
import { ValidationError } from '../../admin/validation.js';
import { brokerRedirectUri } from '../../oauth/broker.js';
import { isOAuth2Only, SOCIAL_PROVIDER_FACTORIES } from '../../oauth/social-providers.js';
import type { BrokerReviewProfile, IdentityProvider } from '../../storage/types.js';
import { updateRealm } from '../../admin/operations/realms.js';
import { realmBase } from '../../views/console/layout.js';
import { DEFAULT_SCOPE, identityProviderPage, identityProvidersPage, providerUrl, type OrganizationChoice } from '../../views/console/identity-provider-pages.js';
import { sendPage } from '../interaction/render.js';
import { CONSOLE_PATH } from './session.js';
import { field, isRefusal, type ConsoleKit, type Req, type Signed } from './common.js';

/** Outcomes a redirect of these pages may announce (routes.ts adds them to its fixed set). */
export const IDP_NOTICES: Record<string, string> = {
  'idp-created': 'The identity provider was added. Register its redirect URI at the provider.',
  'idp-saved': 'The identity provider was saved.',
  'idp-enabled': 'The identity provider was enabled: the login page offers it again.',
  'idp-disabled': 'The identity provider was disabled: the login page no longer offers it, and kc_idp_hint is refused.',
  'idp-deleted': "The identity provider was deleted, and every user's link to it.",
  'link-removed': 'The linked account was removed: signing in there no longer signs in as this user.',
  'review-saved': 'The first sign-in review setting was saved.',
};

/** The add and edit forms' fields (never the secret, which is read apart and never shown again). */
const FORM_FIELDS = ['alias', 'providerType', 'displayName', 'issuer', 'authorizationUrl', 'tokenUrl', 'userInfoUrl', 'jwksUrl', 'hostedDomain', 'tenantId', 'clientId', 'clientAuthMethod', 'scope', 'organization'] as const;
const FLAGS = ['pkce', 'trustEmail', 'hideOnLogin', 'linkOnly'] as const;

function readForm(req: Req): Record<string, string> {
  const form: Record<string, string> = {};
  for (const name of FORM_FIELDS) form[name] = field(req, name);
  // An unchecked box sends nothing.
  for (const name of FLAGS) form[name] = req.body?.[name] === 'on' ? 'on' : 'off';
  return form;
}

/**
 * The provider the form describes. With an issuer and no authorization and token URLs, the endpoints are
 * discovered (OpenID Connect Discovery, as Keycloak's console imports them from the issuer's metadata);
 * otherwise they are taken as typed, the ID token's signature checked when a JWKS URL is given.
 */
async function fieldsOf(form: Record<string, string>, secret: string, type: string): Promise<ProviderFields> {
  const f = (name: string): string => form[name] ?? '';
  let endpoints: Record<string, string>;
  // Keycloak's social providers: their endpoints are filled in (src/oauth/social-providers.ts); a Google
  // or GitLab provider keeps the ones typed, GitHub's, Microsoft's and Facebook's are always made from their address.
  const social = SOCIAL_PROVIDER_FACTORIES.some((t) => t.id === type);
  if (social) {
    endpoints = isOAuth2Only(type) ? {} : Object.fromEntries(['issuer', 'authorizationUrl', 'tokenUrl', 'userInfoUrl', 'jwksUrl'].filter((k) => f(k) !== '').map((k) => [k, f(k)]));
  } else if (f('issuer') && !f('authorizationUrl') && !f('tokenUrl')) {
    endpoints = await discoverProvider(f('issuer'));
  } else {
    if (!f('authorizationUrl') || !f('tokenUrl')) throw new ValidationError("Give the provider's issuer (its endpoints are then discovered), or its authorization and token URLs.");
    endpoints = {
      issuer: f('issuer'),
      authorizationUrl: f('authorizationUrl'),
      tokenUrl: f('tokenUrl'),
      userInfoUrl: f('userInfoUrl'),
      jwksUrl: f('jwksUrl'),
      ...(f('jwksUrl') ? { validateSignature: 'true', useJwksUrl: 'true' } : { validateSignature: 'false' }),
    };
  }
  const pkce = form.pkce !== 'off';
  return {
    displayName: f('displayName') || null,
    trustEmail: form.trustEmail === 'on',
    hideOnLogin: form.hideOnLogin === 'on',
    linkOnly: form.linkOnly === 'on',
    organizationId: f('organization') || null,
    config: {
      ...endpoints,
      clientId: f('clientId'),
      clientAuthMethod: f('clientAuthMethod') || 'client_secret_post',
      // The form's scope starts as an OpenID Connect provider's: left so, a social provider takes its own.
      ...(social && (f('scope') === '' || f('scope') === DEFAULT_SCOPE) ? {} : { defaultScope: f('scope') }),
      ...(type === 'google' ? { hostedDomain: f('hostedDomain') } : {}),
      ...(type === 'microsoft' ? { tenantId: f('tenantId') } : {}),
      pkceEnabled: String(pkce),
      ...(pkce ? { pkceMethod: 'S256' } : {}),
      ...(secret ? { clientSecret: secret } : {}),
    },
  };
}

/**
 * Identity providers in the console, as the admin API decides for them: view-identity-providers to read,
 * manage-identity-providers to change; and a user's linked accounts on the user's page (view-users to
 * read, manage-users to unlink). A provider is named by its alias in URLs (letters, digits, ".", "_", "-").
 */
export function identityProviderRoutes(app: FastifyInstance, kit: ConsoleKit): void {
  const { services, signedIn, realmOf, need, attempt, showUser } = kit;
  const store = services.store;
  const R = `${CONSOLE_PATH}/realms/:realm`;
  const row = (p: IdentityProvider): { provider: IdentityProvider; redirectUri: string } => ({ provider: p, redirectUri: brokerRedirectUri(services, p.realmId, p.alias) });
  const choices = async (realmId: string): Promise<OrganizationChoice[]> => (await listOrganizations(store, { realmId, max: 500 })).map((o) => ({ id: o.id, alias: o.alias }));

  /** The realm of the URL, once the admin holds view- (or manage-) identity-providers there. */
  async function providersRealm(s: Signed, req: Req, level: 'view' | 'manage'): Promise<string> {
    const realmId = await realmOf(s.caller, req.params.realm!);
    need(s.caller, realmId, level === 'view' ? 'view-identity-providers' : 'manage-identity-providers');
    return realmId;
  }

  async function showProviders(s: Signed, reply: FastifyReply, realmId: string, status = 200, error?: string, form?: Record<string, string>): Promise<FastifyReply> {
    const [providers, orgs, realm] = await Promise.all([listIdentityProviders(store, realmId), choices(realmId), store.realms.get(realmId)]);
    const frame = { ...s.frame, title: 'Identity providers', realmId, ...(error ? { error } : {}) };
    const review = realm ? { mode: realm.brokerReviewProfile, canChange: hasAdminRole(s.caller, realmId, 'manage-realm') } : undefined;
    return sendPage(reply, status, identityProvidersPage(frame, providers.map(row), hasAdminRole(s.caller, realmId, 'manage-identity-providers'), orgs, form, review));
  }

  async function showProvider(s: Signed, reply: FastifyReply, realmId: string, alias: string, status = 200, error?: string, form?: Record<string, string>): Promise<FastifyReply> {
    const p = await requireIdentityProvider(store, realmId, alias);
    const [orgs, org] = await Promise.all([choices(realmId), p.organizationId ? store.organizationAdmin.get(p.organizationId) : undefined]);
    const frame = { ...s.frame, title: p.displayName ?? p.alias, realmId, ...(error ? { error } : {}) };
    return sendPage(reply, status, identityProviderPage(frame, row(p), org?.alias ?? p.organizationId, hasAdminRole(s.caller, realmId, 'manage-identity-providers'), orgs, form));
  }

  app.get(`${R}/identity-providers`, async (req: Req, reply) => {
    const s = await signedIn(req, reply);
    if (!s) return reply;
    return showProviders(s, reply, await providersRealm(s, req, 'view'));
  });

  app.post(`${R}/identity-providers`, async (req: Req, reply) => {
    const s = await signedIn(req, reply);
    if (!s) return reply;
    const realmId = await providersRealm(s, req, 'manage');
    const form = readForm(req);
    const secret = typeof req.body?.clientSecret === 'string' ? req.body.clientSecret : '';
    try {
      if (!secret) throw new ValidationError('Give the client secret the provider issued to Realmgate.');
      const type = form.providerType || 'oidc';
      if (!PROVIDER_TYPES.includes(type)) throw new ValidationError(`There is no provider type ${JSON.stringify(type)}.`);
      await createIdentityProvider(store, s.actor, realmId, { alias: form.alias!, providerId: type, ...(await fieldsOf(form, secret, type)) });
    } catch (err) {
      if (isRefusal(err)) return showProviders(s, reply, realmId, 400, err.message, form);
      throw err;
    }
    return reply.redirect(`${providerUrl(realmId, form.alias!)}?done=idp-created`, 303);
  });

  // The realm's first broker login Review Profile mode: a realm setting (manage-realm, as Keycloak's flow config).
  app.post(`${R}/identity-providers/review-profile`, async (req: Req, reply) => {
    const s = await signedIn(req, reply);
    if (!s) return reply;
    const realmId = await providersRealm(s, req, 'view');
    need(s.caller, realmId, 'manage-realm');
    const mode = field(req, 'reviewProfile') ?? '';
    return attempt(
      reply,
      () => updateRealm(store, { realmId, settings: { brokerReviewProfile: mode as BrokerReviewProfile } }, s.actor),
      (error) => showProviders(s, reply, realmId, 400, error),
      `${realmBase(realmId)}/identity-providers?done=review-saved`,
    );
  });

  app.get(`${R}/identity-providers/:alias`, async (req: Req, reply) => {
    const s = await signedIn(req, reply);
    if (!s) return reply;
    return showProvider(s, reply, await providersRealm(s, req, 'view'), req.params.alias!);
  });

  app.post(`${R}/identity-providers/:alias/update`, async (req: Req, reply) => {
    const s = await signedIn(req, reply);
    if (!s) return reply;
    const realmId = await providersRealm(s, req, 'manage');
    const p = await requireIdentityProvider(store, realmId, req.params.alias!);
    // The type is the stored provider's, whatever the form says.
    const form = { ...readForm(req), providerType: p.providerId };
    const secret = typeof req.body?.clientSecret === 'string' ? req.body.clientSecret : '';
    return attempt(
      reply,
      async () => updateIdentityProvider(store, s.actor, realmId, p.alias, await fieldsOf(form, secret, p.providerId)),
      (error) => showProvider(s, reply, realmId, p.alias, 400, error, form),
      `${providerUrl(realmId, p.alias)}?done=idp-saved`,
    );
  });

  for (const enabled of [true, false]) {
    app.post(`${R}/identity-providers/:alias/${enabled ? 'enable' : 'disable'}`, async (req: Req, reply) => {
      const s = await signedIn(req, reply);
      if (!s) return reply;
      const realmId = await providersRealm(s, req, 'manage');
      const p = await requireIdentityProvider(store, realmId, req.params.alias!);
      return attempt(
        reply,
        () => updateIdentityProvider(store, s.actor, realmId, p.alias, { enabled }),
        (error) => showProvider(s, reply, realmId, p.alias, 400, error),
        `${providerUrl(realmId, p.alias)}?done=idp-${enabled ? 'enabled' : 'disabled'}`,
      );
    });
  }

  // Deleting asks for the alias typed again, as deleting a client does.
  app.post(`${R}/identity-providers/:alias/delete`, async (req: Req, reply) => {
    const s = await signedIn(req, reply);
    if (!s) return reply;
    const realmId = await providersRealm(s, req, 'manage');
    const p = await requireIdentityProvider(store, realmId, req.params.alias!);
    if (field(req, 'confirm') !== p.alias) return showProvider(s, reply, realmId, p.alias, 400, 'Type the alias to confirm that the provider is to be deleted.');
    return attempt(
      reply,
      () => deleteIdentityProvider(store, s.actor, realmId, p.alias),
      (error) => showProvider(s, reply, realmId, p.alias, 400, error),
      `${realmBase(realmId)}/identity-providers?done=idp-deleted`,
    );
  });

  // A user's linked account removed (manage-users): only one of this user's, named by its provider.
  app.post(`${R}/users/:user/federated-identity/remove`, async (req: Req, reply) => {
    const s = await signedIn(req, reply);
    if (!s) return reply;
    const realmId = await realmOf(s.caller, req.params.realm!);
    need(s.caller, realmId, 'manage-users');
    const user = await requireUser(store, realmId, req.params.user!);
    const alias = field(req, 'provider');
    if (!(await listFederatedIdentities(store, user)).some((l) => l.identityProvider === alias)) {
      return showUser(s, reply, realmId, user.id, 400, 'That linked account does not exist (any more) for this user.');
    }
    return attempt(
      reply,
      () => unlinkFederatedIdentity(store, s.actor, user, alias),
      (error) => showUser(s, reply, realmId, user.id, 400, error),
      `${realmBase(realmId)}/users/${encodeURIComponent(user.id)}?done=link-removed`,
    );
  });
}
