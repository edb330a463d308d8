import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Services } from '../../services.js';
import type { AccessTokenClaims } from '../../oauth/access-tokens.js';
import type { Realm, User } from '../../storage/types.js';
import { BearerError } from '../../oidc/userinfo.js';
import { sendBearerError } from '../token/lifecycle-routes.js';
import { busy } from '../busy.js';
import { preflight, varyOrigin } from '../plugins/cors.js';
import { setNoStore } from '../plugins/security-headers.js';
import { nowSeconds } from '../../clock.js';
import { holdsAccountRole } from '../../admin/operations/account-deletion.js';
import { accountErrors, bearerUser, recentSignIn, EMAIL_CHANGE_MAX_AGE_S } from './profile.js';
import { logoutSession } from '../../oidc/end-session.js';
import { pathsOf } from '../../admin/operations/groups.js';
import { realmLocales } from '../../i18n/locales.js';
import { providerName, SOCIAL_PROVIDER_FACTORIES } from '../../oauth/social-providers.js';
import { unlinkOwnAccount } from '../../admin/operations/identity-providers.js';
import { deleteOwnCredential, findOwnCredential, removable, renameOwnCredential } from '../../admin/operations/credential-deletion.js';
import { endOwnApplicationSessions, ownApplications, revokeOwnConsent } from '../../admin/operations/own-applications.js';
import { ValidationError, NotFound } from '../../admin/validation.js';
import { accountCredentialTypes } from '../../admin/keycloak/representations/account.js';
import { describeUserAgent } from '../../views/user-agent.js';

/**
 * Keycloak's account REST API beyond the profile (AccountRestService; the profile GET and POST are in
 * ./profile.ts): what Keycloak's account console and custom account pages call with the user's own
 * access token. The user's sessions, credentials, applications and consents, linked accounts, groups and
 * the realm's languages. Each call needs one of Keycloak's `account` client roles (AccountRoles) where
 * the realm has them (holdsAccountRole). Errors are Keycloak's ErrorRepresentation; a missing or bad token
 * is RFC 6750's challenge.
 */

type Req<P = Record<string, never>, Q = Record<string, unknown>> = FastifyRequest<{ Params: { realm: string } & P; Querystring: Q }>;
interface Caller {
  realm: Realm;
  user: User;
  claims: AccessTokenClaims;
}

const VIEW = ['manage-account', 'view-profile'] as const;
const MANAGE = ['manage-account'] as const;
const VIEW_APPLICATIONS = ['manage-account', 'view-applications'] as const;
const VIEW_CONSENT = ['manage-account', 'view-consent', 'manage-consent'] as const;
const MANAGE_CONSENT = ['manage-account', 'manage-consent'] as const;
const VIEW_GROUPS = ['manage-account', 'view-groups'] as const;

/** A JSON string (Keycloak's setLabel takes the label as a JSON string) or text/plain. */
function labelOf(body: unknown): string | undefined {
  return typeof body === 'string' ? body : undefined;
}

/** Keycloak's query booleans: "true"/"false", absent: the default. */
function flag(v: unknown, dflt: boolean): boolean {
  return v === undefined ? dflt : v === 'true' || v === true;
}

export async function accountRestRoutes(app: FastifyInstance, opts: { services: Services }): Promise<void> {
  const { services } = opts;
  const { store } = services;
  const base = '/auth/realms/:realm/account';

  // Errors of this API are Keycloak's ErrorRepresentation, never the HTML error page.
  app.setErrorHandler(function accountRestErrors(error: FastifyError | Error, req, reply) {
    if (busy(error, reply, req.log)) return accountErrors(reply, 503, [{ errorMessage: 'the server is busy, retry shortly' }]);
    const status = (error as FastifyError).statusCode;
    if (status === 413 || status === 415) return accountErrors(reply, status, [{ errorMessage: status === 413 ? 'the request body is too large' : 'unsupported content type' }]);
    if (status !== undefined && status >= 400 && status < 500) return accountErrors(reply, 400, [{ errorMessage: 'the request could not be read' }]);
    req.log.error({ err: error }, 'unexpected error');
    return accountErrors(reply, 500, [{ errorMessage: 'unknown_error' }]);
  });
  varyOrigin(app);
  for (const [url, methods] of [
    ['/sessions', 'GET, DELETE'],
    ['/sessions/devices', 'GET'],
    ['/sessions/:id', 'DELETE'],
    ['/credentials', 'GET'],
    ['/credentials/:id', 'DELETE'],
    ['/credentials/:id/label', 'PUT'],
    ['/applications', 'GET'],
    ['/applications/:clientId/consent', 'GET, DELETE'],
    ['/applications/:clientId/sessions', 'DELETE'],
    ['/linked-accounts', 'GET'],
    ['/linked-accounts/:alias', 'DELETE'],
    ['/groups', 'GET'],
    ['/organizations', 'GET'],
    ['/supportedLocales', 'GET'],
  ] as const) {
    preflight(app, services, `${base}${url}`, methods);
  }

  /** The handler for the bearer's user when they hold one of `roles`; 403 otherwise (Keycloak's Auth.requireOneOf). */
  function route<P, Q>(roles: readonly string[], handler: (c: Caller, req: Req<P, Q>, reply: FastifyReply) => Promise<unknown>) {
    return async (req: Req<P, Q>, reply: FastifyReply): Promise<unknown> => {
      try {
        const c = await bearerUser(services, req, reply);
        if (!(await holdsAccountRole(store, c.realm.id, c.user.id, roles))) {
          return accountErrors(reply, 403, [{ errorMessage: `the user holds none of the account roles ${roles.join(', ')}` }]);
        }
        setNoStore(reply);
        return await handler(c, req, reply);
      } catch (err) {
        if (err instanceof BearerError) return sendBearerError(reply, (req.params as { realm: string }).realm, err);
        // NotFound is a ValidationError: first.
        if (err instanceof NotFound) return accountErrors(reply, 404, [{ errorMessage: err.message }]);
        if (err instanceof ValidationError) return accountErrors(reply, 400, [{ errorMessage: err.message }]);
        throw err;
      }
    };
  }

  // --- Sessions (Keycloak's SessionResource): the user's live browser sessions, times in seconds.

  async function sessionReps(c: Caller) {
    const now = nowSeconds(services.clock);
    const sessions = await store.sessionAdmin.listForUser(c.realm.id, c.user.id, now);
    const names = new Map<string, string | null>();
    for (const id of new Set(sessions.flatMap((s) => s.clients))) names.set(id, (await services.cache.client(c.realm.id, id))?.name ?? null);
    return sessions.map((s) => {
      const device = describeUserAgent(s.userAgent);
      return {
        rep: {
          id: s.id,
          // A session from before addresses were kept has none.
          ipAddress: s.ipAddress ?? '',
          started: s.createdAt,
          lastAccess: s.lastAccess,
          expires: s.expiresAt,
          browser: device.browser,
          ...(s.id === c.claims.sid ? { current: true } : {}),
          clients: s.clients.map((id) => ({ clientId: id, ...(names.get(id) ? { clientName: names.get(id) } : {}) })),
        },
        device,
      };
    });
  }

  app.get(`${base}/sessions`, route(VIEW, async (c) => (await sessionReps(c)).map((s) => s.rep)));

  // Keycloak's device activity: the sessions grouped by the system their User-Agent names (its os and
  // osVersion), each device with its latest use; a session without one is on an "Other" device.
  app.get(
    `${base}/sessions/devices`,
    route(VIEW, async (c) => {
      const devices = new Map<string, { os: string; osVersion: string; device: string; browser: string; ipAddress: string; mobile: boolean; lastAccess: number; current?: true; sessions: Array<(Awaited<ReturnType<typeof sessionReps>>)[number]['rep']> }>();
      for (const { rep, device } of await sessionReps(c)) {
        const key = `${device.os}\0${device.osVersion}`;
        let d = devices.get(key);
        if (!d) {
          d = { os: device.os, osVersion: device.osVersion, device: device.device, browser: device.browser, ipAddress: rep.ipAddress, mobile: device.mobile, lastAccess: rep.lastAccess, sessions: [] };
          devices.set(key, d);
        }
        if (rep.current) d.current = true;
        if (rep.lastAccess > d.lastAccess) Object.assign(d, { lastAccess: rep.lastAccess, browser: device.browser, ipAddress: rep.ipAddress });
        d.sessions.push(rep);
      }
      return [...devices.values()];
    }),
  );

  /** Ends one session of the user as a sign-out does (its applications told by back-channel logout), recorded as LOGOUT. */
  async function endSession(c: Caller, req: FastifyRequest, session: { id: string; userId: string }): Promise<void> {
    await logoutSession(services, c.realm.id, session, 'signed out through the account API');
    await services.audit.record({ realmId: c.realm.id, type: 'LOGOUT', outcome: 'success', clientId: c.claims.azp ?? null, userId: c.user.id, username: c.user.username, ip: req.ip, reason: `session ${session.id} ended through the account API` });
  }

  // DELETE /sessions: every other session of the user; ?current=true: this one too. 204.
  app.delete(
    `${base}/sessions`,
    route<Record<string, never>, { current?: string }>(MANAGE, async (c, req, reply) => {
      const all = flag(req.query.current, false);
      for (const s of await store.sessions.listActive(c.realm.id, c.user.id, nowSeconds(services.clock))) {
        if (all || s.id !== c.claims.sid) await endSession(c, req, s);
      }
      return reply.code(204).send();
    }),
  );

  // DELETE /sessions/{id}: 204 whether or not the user had it (Keycloak's answer; no probing of others' ids).
  app.delete(
    `${base}/sessions/:id`,
    route<{ id: string }, Record<string, unknown>>(MANAGE, async (c, req, reply) => {
      const s = await store.sessions.get(req.params.id);
      if (s && s.userId === c.user.id && s.realmId === c.realm.id) await endSession(c, req, s);
      return reply.code(204).send();
    }),
  );

  // --- Credentials (Keycloak's AccountCredentialResource).

  app.get(
    `${base}/credentials`,
    route<Record<string, never>, { type?: string; 'user-credentials'?: string }>(VIEW, async (c, req) => {
      const types = await accountCredentialTypes(store, c.realm, c.user, { withCredentials: flag(req.query['user-credentials'], true) });
      return req.query.type ? types.filter((t) => t.type === req.query.type) : types;
    }),
  );

  // Deleting a credential (Keycloak deprecates it for kc_action=delete_credential, which Realmgate has too)
  // needs a sign-in of the last minutes, as a new email does: a stolen token must not remove a second factor.
  app.delete(
    `${base}/credentials/:id`,
    route<{ id: string }, Record<string, unknown>>(MANAGE, async (c, req, reply) => {
      const credential = await findOwnCredential(store, c.user, req.params.id);
      if (!credential) return accountErrors(reply, 404, [{ errorMessage: 'Credential not found' }]);
      if (!removable(credential)) return accountErrors(reply, 400, [{ errorMessage: 'the password cannot be removed: change it instead' }]);
      if (!(await recentSignIn(services, c.user, c.claims))) {
        return accountErrors(reply, 403, [{ errorMessage: `removing a credential needs a sign-in of the last ${EMAIL_CHANGE_MAX_AGE_S / 60} minutes: sign in again (max_age or prompt=login) and retry` }]);
      }
      const deleted = await deleteOwnCredential(services, { user: c.user, credential, ip: req.ip, clientId: c.claims.azp ?? 'account', by: `the user (account API, from ${c.claims.azp ?? 'an unknown client'})` });
      return deleted ? reply.code(204).send() : accountErrors(reply, 404, [{ errorMessage: 'Credential not found' }]);
    }),
  );

  app.put(
    `${base}/credentials/:id/label`,
    route<{ id: string }, Record<string, unknown>>(MANAGE, async (c, req, reply) => {
      const label = labelOf(req.body);
      if (label === undefined) return accountErrors(reply, 400, [{ errorMessage: 'the body must be the label as a JSON string' }]);
      await renameOwnCredential(services, { user: c.user, credentialId: req.params.id, label, ip: req.ip, clientId: c.claims.azp ?? null });
      return reply.code(204).send();
    }),
  );

  // --- Applications and consents (Keycloak's /applications).

  app.get(
    `${base}/applications`,
    route<Record<string, never>, { name?: string }>(VIEW_APPLICATIONS, async (c, req) => {
      const name = typeof req.query.name === 'string' ? req.query.name.toLowerCase() : undefined;
      const apps = await ownApplications(services, c.realm, c.user);
      return apps.filter((a) => name === undefined || (a.clientName ?? '').toLowerCase().includes(name)).map(applicationRep);
    }),
  );

  app.get(
    `${base}/applications/:clientId/consent`,
    route<{ clientId: string }, Record<string, unknown>>(VIEW_CONSENT, async (c, req, reply) => {
      const clientId = req.params.clientId;
      if (!(await services.cache.client(c.realm.id, clientId))) return accountErrors(reply, 404, [{ errorMessage: `No client with clientId: ${clientId} found.` }]);
      const app = (await ownApplications(services, c.realm, c.user)).find((a) => a.clientId === clientId);
      return app?.consent ? consentRep(app.consent) : reply.code(204).send();
    }),
  );

  // Withdraws the consent (every organization's) and ends the client's access for the user: its refresh
  // tokens and the access tokens they issued; the client is told by back-channel logout. 204.
  app.delete(
    `${base}/applications/:clientId/consent`,
    route<{ clientId: string }, Record<string, unknown>>(MANAGE_CONSENT, async (c, req, reply) => {
      const clientId = req.params.clientId;
      if (!(await services.cache.client(c.realm.id, clientId))) return accountErrors(reply, 404, [{ errorMessage: `No client with clientId: ${clientId} found.` }]);
      await revokeOwnConsent(services, { realm: c.realm, user: c.user, clientId, ip: req.ip, via: c.claims.azp ?? null });
      return reply.code(204).send();
    }),
  );

  // Keycloak 26's DELETE /applications/{clientId}/sessions: the application signed out of every session
  // of the user, online and offline, its consent kept. 204, also for an unknown client (Keycloak's answer:
  // no probing for client ids).
  app.delete(
    `${base}/applications/:clientId/sessions`,
    route<{ clientId: string }, Record<string, unknown>>(MANAGE, async (c, req, reply) => {
      const clientId = req.params.clientId;
      if (await services.cache.client(c.realm.id, clientId)) await endOwnApplicationSessions(services, { realm: c.realm, user: c.user, clientId, ip: req.ip, via: c.claims.azp ?? null });
      return reply.code(204).send();
    }),
  );

  // --- Linked accounts (Keycloak's LinkedAccountsResource).

  app.get(
    `${base}/linked-accounts`,
    route<Record<string, never>, { linked?: string }>(VIEW, async (c, req) => {
      const [providers, links] = await Promise.all([store.identityProviders.list(c.realm.id), store.identityProviders.links(c.user.id)]);
      const linked = req.query.linked === undefined ? undefined : flag(req.query.linked, true);
      const social = new Set(SOCIAL_PROVIDER_FACTORIES.map((f) => f.id));
      return providers
        .filter((p) => p.enabled)
        .map((p) => ({ p, link: links.find((l) => l.identityProvider === p.alias) }))
        // Not linked yet: only the realm's own providers can be linked (an organization's links at its sign-in).
        .filter(({ p, link }) => (link ? linked !== false : linked !== true && p.organizationId === null))
        .map(({ p, link }) => ({
          connected: link !== undefined,
          social: social.has(p.providerId),
          providerAlias: p.alias,
          providerName: p.alias,
          displayName: providerName(p),
          ...(p.config.guiOrder ? { guiOrder: p.config.guiOrder } : {}),
          ...(link ? { linkedUsername: link.federatedUsername ?? link.federatedUserId } : {}),
        }))
        .sort((a, b) => (a.guiOrder ?? '').localeCompare(b.guiOrder ?? '') || a.displayName.localeCompare(b.displayName));
    }),
  );

  app.delete(
    `${base}/linked-accounts/:alias`,
    route<{ alias: string }, Record<string, unknown>>(MANAGE, async (c, req, reply) => {
      const result = await unlinkOwnAccount(store, c.user, req.params.alias, { ip: req.ip });
      if (result === 'none') return accountErrors(reply, 400, [{ errorMessage: 'federatedIdentityNotActiveMessage' }]);
      if (result === 'last') return accountErrors(reply, 400, [{ errorMessage: 'federatedIdentityRemovingLastProviderMessage' }]);
      return reply.code(204).send();
    }),
  );

  // --- Groups and languages.

  app.get(
    `${base}/groups`,
    route(VIEW_GROUPS, async (c) => {
      const groups = await store.groups.userGroups(c.user.id);
      const paths = await pathsOf(store, groups.map((g) => g.id));
      return groups.map((g) => ({ id: g.id, name: g.name, path: paths.get(g.id) ?? `/${g.name}` })).sort((a, b) => a.path.localeCompare(b.path));
    }),
  );

  // Keycloak 26's account OrganizationsResource: the organizations the user is a member of, disabled ones
  // included, in the account API's OrganizationRepresentation (domains as names).
  app.get(
    `${base}/organizations`,
    route(VIEW, async (c) =>
      (await store.organizationAdmin.ofUser(c.user.id)).map((o) => ({ id: o.id, name: o.name, alias: o.alias, description: o.description, enabled: o.enabled, domains: o.domains.map((d) => d.name) })),
    ),
  );

  // Any token of the user, no account role: Keycloak's supportedLocales requires none.
  app.get(`${base}/supportedLocales`, route([], async (c) => (c.realm.internationalizationEnabled ? realmLocales(c.realm) : [])));
}

/** Keycloak's account ClientRepresentation of an application the user uses or consented to. */
function applicationRep(a: Awaited<ReturnType<typeof ownApplications>>[number]) {
  return {
    clientId: a.clientId,
    ...(a.clientName ? { clientName: a.clientName } : {}),
    // Realmgate asks every user's consent (the seed's consent screen).
    userConsentRequired: true,
    inUse: a.inUse,
    offlineAccess: a.offlineAccess,
    ...(a.consent ? { consent: consentRep(a.consent) } : {}),
  };
}

/** Keycloak's ConsentRepresentation (brief): the granted scopes by name, times in milliseconds. */
function consentRep(c: { scopes: ReadonlyArray<{ name: string; consentText: string }>; createdAt: number; lastUpdatedAt: number }) {
  return {
    grantedScopes: c.scopes.map((s) => ({ id: s.name, name: s.name, displayText: s.consentText })),
    createdDate: c.createdAt * 1000,
    lastUpdatedDate: c.lastUpdatedAt * 1000,
  };
}
