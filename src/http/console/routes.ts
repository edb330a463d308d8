import type { FastifyInstance, FastifyReply } from 'fastify';
import { nowSeconds } from '../../clock.js';
import type { Services } from '../../services.js';
import type { AdminCaller, AdminRole } from '../../admin/authorization.js';
import { REALM_MANAGEMENT, hasAdminRole, maySeeRealm } from '../../admin/authorization.js';
import type { Actor } from '../../admin/operations/common.js';
import type { Client, RequestObjectRequired } from '../../storage/types.js';
import { ensureConsoleClient, getClient, getRealm, listClients, listRealms } from '../../admin/operations/console.js';
import { listAdminEvents, listLoginEvents } from '../../admin/operations/events.js';
import { DEFAULT_AUTH_METHODS, createClient, deleteClient, invalidatePreviousSecret, parseKeepPrevious, previousSecretOf, pushClientNotBefore, rotateClientSecret, setClientEnabled, updateClient, updateClientShowingSecret, usesJwt } from '../../admin/operations/clients.js';
import { ROOT_USER_PROPERTIES } from '../../admin/validation.js';
import { bruteForceStatus, countUsers, createUser, disableUser, enableUser, listUsers, logoutUser, requireUser, resetPassword, unlockUser, updateUser, userSessions } from '../../admin/operations/users.js';
import { endSession } from '../../admin/operations/tokens.js';
import { updateRealm } from '../../admin/operations/realms.js';
import { addMember, createOrganization, listMembers, listOrganizations, removeMember, requireOrganization } from '../../admin/operations/organizations.js';
import { changeComposites, changeRoleMappings, createRole, deleteRole, findRoleById, isAdminRole, listRolesWithCounts, requireRoleByName, roleComposites, roleWithUsers, updateRole, userRoleChoices } from '../../admin/operations/roles.js';
import { ConflictError, NotFound, ValidationError } from '../../admin/validation.js';
import { OAuthError } from '../../oauth/errors.js';
import { LIFETIMES, LOGIN_OPTIONS, REMEMBER_ME_LIFETIMES, organizationPage, organizationsPage, clientPage, clientsPage, consoleMessagePage, dashboardPage, eventsPage, realmPage, rolePage, rolesPage, roleUrl, userPage, usersPage, when } from '../../views/console/pages.js';
import { realmBase } from '../../views/console/layout.js';
import type { ConsoleFrame } from '../../views/console/layout.js';
import { sendPage } from '../interaction/render.js';
import { Forbidden, field, isRefusal, mappingGuard, text, type ConsoleKit, type Req, type Signed } from './common.js';
import { GROUP_NOTICES, groupRoutes } from './groups.js';
import { OTP_NOTICES, userOtpRoutes } from './user-otp.js';
import { IDP_NOTICES, identityProviderRoutes } from './identity-providers.js';
import { FEDERATION_NOTICES, userFederationRoutes } from './user-federation.js';
import { INITIAL_ACCESS_NOTICES, initialAccessRoutes } from './initial-access.js';
import { listFederatedIdentities } from '../../admin/operations/identity-providers.js';
import { hasPassword } from '../../crypto/passwords.js';
import { userCredentials } from '../../admin/operations/user-credentials.js';
import { userGroupChoices } from '../../admin/operations/groups.js';
import { ImpersonationForbidden, impersonateUser, mayImpersonateUser } from '../../admin/operations/impersonation.js';
import { setSessionCookies } from '../cookies.js';
import { CONSOLE_PATH, callbackUri, checkConsoleCsrf, clearSession, consoleCaller, consoleCsrf, finishLogin, startLogin } from './session.js';

/** Outcomes a redirect may announce: a fixed set, so no text from the URL is ever shown. */
const NOTICES: Record<string, string> = {
  'client-created': 'The client was created.',
  'uri-added': 'The redirect URI was added.',
  'uri-removed': 'The redirect URI was removed.',
  'origin-added': 'The web origin was added.',
  'origin-removed': 'The web origin was removed.',
  'client-enabled': 'The client was enabled.',
  'backchannel-saved': 'The back-channel logout settings were saved.',
  'par-saved': 'The pushed authorization request setting was saved.',
  'request-objects-saved': 'The request object settings were saved.',
  'token-exchange-saved': 'The token exchange settings were saved.',
  'dpop-saved': 'The DPoP setting was saved.',
  'full-scope-saved': "The full scope setting was saved: the client's next tokens follow it.",
  'frontchannel-saved': 'The front-channel logout settings were saved.',
  'credentials-saved': 'The credentials were saved.',
  'client-tokens-refused': 'Every token issued to this client until now is refused.',
  'previous-secret-refused': 'The previous secret is refused from now on: only the current one is accepted.',
  'client-disabled': 'The client was disabled: it can no longer authenticate, sign users in or get tokens.',
  'client-deleted': 'The client was deleted: its refresh tokens were revoked.',
  'user-created': 'The user was created.',
  'user-disabled': 'The user was disabled: their sessions and tokens no longer work.',
  'user-enabled': 'The user was enabled.',
  'user-unlocked': 'The failed logins were cleared.',
  'attribute-set': "The attribute was set: the user's next tokens carry it where a scope or a mapper releases it.",
  'attribute-removed': 'The attribute was removed.',
  'password-reset': 'The password was reset.',
  'lifetimes-saved': 'The lifetimes were saved. Running servers use them within their cache time.',
  'password-policy-saved': 'The password policy was saved: every password set from now on must meet it.',
  'login-options-saved': 'The login options were saved.',
  'languages-saved': 'The language settings were saved. Running servers use them within their cache time.',
  'registration-saved': 'The registration settings were saved. Running servers use them within their cache time.',
  'session-ended': 'The session was ended.',
  'sessions-ended': 'All sessions of the user were ended.',
  'organization-created': 'The organization was created.',
  'member-added': 'The member was added.',
  'member-removed': 'The member was removed.',
  'role-created': 'The role was created.',
  'role-saved': 'The role was saved.',
  'role-deleted': 'The role was deleted: the users who held it no longer carry it in their next tokens.',
  'role-granted': "The role was granted: the user's next access token carries it.",
  'role-revoked': "The role was revoked: the user's next access token no longer carries it.",
  'composite-added': "The role now contains it: the next access tokens of this role's holders carry it too.",
  'composite-removed': "The role no longer contains it: its holders' next access tokens carry it only if they hold it otherwise.",
  ...GROUP_NOTICES,
  ...OTP_NOTICES,
  ...IDP_NOTICES,
  ...FEDERATION_NOTICES,
  ...INITIAL_ACCESS_NOTICES,
};

/**
 * The admin console: server-rendered pages over src/admin/operations, signed in through the master
 * realm's own authorization code flow with PKCE. Every page decides by the admin's token roles, exactly
 * as the admin REST API does; every change is an admin event with via "console".
 */
export async function consoleRoutes(app: FastifyInstance, opts: { services: Services }): Promise<void> {
  const { services } = opts;

  app.setErrorHandler((error, req, reply) => {
    if (error instanceof Forbidden) return sendPage(reply, 403, consoleMessagePage('Not allowed', error.message, { href: `${CONSOLE_PATH}/`, label: 'Back to the console' }));
    if (error instanceof NotFound) return sendPage(reply, 404, consoleMessagePage('Not found', error.message, { href: `${CONSOLE_PATH}/`, label: 'Back to the console' }));
    const status = (error as { statusCode?: number }).statusCode;
    if (error instanceof OAuthError || (status !== undefined && status >= 400 && status < 500)) {
      return sendPage(reply, 400, consoleMessagePage('Invalid request', 'The request could not be understood.', { href: `${CONSOLE_PATH}/`, label: 'Back to the console' }));
    }
    req.log.error({ err: error }, 'admin console error');
    return sendPage(reply, 500, consoleMessagePage('Something went wrong', 'The server could not complete your request.'));
  });

  // As the admin API: a change made here counts in this process at once (a disabled client, a rotated
  // secret, a granted role at the next token request), not after the configuration cache's TTL; other
  // processes see it within REALMGATE_CACHE_TTL_MS. A form that changed something answers 2xx or 303.
  app.addHook('onSend', async (req, reply) => {
    if (req.method === 'POST' && reply.statusCode < 400) services.cache.clear();
  });

  /** The signed-in admin, or a redirect to the sign-in (GET) / a 401 page (POST: the form is not replayed). */
  async function signedIn(req: Req, reply: FastifyReply): Promise<Signed | undefined> {
    const caller = await consoleCaller(services, req, reply);
    if (!caller) {
      if (req.method === 'GET') reply.redirect(`${CONSOLE_PATH}/login`, 303);
      else sendPage(reply, 401, consoleMessagePage('Signed out', 'Your console session has ended. Sign in again.', { href: `${CONSOLE_PATH}/login`, label: 'Sign in' }));
      return undefined;
    }
    if (req.method === 'POST' && !(await checkConsoleCsrf(services, req, req.body?.csrf))) {
      sendPage(reply, 403, consoleMessagePage('Form expired', 'This form is no longer valid. Go back, reload the page and try again.', { href: `${CONSOLE_PATH}/`, label: 'Back to the console' }));
      return undefined;
    }
    // Own keys only: `done=constructor` or `done=__proto__` would otherwise show Object's own members.
    const notice = typeof req.query.done === 'string' && Object.hasOwn(NOTICES, req.query.done) ? NOTICES[req.query.done] : undefined;
    const actor: Actor = { via: 'console', realmId: caller.realmId, userId: caller.userId, username: caller.username, clientId: caller.clientId, ip: req.ip };
    const section = /^\/auth\/admin\/console\/realms\/[^/?]+(\/[a-z-]+)?/.exec(req.url)?.[1] ?? '';
    return { caller, actor, frame: { title: '', admin: caller.username ?? caller.userId, csrf: await consoleCsrf(services, req), section, ...(notice ? { notice } : {}) } };
  }

  function need(caller: AdminCaller, realmId: string, role: AdminRole): void {
    if (!hasAdminRole(caller, realmId, role)) throw new Forbidden(`This page needs the ${role} role of realm ${realmId}.`);
  }

  /** Runs a change; a refused value re-renders the page with the reason (400), never loses the form. */
  async function attempt(reply: FastifyReply, change: () => Promise<unknown>, onError: (message: string) => Promise<FastifyReply>, next: string): Promise<FastifyReply> {
    try {
      await change();
    } catch (err) {
      if (isRefusal(err)) return onError(err.message);
      throw err;
    }
    return reply.redirect(next, 303);
  }

  // {AUTH_URL}/auth/admin/ (with or without the slash: ignoreTrailingSlash) opens the console.
  app.get('/auth/admin', async (_req, reply) => reply.redirect(`${CONSOLE_PATH}/`, 303));

  app.get(`${CONSOLE_PATH}/login`, async (_req, reply) => {
    // The console's client follows AUTH_URL: its callback is whitelisted for the current address.
    try {
      await ensureConsoleClient(services.store, { redirectUri: callbackUri(services) });
    } catch (err) {
      if (!(err instanceof NotFound)) throw err;
      return sendPage(reply, 503, consoleMessagePage('No admin realm', 'There is no master realm yet. Create the first administrator with `realmgate bootstrap-admin` or REALMGATE_BOOTSTRAP_ADMIN_USERNAME and REALMGATE_BOOTSTRAP_ADMIN_PASSWORD.'));
    }
    reply.header('cache-control', 'no-store');
    return reply.redirect(startLogin(services, reply), 303);
  });

  app.get(`${CONSOLE_PATH}/callback`, async (req: Req, reply) => {
    if (typeof req.query.error === 'string') {
      // Administrators belong to no organization: a master realm bootstrapped before the console existed
      // may still require one (realmgate realm update master --organization-required off).
      const hint = req.query.error === 'access_denied' ? ' If the sign-in said your account has no organization, turn off "organization required" for the master realm.' : '';
      return sendPage(reply, 400, consoleMessagePage('Sign-in failed', `The sign-in did not complete.${hint}`, { href: `${CONSOLE_PATH}/login`, label: 'Try again' }));
    }
    if (!(await finishLogin(services, req, reply, req.query))) {
      return sendPage(reply, 400, consoleMessagePage('Sign-in failed', 'This sign-in response does not belong to a sign-in started here.', { href: `${CONSOLE_PATH}/login`, label: 'Sign in' }));
    }
    return reply.redirect(`${CONSOLE_PATH}/`, 303);
  });

  app.post(`${CONSOLE_PATH}/logout`, async (req: Req, reply) => {
    const s = await signedIn(req, reply);
    if (!s) return reply;
    clearSession(services, reply);
    return sendPage(reply, 200, consoleMessagePage('Signed out', 'You left the admin console.', { href: `${CONSOLE_PATH}/login`, label: 'Sign in again' }));
  });

  app.get(`${CONSOLE_PATH}/`, async (req: Req, reply) => {
    const s = await signedIn(req, reply);
    if (!s) return reply;
    const realms = (await listRealms(services.store)).filter((r) => maySeeRealm(s.caller, r.id));
    return sendPage(reply, 200, dashboardPage({ ...s.frame, title: 'Dashboard' }, realms));
  });

  const R = `${CONSOLE_PATH}/realms/:realm`;

  /** The realm of the URL, once the admin may see it (403 whether or not it exists: no probing). */
  async function realmOf(caller: AdminCaller, realmId: string): Promise<string> {
    if (!maySeeRealm(caller, realmId)) throw new Forbidden(`You may not administer realm ${realmId}.`);
    return (await getRealm(services.store, realmId)).id;
  }

  async function showRealm(s: { caller: AdminCaller; frame: ConsoleFrame }, reply: FastifyReply, realmId: string, status = 200, error?: string, form?: Record<string, string>): Promise<FastifyReply> {
    const realm = await getRealm(services.store, realmId);
    const [clients, users] = await Promise.all([listClients(services.store, { realmId }), countUsers(services.store, { realmId })]);
    const frame = { ...s.frame, title: realm.displayName ?? realm.id, realmId, ...(error ? { error } : {}) };
    return sendPage(reply, status, realmPage(frame, realm, { clients: clients.length, users }, hasAdminRole(s.caller, realmId, 'manage-realm'), form));
  }

  app.get(R, async (req: Req, reply) => {
    const s = await signedIn(req, reply);
    if (!s) return reply;
    const realmId = await realmOf(s.caller, req.params.realm!);
    need(s.caller, realmId, 'view-realm');
    return showRealm(s, reply, realmId);
  });

  app.post(`${R}/lifetimes`, async (req: Req, reply) => {
    const s = await signedIn(req, reply);
    if (!s) return reply;
    const realmId = await realmOf(s.caller, req.params.realm!);
    need(s.caller, realmId, 'manage-realm');
    const form: Record<string, string> = {};
    const settings: Record<string, number> = {};
    const bad = readSeconds(req, LIFETIMES, form, settings);
    if (bad) return showRealm(s, reply, realmId, 400, bad, form);
    return attempt(
      reply,
      () => updateRealm(services.store, { realmId, settings }, s.actor),
      (error) => showRealm(s, reply, realmId, 400, error, form),
      `${realmBase(realmId)}?done=lifetimes-saved`,
    );
  });

  app.post(`${R}/login-options`, async (req: Req, reply) => {
    const s = await signedIn(req, reply);
    if (!s) return reply;
    const realmId = await realmOf(s.caller, req.params.realm!);
    need(s.caller, realmId, 'manage-realm');
    // An unticked box sends nothing: off.
    const form: Record<string, string> = { loginOptions: '1' };
    const settings: Record<string, number | boolean> = {};
    for (const [key] of LOGIN_OPTIONS) {
      form[key] = field(req, key) === 'on' ? 'on' : '';
      settings[key] = form[key] === 'on';
    }
    const bad = readSeconds(req, REMEMBER_ME_LIFETIMES, form, settings);
    if (bad) return showRealm(s, reply, realmId, 400, bad, form);
    return attempt(
      reply,
      () => updateRealm(services.store, { realmId, settings }, s.actor),
      (error) => showRealm(s, reply, realmId, 400, error, form),
      `${realmBase(realmId)}?done=login-options-saved`,
    );
  });

  app.post(`${R}/languages`, async (req: Req, reply) => {
    const s = await signedIn(req, reply);
    if (!s) return reply;
    const realmId = await realmOf(s.caller, req.params.realm!);
    need(s.caller, realmId, 'manage-realm');
    // An unticked box sends nothing: off. The list is comma-separated; an empty default is none.
    const form = { languages: '1', internationalizationEnabled: field(req, 'internationalizationEnabled') === 'on' ? 'on' : '', supportedLocales: text(req, 'supportedLocales'), defaultLocale: field(req, 'defaultLocale').trim() };
    const supportedLocales = form.supportedLocales.split(',').map((t) => t.trim()).filter((t) => t !== '');
    return attempt(
      reply,
      () => updateRealm(services.store, { realmId, settings: { internationalizationEnabled: form.internationalizationEnabled === 'on', supportedLocales, defaultLocale: form.defaultLocale === '' ? null : form.defaultLocale } }, s.actor),
      (error) => showRealm(s, reply, realmId, 400, error, form),
      `${realmBase(realmId)}?done=languages-saved`,
    );
  });

  app.post(`${R}/password-policy`, async (req: Req, reply) => {
    const s = await signedIn(req, reply);
    if (!s) return reply;
    const realmId = await realmOf(s.caller, req.params.realm!);
    need(s.caller, realmId, 'manage-realm');
    const form = { passwordPolicy: field(req, 'passwordPolicy') };
    return attempt(
      reply,
      () => updateRealm(services.store, { realmId, settings: { passwordPolicy: form.passwordPolicy } }, s.actor),
      (error) => showRealm(s, reply, realmId, 400, error, form),
      `${realmBase(realmId)}?done=password-policy-saved`,
    );
  });

  app.post(`${R}/registration`, async (req: Req, reply) => {
    const s = await signedIn(req, reply);
    if (!s) return reply;
    const realmId = await realmOf(s.caller, req.params.realm!);
    need(s.caller, realmId, 'manage-realm');
    // Checkboxes: a switch absent from the form is off.
    const on = (name: string): boolean => field(req, name) === 'on';
    return attempt(
      reply,
      () => updateRealm(services.store, { realmId, settings: { registrationAllowed: on('registrationAllowed'), registrationEmailAsUsername: on('registrationEmailAsUsername'), editUsernameAllowed: on('editUsernameAllowed'), verifyEmail: on('verifyEmail') } }, s.actor),
      (error) => showRealm(s, reply, realmId, 400, error),
      `${realmBase(realmId)}?done=registration-saved`,
    );
  });

  // Clients: view-clients to read, manage-clients to change.
  async function showClients(s: { caller: AdminCaller; frame: ConsoleFrame }, reply: FastifyReply, realmId: string, status = 200, error?: string, form?: Record<string, string>): Promise<FastifyReply> {
    const clients = await listClients(services.store, { realmId });
    const frame = { ...s.frame, title: 'Clients', realmId, ...(error ? { error } : {}) };
    return sendPage(reply, status, clientsPage(frame, clients, hasAdminRole(s.caller, realmId, 'manage-clients'), form));
  }

  app.get(`${R}/clients`, async (req: Req, reply) => {
    const s = await signedIn(req, reply);
    if (!s) return reply;
    const realmId = await realmOf(s.caller, req.params.realm!);
    need(s.caller, realmId, 'view-clients');
    return showClients(s, reply, realmId);
  });

  app.post(`${R}/clients`, async (req: Req, reply) => {
    const s = await signedIn(req, reply);
    if (!s) return reply;
    const realmId = await realmOf(s.caller, req.params.realm!);
    need(s.caller, realmId, 'manage-clients');
    const form = { clientId: field(req, 'clientId'), name: field(req, 'name'), redirectUri: field(req, 'redirectUri'), type: field(req, 'type') };
    let created: { secret: string | undefined } | undefined;
    try {
      created = await createClient(
        services.store,
        { realmId, clientId: form.clientId, redirectUris: form.redirectUri ? [form.redirectUri] : [], public: form.type === 'public', ...(form.name ? { name: form.name } : {}) },
        s.actor,
      );
    } catch (err) {
      if (isRefusal(err)) return showClients(s, reply, realmId, 400, err.message, form);
      throw err;
    }
    // A generated secret is shown once, on this response only (it is stored as a hash).
    const client = await getClient(services.store, { realmId, clientId: form.clientId });
    return showClient(s, reply, realmId, client, { status: 201, notice: NOTICES['client-created']!, ...(created.secret ? { secret: created.secret } : {}) });
  });

  /** A client's page, with its roles; `opts`: a refused form's status and reason, a notice, a secret shown once, the role form as typed. */
  async function showClient(
    s: { caller: AdminCaller; frame: ConsoleFrame },
    reply: FastifyReply,
    realmId: string,
    client: Client,
    opts: { status?: number; error?: string; notice?: string; secret?: string; roleForm?: Record<string, string> } = {},
  ): Promise<FastifyReply> {
    const [roles, composite] = await Promise.all([listRolesWithCounts(services.store, { realmId, clientId: client.clientId }), services.store.roles.compositeIds(realmId)]);
    const frame = { ...s.frame, title: client.clientId, realmId, ...(opts.error ? { error: opts.error } : {}), ...(opts.notice ? { notice: opts.notice } : {}) };
    const clientRoles = { rows: roles.map((r) => ({ ...r, admin: isAdminRole(r), composite: composite.has(r.id) })), adminOnly: client.clientId === REALM_MANAGEMENT, ...(opts.roleForm ? { form: opts.roleForm } : {}) };
    const inScope = (await services.store.roleScopes.list(realmId, { kind: 'client', id: client.clientId })).map((r) => (r.clientId === '' ? r.name : `${r.clientId}/${r.name}`));
    return sendPage(reply, opts.status ?? 200, clientPage(frame, client, hasAdminRole(s.caller, realmId, 'manage-clients'), clientRoles, opts.secret, inScope, previousSecretOf(client, nowSeconds(services.clock))?.expiresAt ?? null));
  }

  app.get(`${R}/clients/:clientId`, async (req: Req, reply) => {
    const s = await signedIn(req, reply);
    if (!s) return reply;
    const realmId = await realmOf(s.caller, req.params.realm!);
    need(s.caller, realmId, 'view-clients');
    const client = await getClient(services.store, { realmId, clientId: req.params.clientId! });
    return showClient(s, reply, realmId, client);
  });

  /** A client the caller may change (manage-clients), with its page's address. */
  async function managedClient(s: { caller: AdminCaller }, req: Req): Promise<{ realmId: string; client: Client; page: string }> {
    const realmId = await realmOf(s.caller, req.params.realm!);
    need(s.caller, realmId, 'manage-clients');
    const client = await getClient(services.store, { realmId, clientId: req.params.clientId! });
    return { realmId, client, page: `${realmBase(realmId)}/clients/${encodeURIComponent(client.clientId)}` };
  }

  // The client's lists: valid redirect URIs (field uri) and web origins (field origin; "+" for the
  // redirect URIs' origins), each added or removed one at a time.
  const LISTS = [
    { path: 'redirect-uris', key: 'redirectUris', field: 'uri', done: 'uri' },
    { path: 'web-origins', key: 'webOrigins', field: 'origin', done: 'origin' },
  ] as const;
  for (const list of LISTS) {
    for (const op of ['add', 'remove'] as const) {
      app.post(`${R}/clients/:clientId/${list.path}${op === 'add' ? '' : '/remove'}`, async (req: Req, reply) => {
        const s = await signedIn(req, reply);
        if (!s) return reply;
        const { realmId, client, page } = await managedClient(s, req);
        const value = field(req, list.field);
        return attempt(
          reply,
          () => updateClient(services.store, { realmId, clientId: client.clientId, [list.key]: { [op]: [value] } }, s.actor),
          (error) => showClient(s, reply, realmId, client, { status: 400, error }),
          `${page}?done=${list.done}-${op === 'add' ? 'added' : 'removed'}`,
        );
      });
    }
  }

  // Back-channel logout: the URL ('' removes it) and Keycloak's two switches, saved together.
  app.post(`${R}/clients/:clientId/backchannel-logout`, async (req: Req, reply) => {
    const s = await signedIn(req, reply);
    if (!s) return reply;
    const { realmId, client, page } = await managedClient(s, req);
    const backchannelLogout = { url: field(req, 'url').trim(), sessionRequired: field(req, 'sessionRequired') === 'on', revokeOfflineTokens: field(req, 'revokeOfflineTokens') === 'on' };
    return attempt(
      reply,
      () => updateClient(services.store, { realmId, clientId: client.clientId, backchannelLogout }, s.actor),
      (error) => showClient(s, reply, realmId, client, { status: 400, error }),
      `${page}?done=backchannel-saved`,
    );
  });

  // The client's switches (an unticked box sends nothing): RFC 9126, whether its authorization requests
  // must be pushed; RFC 9449, whether its token requests must carry a DPoP proof; full scope.
  const switches = [
    { path: 'pushed-requests', setting: 'requirePushedAuthorizationRequests', done: 'par-saved' },
    { path: 'dpop', setting: 'dpopBoundAccessTokens', done: 'dpop-saved' },
    // Keycloak's fullScopeAllowed: whether its tokens carry every role of their user, or those in its scope.
    { path: 'full-scope', setting: 'fullScopeAllowed', done: 'full-scope-saved' },
  ] as const;
  for (const sw of switches) {
    app.post(`${R}/clients/:clientId/${sw.path}`, async (req: Req, reply) => {
      const s = await signedIn(req, reply);
      if (!s) return reply;
      const { realmId, client, page } = await managedClient(s, req);
      const on = field(req, 'required') === 'on';
      return attempt(
        reply,
        () => updateClient(services.store, { realmId, clientId: client.clientId, [sw.setting]: on }, s.actor),
        (error) => showClient(s, reply, realmId, client, { status: 400, error }),
        `${page}?done=${sw.done}`,
      );
    });
  }

  // RFC 9101: Keycloak's request.object.required and request.object.signature.alg (checked by the operation).
  app.post(`${R}/clients/:clientId/request-objects`, async (req: Req, reply) => {
    const s = await signedIn(req, reply);
    if (!s) return reply;
    const { realmId, client, page } = await managedClient(s, req);
    const required = field(req, 'required');
    const alg = field(req, 'alg');
    return attempt(
      reply,
      () => updateClient(services.store, { realmId, clientId: client.clientId, requestObjectRequired: required as RequestObjectRequired, requestObjectSignatureAlg: alg }, s.actor),
      (error) => showClient(s, reply, realmId, client, { status: 400, error }),
      `${page}?done=request-objects-saved`,
    );
  });

  // RFC 8693: Keycloak's standard.token.exchange.enabled and its refresh setting (unticked boxes send nothing).
  app.post(`${R}/clients/:clientId/token-exchange`, async (req: Req, reply) => {
    const s = await signedIn(req, reply);
    if (!s) return reply;
    const { realmId, client, page } = await managedClient(s, req);
    const standardTokenExchange = field(req, 'enabled') === 'on';
    const tokenExchangeRefresh = field(req, 'refresh') === 'on' ? ('SAME_SESSION' as const) : ('NO' as const);
    return attempt(
      reply,
      () => updateClient(services.store, { realmId, clientId: client.clientId, standardTokenExchange, tokenExchangeRefresh }, s.actor),
      (error) => showClient(s, reply, realmId, client, { status: 400, error }),
      `${page}?done=token-exchange-saved`,
    );
  });

  // Front-channel logout: Keycloak's switch, the URL ('' removes it) and session required, saved together.
  app.post(`${R}/clients/:clientId/frontchannel-logout`, async (req: Req, reply) => {
    const s = await signedIn(req, reply);
    if (!s) return reply;
    const { realmId, client, page } = await managedClient(s, req);
    const frontchannelLogout = { enabled: field(req, 'enabled') === 'on', url: field(req, 'url').trim(), sessionRequired: field(req, 'sessionRequired') === 'on' };
    return attempt(
      reply,
      () => updateClient(services.store, { realmId, clientId: client.clientId, frontchannelLogout }, s.actor),
      (error) => showClient(s, reply, realmId, client, { status: 400, error }),
      `${page}?done=frontchannel-saved`,
    );
  });

  // Credentials (Keycloak's tab): the authenticator, and a signed-JWT client's keys, saved together. Going
  // back to a secret a client never had generates one, shown once.
  app.post(`${R}/clients/:clientId/credentials`, async (req: Req, reply) => {
    const s = await signedIn(req, reply);
    if (!s) return reply;
    const { realmId, client, page } = await managedClient(s, req);
    const jwt = field(req, 'authenticator') === 'client-jwt';
    const authMethods = jwt ? ['private_key_jwt'] : usesJwt(client.authMethods) ? [...DEFAULT_AUTH_METHODS] : undefined;
    const jwtKeys = {
      useJwksUrl: field(req, 'useJwksUrl') === 'on',
      jwksUrl: field(req, 'jwksUrl').trim(),
      useJwksString: field(req, 'useJwksString') === 'on',
      jwksString: field(req, 'jwksString').trim(),
      certificate: field(req, 'certificate').trim(),
      signingAlg: field(req, 'signingAlg'),
    };
    let secret: string | undefined;
    try {
      ({ secret } = await updateClientShowingSecret(services.store, { realmId, clientId: client.clientId, ...(authMethods ? { authMethods } : {}), jwtKeys }, s.actor));
    } catch (err) {
      if (isRefusal(err)) return showClient(s, reply, realmId, client, { status: 400, error: err.message });
      throw err;
    }
    if (secret !== undefined) {
      const updated = (await services.store.clients.get(realmId, client.clientId)) ?? client;
      return showClient(s, reply, realmId, updated, { notice: 'The client authenticates with its secret again: a new one was generated.', secret });
    }
    return reply.redirect(`${page}?done=credentials-saved`, 303);
  });

  for (const enabled of [true, false]) {
    app.post(`${R}/clients/:clientId/${enabled ? 'enable' : 'disable'}`, async (req: Req, reply) => {
      const s = await signedIn(req, reply);
      if (!s) return reply;
      const { realmId, client, page } = await managedClient(s, req);
      return attempt(
        reply,
        () => setClientEnabled(services.store, { realmId, clientId: client.clientId, enabled }, s.actor),
        (error) => showClient(s, reply, realmId, client, { status: 400, error }),
        `${page}?done=client-${enabled ? 'enabled' : 'disabled'}`,
      );
    });
  }

  // A new secret replaces the old one, which is refused at once or kept valid for the chosen time; the new
  // one is shown on this response only (stored as a hash).
  app.post(`${R}/clients/:clientId/secret`, async (req: Req, reply) => {
    const s = await signedIn(req, reply);
    if (!s) return reply;
    const { realmId, client } = await managedClient(s, req);
    let rotated: { secret: string; previousValidUntil: number | null };
    try {
      const keep = field(req, 'keepPrevious');
      rotated = await rotateClientSecret(services.store, { realmId, clientId: client.clientId, keepPreviousSeconds: keep ? parseKeepPrevious(keep) : 0, now: nowSeconds(services.clock) }, s.actor);
    } catch (err) {
      if (isRefusal(err)) return showClient(s, reply, realmId, client, { status: 400, error: err.message });
      throw err;
    }
    const notice = rotated.previousValidUntil === null
      ? 'A new secret was generated: the old one no longer works.'
      : `A new secret was generated: the old one is still accepted until ${when(rotated.previousValidUntil)}.`;
    return showClient(s, reply, realmId, await getClient(services.store, { realmId, clientId: client.clientId }), { notice, secret: rotated.secret });
  });

  // Keycloak's client push not-before: every token issued to the client until now is refused.
  app.post(`${R}/clients/:clientId/not-before`, async (req: Req, reply) => {
    const s = await signedIn(req, reply);
    if (!s) return reply;
    const { realmId, client, page } = await managedClient(s, req);
    return attempt(
      reply,
      () => pushClientNotBefore(services.store, { realmId, clientId: client.clientId, nowMs: () => services.clock.nowMs() }, s.actor),
      (error) => showClient(s, reply, realmId, client, { status: 400, error }),
      `${page}?done=client-tokens-refused`,
    );
  });

  app.post(`${R}/clients/:clientId/secret/previous/invalidate`, async (req: Req, reply) => {
    const s = await signedIn(req, reply);
    if (!s) return reply;
    const { realmId, client, page } = await managedClient(s, req);
    return attempt(
      reply,
      () => invalidatePreviousSecret(services.store, { realmId, clientId: client.clientId, now: nowSeconds(services.clock) }, s.actor),
      (error) => showClient(s, reply, realmId, client, { status: 400, error }),
      `${page}?done=previous-secret-refused`,
    );
  });

  // Deleting asks for the client ID typed again: a slip of the mouse cannot delete a client.
  app.post(`${R}/clients/:clientId/delete`, async (req: Req, reply) => {
    const s = await signedIn(req, reply);
    if (!s) return reply;
    const { realmId, client } = await managedClient(s, req);
    const refuse = (error: string): Promise<FastifyReply> => showClient(s, reply, realmId, client, { status: 400, error });
    if (field(req, 'confirm') !== client.clientId) return refuse('Type the client ID to confirm that the client is to be deleted.');
    return attempt(reply, () => deleteClient(services.store, { realmId, clientId: client.clientId }, s.actor), async (error) => refuse(error), `${realmBase(realmId)}/clients?done=client-deleted`);
  });

  // Roles, as the admin API decides: the realm's on their own page (view-realm to read, manage-realm to
  // change), a client's on the client's page (view-clients, manage-clients). Who holds a role is shown with
  // view-users. A form names its role in a field, never in the path (a role may be called "..").
  interface RoleHome {
    realmId: string;
    /** '' for the realm's roles. */
    clientId: string;
    /** The page listing the roles: the realm's roles page or the client's page. */
    list: string;
    /** The roles' address: forms post to it, a role's page is below it. */
    base: string;
    manage: AdminRole;
  }

  /** Where the roles of the URL live, once the admin holds `level` (view or manage) for them: checked before the client is looked up. */
  async function roleHome(s: { caller: AdminCaller }, req: Req, level: 'view' | 'manage'): Promise<RoleHome> {
    const realmId = await realmOf(s.caller, req.params.realm!);
    if (req.params.clientId === undefined) {
      need(s.caller, realmId, level === 'view' ? 'view-realm' : 'manage-realm');
      const list = `${realmBase(realmId)}/roles`;
      return { realmId, clientId: '', list, base: list, manage: 'manage-realm' };
    }
    need(s.caller, realmId, level === 'view' ? 'view-clients' : 'manage-clients');
    const client = await getClient(services.store, { realmId, clientId: req.params.clientId });
    const list = `${realmBase(realmId)}/clients/${encodeURIComponent(client.clientId)}`;
    return { realmId, clientId: client.clientId, list, base: `${list}/roles`, manage: 'manage-clients' };
  }

  async function showRoles(s: { caller: AdminCaller; frame: ConsoleFrame }, reply: FastifyReply, realmId: string, status = 200, error?: string, form?: Record<string, string>): Promise<FastifyReply> {
    const [roles, composite] = await Promise.all([listRolesWithCounts(services.store, { realmId, clientId: '' }), services.store.roles.compositeIds(realmId)]);
    const frame = { ...s.frame, title: 'Roles', realmId, ...(error ? { error } : {}) };
    return sendPage(reply, status, rolesPage(frame, roles.map((r) => ({ ...r, admin: isAdminRole(r), composite: composite.has(r.id) })), hasAdminRole(s.caller, realmId, 'manage-realm'), form));
  }

  async function showRole(s: { caller: AdminCaller; frame: ConsoleFrame }, reply: FastifyReply, home: RoleHome, name: string, status = 200, error?: string, form?: Record<string, string>): Promise<FastifyReply> {
    const seesUsers = hasAdminRole(s.caller, home.realmId, 'view-users');
    const { role, users, total } = await roleWithUsers(services.store, { realmId: home.realmId, clientId: home.clientId, name, max: seesUsers ? 500 : 0 });
    const canManage = hasAdminRole(s.caller, home.realmId, home.manage);
    // What it contains directly; to add, the realm's other roles (not itself, not those it contains already).
    const [contained, all] = await Promise.all([roleComposites(services.store, { realmId: home.realmId, roleId: role.id }), canManage ? services.store.roles.listAll(home.realmId) : []]);
    const taken = new Set([role.id, ...contained.map((r) => r.id)]);
    const frame = { ...s.frame, title: role.name, realmId: home.realmId, ...(error ? { error } : {}) };
    const row = { ...role, users: total, admin: isAdminRole(role), composite: contained.length > 0 };
    const contents = { contained, available: all.filter((r) => !taken.has(r.id)) };
    return sendPage(reply, status, rolePage(frame, row, home.base, seesUsers ? users : undefined, canManage, form, contents));
  }

  app.get(`${R}/roles`, async (req: Req, reply) => {
    const s = await signedIn(req, reply);
    if (!s) return reply;
    const realmId = await realmOf(s.caller, req.params.realm!);
    need(s.caller, realmId, 'view-realm');
    return showRoles(s, reply, realmId);
  });

  for (const container of [`${R}/roles`, `${R}/clients/:clientId/roles`]) {
    app.get(`${container}/role`, async (req: Req, reply) => {
      const s = await signedIn(req, reply);
      if (!s) return reply;
      const home = await roleHome(s, req, 'view');
      return showRole(s, reply, home, typeof req.query.name === 'string' ? req.query.name : '');
    });

    app.post(container, async (req: Req, reply) => {
      const s = await signedIn(req, reply);
      if (!s) return reply;
      const home = await roleHome(s, req, 'manage');
      const form = { name: field(req, 'name'), description: text(req, 'description') };
      let name: string;
      try {
        ({ name } = await createRole(services.store, { realmId: home.realmId, clientId: home.clientId, name: form.name, description: form.description }, s.actor));
      } catch (err) {
        if (!isRefusal(err)) throw err;
        if (home.clientId === '') return showRoles(s, reply, home.realmId, 400, err.message, form);
        const client = await getClient(services.store, { realmId: home.realmId, clientId: home.clientId });
        return showClient(s, reply, home.realmId, client, { status: 400, error: err.message, roleForm: form });
      }
      return reply.redirect(`${roleUrl(home.base, name)}&done=role-created`, 303);
    });

    app.post(`${container}/update`, async (req: Req, reply) => {
      const s = await signedIn(req, reply);
      if (!s) return reply;
      const home = await roleHome(s, req, 'manage');
      const current = field(req, 'role');
      const form = { name: field(req, 'name'), description: text(req, 'description') };
      let name: string;
      try {
        ({ name } = await updateRole(services.store, { realmId: home.realmId, clientId: home.clientId, name: current, newName: form.name, description: form.description }, s.actor));
      } catch (err) {
        if (isRefusal(err)) return showRole(s, reply, home, current, 400, err.message, form);
        throw err;
      }
      return reply.redirect(`${roleUrl(home.base, name)}&done=role-saved`, 303);
    });

    // Deleting asks for the role's name typed again, as deleting a client does.
    app.post(`${container}/delete`, async (req: Req, reply) => {
      const s = await signedIn(req, reply);
      if (!s) return reply;
      const home = await roleHome(s, req, 'manage');
      const name = field(req, 'role');
      if (field(req, 'confirm') !== name) return showRole(s, reply, home, name, 400, 'Type the role name to confirm that the role is to be deleted.');
      return attempt(
        reply,
        async () => {
          await deleteRole(services.store, { realmId: home.realmId, clientId: home.clientId, name }, s.actor);
        },
        (error) => showRole(s, reply, home, name, 400, error),
        `${home.list}?done=role-deleted`,
      );
    });

    // What a role contains (composite roles), as the admin API's .../roles/{name}/composites: the manage
    // role of its container, and an admin role (or a composite holding one) only by an admin who could map
    // it to a user (mappingGuard). The form names this role by its name, the contained one by its id.
    for (const op of ['add', 'remove'] as const) {
      app.post(`${container}/composites${op === 'add' ? '' : '/remove'}`, async (req: Req, reply) => {
        const s = await signedIn(req, reply);
        if (!s) return reply;
        const home = await roleHome(s, req, 'manage');
        const role = await requireRoleByName(services.store, home.realmId, home.clientId, field(req, 'role'));
        const member = await findRoleById(services.store, home.realmId, field(req, 'contained'));
        if (!member) return showRole(s, reply, home, role.name, 400, 'That role does not exist (any more) in this realm: choose one of the list.');
        const resourcePath = `${home.clientId ? `clients/${home.clientId}/` : ''}roles/${role.name}/composites`;
        try {
          await changeComposites(services.store, { realmId: home.realmId, roleId: role.id, roles: [{ id: member.id }], remove: op === 'remove', resourcePath }, s.actor, mappingGuard(s.caller));
        } catch (err) {
          // Refused by the operation (the role would contain itself) or by the guard (an admin role the admin may not hand out): said on the role's page.
          if (isRefusal(err)) return showRole(s, reply, home, role.name, 400, err.message);
          if (err instanceof Forbidden) return showRole(s, reply, home, role.name, 403, err.message);
          throw err;
        }
        services.cache.clear();
        return reply.redirect(`${roleUrl(home.base, role.name)}&done=composite-${op === 'add' ? 'added' : 'removed'}`, 303);
      });
    }
  }

  // Users: view-users to read, manage-users to change.
  async function showUsers(s: { caller: AdminCaller; frame: ConsoleFrame }, reply: FastifyReply, realmId: string, search: string, status = 200, error?: string, form?: Record<string, string>): Promise<FastifyReply> {
    const users = await listUsers(services.store, { realmId, ...(search ? { search } : {}), max: 100 });
    const frame = { ...s.frame, title: 'Users', realmId, ...(error ? { error } : {}) };
    return sendPage(reply, status, usersPage(frame, users, hasAdminRole(s.caller, realmId, 'manage-users'), search, form));
  }

  app.get(`${R}/users`, async (req: Req, reply) => {
    const s = await signedIn(req, reply);
    if (!s) return reply;
    const realmId = await realmOf(s.caller, req.params.realm!);
    need(s.caller, realmId, 'view-users');
    const search = typeof req.query.search === 'string' ? req.query.search.slice(0, 255) : '';
    return showUsers(s, reply, realmId, search);
  });

  app.post(`${R}/users`, async (req: Req, reply) => {
    const s = await signedIn(req, reply);
    if (!s) return reply;
    const realmId = await realmOf(s.caller, req.params.realm!);
    need(s.caller, realmId, 'manage-users');
    const form = { username: field(req, 'username'), email: field(req, 'email') };
    const password = typeof req.body?.password === 'string' ? req.body.password : '';
    // An unchecked box sends nothing: the password is then permanent.
    const temporary = req.body?.temporary === 'on';
    let id: string;
    try {
      // A default group may bring roles: the same check as a join (mappingGuard) before the user exists.
      ({ id } = await createUser(services.store, { realmId, username: form.username, password, temporary, ...(form.email ? { email: form.email } : {}) }, s.actor, mappingGuard(s.caller)));
    } catch (err) {
      if (isRefusal(err)) return showUsers(s, reply, realmId, '', 400, err.message, form);
      throw err;
    }
    return reply.redirect(`${realmBase(realmId)}/users/${encodeURIComponent(id)}?done=user-created`, 303);
  });

  async function showUser(s: { caller: AdminCaller; frame: ConsoleFrame }, reply: FastifyReply, realmId: string, userRef: string, status = 200, error?: string): Promise<FastifyReply> {
    const user = await requireUser(services.store, realmId, userRef);
    const [lock, sessions, roles, groups, credentials, links] = await Promise.all([
      bruteForceStatus(services.store, { realmId, user: user.id }),
      userSessions(services.store, { realmId, user: user.id }),
      userRoleChoices(services.store, { realmId, userId: user.id }),
      userGroupChoices(services.store, { realmId, userId: user.id }),
      userCredentials(services.store, { realmId, user: user.id }),
      listFederatedIdentities(services.store, user),
    ]);
    const frame = { ...s.frame, title: user.username, realmId, ...(error ? { error } : {}) };
    const linked = { links, providerPages: hasAdminRole(s.caller, realmId, 'view-identity-providers'), noPassword: !hasPassword(user.passwordHash) };
    const canImpersonate = await mayImpersonateUser(services.store, s.caller, user);
    return sendPage(reply, status, userPage(frame, user, lock, hasAdminRole(s.caller, realmId, 'manage-users'), sessions, roles, groups, credentials.otp, linked, credentials.webauthn, canImpersonate));
  }

  app.get(`${R}/users/:user`, async (req: Req, reply) => {
    const s = await signedIn(req, reply);
    if (!s) return reply;
    const realmId = await realmOf(s.caller, req.params.realm!);
    need(s.caller, realmId, 'view-users');
    return showUser(s, reply, realmId, req.params.user!);
  });

  const userActions = {
    disable: { run: disableUser, done: 'user-disabled' },
    enable: { run: enableUser, done: 'user-enabled' },
    unlock: { run: unlockUser, done: 'user-unlocked' },
  } as const;
  for (const [name, action] of Object.entries(userActions)) {
    app.post(`${R}/users/:user/${name}`, async (req: Req, reply) => {
      const s = await signedIn(req, reply);
      if (!s) return reply;
      const realmId = await realmOf(s.caller, req.params.realm!);
      need(s.caller, realmId, 'manage-users');
      const user = await requireUser(services.store, realmId, req.params.user!);
      await action.run(services.store, { realmId, user: user.id }, s.actor);
      return reply.redirect(`${realmBase(realmId)}/users/${encodeURIComponent(user.id)}?done=${action.done}`, 303);
    });
  }

  // Keycloak's console "Impersonate": the user's new session's cookies go to this browser, which then
  // opens the realm's account page as the user (the admin API's impersonation, the same checks).
  app.post(`${R}/users/:user/impersonate`, async (req: Req, reply) => {
    const s = await signedIn(req, reply);
    if (!s) return reply;
    const realmId = await realmOf(s.caller, req.params.realm!);
    const user = await requireUser(services.store, realmId, req.params.user!);
    let result;
    try {
      result = await impersonateUser(services, { realmId, userId: user.id }, s.caller, s.actor);
    } catch (err) {
      if (err instanceof ImpersonationForbidden) throw new Forbidden(`${err.message}.`);
      if (err instanceof ValidationError && !(err instanceof NotFound)) return showUser(s, reply, realmId, user.id, 400, `${err.message}: this user cannot be impersonated.`);
      throw err;
    }
    setSessionCookies(reply, services.config, result.session, result.secret, nowSeconds(services.clock));
    return reply.redirect(result.redirect, 303);
  });

  app.post(`${R}/users/:user/sessions/end`, async (req: Req, reply) => {
    const s = await signedIn(req, reply);
    if (!s) return reply;
    const realmId = await realmOf(s.caller, req.params.realm!);
    need(s.caller, realmId, 'manage-users');
    const user = await requireUser(services.store, realmId, req.params.user!);
    // Only a session of this user: the form's session id is not trusted to name anyone else's.
    const session = (await userSessions(services.store, { realmId, user: user.id })).find((x) => x.id === field(req, 'session'));
    if (session) await endSession(services.store, { realmId, sessionId: session.id }, s.actor);
    return reply.redirect(`${realmBase(realmId)}/users/${encodeURIComponent(user.id)}?done=session-ended`, 303);
  });

  // A user's attributes: manage-users sets one name's values (one per line) or removes a name, with the
  // rules of every door (updateUser: checkUserAttributes); a refusal shows the page again with the reason.
  for (const op of ['set', 'remove'] as const) {
    app.post(`${R}/users/:user/attributes${op === 'set' ? '' : '/remove'}`, async (req: Req, reply) => {
      const s = await signedIn(req, reply);
      if (!s) return reply;
      const realmId = await realmOf(s.caller, req.params.realm!);
      need(s.caller, realmId, 'manage-users');
      const user = await requireUser(services.store, realmId, req.params.user!);
      const name = field(req, 'name');
      const values = typeof req.body?.values === 'string' ? req.body.values.split(/\r?\n/).filter((v) => v !== '') : [];
      if (op === 'set' && values.length === 0) return showUser(s, reply, realmId, user.id, 400, 'Give at least one value (one per line); to remove an attribute, use its Remove button.');
      // The API ignores them, as Keycloak does; a form says why nothing would happen.
      if (ROOT_USER_PROPERTIES.includes(name)) return showUser(s, reply, realmId, user.id, 400, `${name} is not an attribute: it is the user's own field.`);
      return attempt(
        reply,
        async () => {
          await updateUser(services.store, { realmId, user: user.id, ...(op === 'set' ? { setAttributes: { [name]: values } } : { removeAttributes: [name] }) }, s.actor);
        },
        (error) => showUser(s, reply, realmId, user.id, 400, error),
        `${realmBase(realmId)}/users/${encodeURIComponent(user.id)}?done=attribute-${op === 'set' ? 'set' : 'removed'}`,
      );
    });
  }

  app.post(`${R}/users/:user/logout`, async (req: Req, reply) => {
    const s = await signedIn(req, reply);
    if (!s) return reply;
    const realmId = await realmOf(s.caller, req.params.realm!);
    need(s.caller, realmId, 'manage-users');
    const user = await requireUser(services.store, realmId, req.params.user!);
    await logoutUser(services.store, { realmId, user: user.id }, s.actor);
    return reply.redirect(`${realmBase(realmId)}/users/${encodeURIComponent(user.id)}?done=sessions-ended`, 303);
  });

  // A user's role mappings, as the admin API's: manage-users grants and revokes the realm's and its
  // clients' roles, and an admin role only when the admin holds it (mayMapRole). The form names the role by its id.
  for (const op of ['grant', 'revoke'] as const) {
    app.post(`${R}/users/:user/roles${op === 'grant' ? '' : '/remove'}`, async (req: Req, reply) => {
      const s = await signedIn(req, reply);
      if (!s) return reply;
      const realmId = await realmOf(s.caller, req.params.realm!);
      need(s.caller, realmId, 'manage-users');
      const user = await requireUser(services.store, realmId, req.params.user!);
      const role = await findRoleById(services.store, realmId, field(req, 'role'));
      if (!role) return showUser(s, reply, realmId, user.id, 400, 'That role does not exist (any more) in this realm: choose one of the list.');
      return attempt(
        reply,
        async () => {
          await changeRoleMappings(services.store, { realmId, userId: user.id, clientId: role.clientId, roles: [{ id: role.id }], remove: op === 'revoke' }, s.actor, mappingGuard(s.caller));
        },
        (error) => showUser(s, reply, realmId, user.id, 400, error),
        `${realmBase(realmId)}/users/${encodeURIComponent(user.id)}?done=role-${op === 'grant' ? 'granted' : 'revoked'}`,
      );
    });
  }

  app.post(`${R}/users/:user/password`, async (req: Req, reply) => {
    const s = await signedIn(req, reply);
    if (!s) return reply;
    const realmId = await realmOf(s.caller, req.params.realm!);
    need(s.caller, realmId, 'manage-users');
    const user = await requireUser(services.store, realmId, req.params.user!);
    const password = typeof req.body?.password === 'string' ? req.body.password : '';
    // As Keycloak's reset-password: unchecked, the password is permanent and a pending UPDATE_PASSWORD ends.
    const temporary = req.body?.temporary === 'on';
    return attempt(
      reply,
      () => resetPassword(services.store, { realmId, user: user.id, password, temporary, nowSeconds: nowSeconds(services.clock) }, s.actor),
      (error) => showUser(s, reply, realmId, user.id, 400, error),
      `${realmBase(realmId)}/users/${encodeURIComponent(user.id)}?done=password-reset`,
    );
  });

  // Organizations, as the admin API decides: view-realm to read, manage-realm to create; members are
  // users, so seeing them needs view-users and changing them manage-users as well as manage-realm.
  async function showOrganizations(s: { caller: AdminCaller; frame: ConsoleFrame }, reply: FastifyReply, realmId: string, status = 200, error?: string, form?: Record<string, string>): Promise<FastifyReply> {
    const orgs = await listOrganizations(services.store, { realmId, max: 200 });
    const frame = { ...s.frame, title: 'Organizations', realmId, ...(error ? { error } : {}) };
    return sendPage(reply, status, organizationsPage(frame, orgs, hasAdminRole(s.caller, realmId, 'manage-realm'), form));
  }

  app.get(`${R}/organizations`, async (req: Req, reply) => {
    const s = await signedIn(req, reply);
    if (!s) return reply;
    const realmId = await realmOf(s.caller, req.params.realm!);
    need(s.caller, realmId, 'view-realm');
    return showOrganizations(s, reply, realmId);
  });

  app.post(`${R}/organizations`, async (req: Req, reply) => {
    const s = await signedIn(req, reply);
    if (!s) return reply;
    const realmId = await realmOf(s.caller, req.params.realm!);
    need(s.caller, realmId, 'manage-realm');
    const form = { alias: field(req, 'alias'), name: field(req, 'name') };
    let id: string;
    try {
      ({ id } = await createOrganization(services.store, { realmId, alias: form.alias, ...(form.name ? { name: form.name } : {}) }, s.actor));
    } catch (err) {
      if (isRefusal(err)) return showOrganizations(s, reply, realmId, 400, err.message, form);
      throw err;
    }
    return reply.redirect(`${realmBase(realmId)}/organizations/${encodeURIComponent(id)}?done=organization-created`, 303);
  });

  async function showOrganization(s: { caller: AdminCaller; frame: ConsoleFrame }, reply: FastifyReply, realmId: string, ref: string, status = 200, error?: string, form?: Record<string, string>): Promise<FastifyReply> {
    const org = await requireOrganization(services.store, realmId, ref);
    const members = hasAdminRole(s.caller, realmId, 'view-users') ? await listMembers(services.store, { realmId, organization: org.id, max: 500 }) : undefined;
    const canManage = hasAdminRole(s.caller, realmId, 'manage-realm') && hasAdminRole(s.caller, realmId, 'manage-users');
    const frame = { ...s.frame, title: org.name, realmId, ...(error ? { error } : {}) };
    return sendPage(reply, status, organizationPage(frame, org, members, canManage, form));
  }

  app.get(`${R}/organizations/:org`, async (req: Req, reply) => {
    const s = await signedIn(req, reply);
    if (!s) return reply;
    const realmId = await realmOf(s.caller, req.params.realm!);
    need(s.caller, realmId, 'view-realm');
    return showOrganization(s, reply, realmId, req.params.org!);
  });

  for (const op of ['add', 'remove'] as const) {
    app.post(`${R}/organizations/:org/members${op === 'add' ? '' : '/remove'}`, async (req: Req, reply) => {
      const s = await signedIn(req, reply);
      if (!s) return reply;
      const realmId = await realmOf(s.caller, req.params.realm!);
      need(s.caller, realmId, 'manage-realm');
      need(s.caller, realmId, 'manage-users');
      const org = await requireOrganization(services.store, realmId, req.params.org!);
      const user = field(req, 'user');
      try {
        await (op === 'add' ? addMember : removeMember)(services.store, { realmId, organization: org.id, user }, s.actor);
      } catch (err) {
        // An unknown user or a second add is the operator's typo: said on the page, not a 404.
        if (err instanceof ValidationError || err instanceof ConflictError) return showOrganization(s, reply, realmId, org.id, 400, err.message, { user });
        throw err;
      }
      return reply.redirect(`${realmBase(realmId)}/organizations/${encodeURIComponent(org.id)}?done=member-${op === 'add' ? 'added' : 'removed'}`, 303);
    });
  }

  // Groups: their pages, and a user's groups on the user's page.
  const kit: ConsoleKit = { services, signedIn, realmOf, need, attempt, showUser };
  groupRoutes(app, kit);
  userOtpRoutes(app, kit);
  identityProviderRoutes(app, kit);
  userFederationRoutes(app, kit);
  initialAccessRoutes(app, kit);

  app.get(`${R}/events`, async (req: Req, reply) => {
    const s = await signedIn(req, reply);
    if (!s) return reply;
    const realmId = await realmOf(s.caller, req.params.realm!);
    need(s.caller, realmId, 'view-events');
    const [admin, login] = await Promise.all([listAdminEvents(services.store, { realmId, filter: { max: 50 } }), listLoginEvents(services.store, { realmId, filter: { limit: 50 } })]);
    return sendPage(reply, 200, eventsPage({ ...s.frame, title: 'Events', realmId }, admin, login));
  });
}

/**
 * Reads the form's whole-second fields `fields` into `form` (as typed, to show again) and `settings`;
 * returns the error to show for the first that is not a number of seconds, or undefined.
 */
function readSeconds(req: Req, fields: readonly (readonly [string, string])[], form: Record<string, string>, settings: Record<string, number | boolean>): string | undefined {
  for (const [key, label] of fields) {
    form[key] = field(req, key);
    if (!/^[0-9]{1,10}$/.test(form[key])) return `${label}: enter a whole number of seconds`;
    settings[key] = Number(form[key]);
  }
  return undefined;
}
