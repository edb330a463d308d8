import { passwordRule, SUPPORTED_POLICIES } from '../../admin/password-policy.js';
import { MASTER_REALM } from '../../admin/authorization.js';
import { html, type SafeHtml } from '../html.js';
import { REQUEST_OBJECT_REQUIRED, type Client, type FederatedIdentity, type Realm, type User } from '../../storage/types.js';
import { ASSERTION_ALGS } from '../../oauth/client-assertion.js';
import type { AdminEvent } from '../../storage/repos/admin-events.js';
import type { StoredEvent } from '../../admin/operations/events.js';
import type { BruteForceStatus } from '../../admin/operations/users.js';
import type { SessionSummary } from '../../storage/repos/session-admin.js';
import type { OrganizationDetails } from '../../storage/repos/organization-admin.js';
import type { Role } from '../../storage/repos/roles.js';
import { actionForm, consolePage, csrfField, realmBase, type ConsoleFrame } from './layout.js';
import { roleOptions, userGroupsSection, visible } from './group-pages.js';
import type { Group } from '../../storage/repos/groups.js';
import type { OtpSummary, WebAuthnSummary } from '../../admin/operations/user-credentials.js';
import { userOtpSection, userWebAuthnSection, userRequiredActionsSection } from './user-otp.js';
import { linkedAccountsSection } from './identity-provider-pages.js';
import { deviceLine } from '../user-agent.js';

export function when(seconds: number): string {
  return new Date(seconds * 1000).toISOString().replace('T', ' ').replace(/\.\d+Z$/, ' UTC');
}

function whenMs(ms: number): string {
  return new Date(ms).toISOString().replace('T', ' ').replace('Z', ' UTC');
}


/** A table row whose cells carry their column's name, shown beside each value on narrow screens. */
function row(labels: readonly string[], cells: readonly (SafeHtml | string)[]): SafeHtml {
  return html`<tr>${cells.map((c, i) => html`<td data-label="${labels[i] ?? ''}">${c}</td>`)}</tr>`;
}

export function dashboardPage(frame: ConsoleFrame, realms: Realm[]): string {
  const items = realms.map((r) => html`<li><a href="${realmBase(r.id)}">${r.displayName ?? r.id}</a> <span class="muted">${r.id}</span></li>`);
  return consolePage(
    frame,
    html`<h2>Realms</h2>${realms.length === 0 ? html`<p>You may administer no realm.</p>` : html`<ul class="cards">${items}</ul>`}`,
  );
}

/** Lifetimes an operator tunes, in seconds (Keycloak's names in the docs). */
export const LIFETIMES = [
  ['accessTokenLifetime', 'Access token lifetime'],
  ['ssoSessionLifetime', 'SSO session lifetime'],
  ['refreshIdleLifetime', 'Refresh token idle lifetime'],
  ['refreshMaxLifetime', 'Refresh token maximum lifetime'],
  ['codeLifetime', 'Authorization code lifetime'],
] as const;

export function realmPage(frame: ConsoleFrame & { realmId: string }, realm: Realm, counts: { clients: number; users: number }, canManage: boolean, form: Record<string, string> = {}): string {
  const rows = LIFETIMES.map(([key, label]) =>
    canManage
      ? html`<label for="${key}">${label} (seconds)</label><input type="text" inputmode="numeric" pattern="[0-9]*" id="${key}" name="${key}" required value="${form[key] ?? String(realm[key])}">`
      : html`<dt>${label}</dt><dd>${realm[key]} s</dd>`,
  );
  return consolePage(
    frame,
    html`<dl class="facts">
<dt>Name</dt><dd>${realm.displayName ?? realm.id}</dd>
<dt>Enabled</dt><dd>${realm.enabled === false ? 'no' : 'yes'}</dd>
<dt>Clients</dt><dd><a href="${realmBase(realm.id)}/clients">${counts.clients}</a></dd>
<dt>Users</dt><dd><a href="${realmBase(realm.id)}/users">${counts.users}</a></dd>
</dl>
<h2>Lifetimes</h2>
${canManage
  ? html`<form method="post" action="${realmBase(realm.id)}/lifetimes" class="console-form">${csrfField(frame.csrf)}${rows}<button type="submit">Save lifetimes</button></form>`
  : html`<dl class="facts">${rows}</dl>`}
<h2>Password policy</h2>
<p class="muted" id="policy-now">${passwordRule(realm.passwordPolicy).text}</p>
${canManage
  ? html`<form method="post" action="${realmBase(realm.id)}/password-policy" class="console-form">${csrfField(frame.csrf)}
<label for="passwordPolicy">Keycloak's syntax, empty for none (Realmgate's own 8 to 1024 characters stay underneath)</label>
<input type="text" id="passwordPolicy" name="passwordPolicy" autocomplete="off" spellcheck="false" maxlength="2048" aria-describedby="policy-ids" value="${form.passwordPolicy ?? realm.passwordPolicy}">
<p class="muted" id="policy-ids">For example length(12) and digits(1) and upperCase(1) and notUsername and passwordHistory(3). Supported: ${SUPPORTED_POLICIES.map((p) => p.id).join(', ')}.</p>
<button type="submit">Save password policy</button></form>`
  : html`<dl class="facts"><dt>Policy</dt><dd>${realm.passwordPolicy || 'none'}</dd></dl>`}
${loginOptionsSection(frame.csrf, realm, canManage, form)}
${registrationSection(frame.csrf, realm, canManage)}
${languagesSection(frame.csrf, realm, canManage, form)}`,
  );
}

/** Keycloak's login options (its realm settings' Login tab): the switches, and a remembered session's lifetimes. */
export const LOGIN_OPTIONS = [
  ['loginWithEmailAllowed', 'Login with email (a username or an email no other user has)'],
  ['duplicateEmailsAllowed', 'Duplicate emails (turns login with email off)'],
  ['rememberMe', 'Remember me (a sign-in cookie that outlives the browser)'],
] as const;
export const REMEMBER_ME_LIFETIMES = [
  ['ssoIdleRememberMe', 'Remembered session idle timeout (seconds; 0: none)'],
  ['ssoMaxRememberMe', 'Remembered session lifetime (seconds; 0: the SSO session lifetime)'],
] as const;

function loginOptionsSection(csrf: string, realm: Realm, canManage: boolean, form: Record<string, string>): SafeHtml {
  if (!canManage) {
    return html`<h2>Login</h2><dl class="facts">${LOGIN_OPTIONS.map(([key, label]) => html`<dt>${label}</dt><dd>${realm[key] ? 'on' : 'off'}</dd>`)}${REMEMBER_ME_LIFETIMES.map(([key, label]) => html`<dt>${label}</dt><dd>${realm[key]} s</dd>`)}</dl>`;
  }
  const checked = (key: string, on: boolean): boolean => (form.loginOptions !== undefined ? form[key] === 'on' : on);
  return html`<h2>Login</h2>
<form method="post" action="${realmBase(realm.id)}/login-options" class="console-form">${csrfField(csrf)}<input type="hidden" name="loginOptions" value="1">
${LOGIN_OPTIONS.map(([key, label]) => html`<label class="choice" for="${key}"><input type="checkbox" id="${key}" name="${key}" value="on"${checked(key, realm[key]) ? html` checked` : ''}> ${label}</label>`)}
${REMEMBER_ME_LIFETIMES.map(([key, label]) => html`<label for="${key}">${label}</label><input type="text" inputmode="numeric" pattern="[0-9]*" id="${key}" name="${key}" required value="${form[key] ?? String(realm[key])}">`)}
<button type="submit">Save login options</button></form>`;
}

/**
 * Keycloak's internationalization settings (its realm settings' Localization tab): the switch, the
 * supported locales as a comma-separated list, the default locale. The texts have no editor here (the
 * admin API's localization/ resource and `realmgate realm localization`).
 */
function languagesSection(csrf: string, realm: Realm, canManage: boolean, form: Record<string, string>): SafeHtml {
  const list = realm.supportedLocales.join(', ');
  if (!canManage) {
    return html`<h2>Languages</h2><dl class="facts"><dt>Internationalization</dt><dd>${realm.internationalizationEnabled ? 'on' : 'off'}</dd><dt>Supported locales</dt><dd>${list || 'none'}</dd><dt>Default locale</dt><dd>${realm.defaultLocale ?? 'none (English)'}</dd></dl>`;
  }
  const on = form.languages !== undefined ? form.internationalizationEnabled === 'on' : realm.internationalizationEnabled;
  return html`<h2>Languages</h2>
<form method="post" action="${realmBase(realm.id)}/languages" class="console-form">${csrfField(csrf)}<input type="hidden" name="languages" value="1">
<label class="choice" for="internationalizationEnabled"><input type="checkbox" id="internationalizationEnabled" name="internationalizationEnabled" value="on"${on ? html` checked` : ''}> Internationalization: pages in the user's language among the supported locales</label>
<label for="supportedLocales">Supported locales (comma-separated language tags, e.g. de, fr, en)</label>
<input type="text" id="supportedLocales" name="supportedLocales" autocomplete="off" spellcheck="false" maxlength="4000" value="${form.supportedLocales ?? list}">
<label for="defaultLocale">Default locale (when none of the user's is supported; empty: English)</label>
<input type="text" id="defaultLocale" name="defaultLocale" autocomplete="off" spellcheck="false" maxlength="35" value="${form.defaultLocale ?? realm.defaultLocale ?? ''}">
<button type="submit">Save language settings</button></form>`;
}

/** Keycloak's registrationAllowed, registrationEmailAsUsername, editUsernameAllowed and verifyEmail (docs/registration.md). */
const REGISTRATION_SWITCHES = [
  ['registrationAllowed', 'User registration: the login page offers "Register"'],
  ['registrationEmailAsUsername', 'Email as username: the registration form asks no username'],
  ['editUsernameAllowed', 'Edit username: users may change their username on the account page'],
  ['verifyEmail', 'Verify email: users follow a mailed link before signing in (needs the SMTP settings)'],
] as const;

function registrationSection(csrf: string, realm: Realm, canManage: boolean): SafeHtml {
  return html`<h2>Registration and email verification</h2>
${canManage
  ? html`<form method="post" action="${realmBase(realm.id)}/registration" class="console-form">${csrfField(csrf)}
${REGISTRATION_SWITCHES.map(([key, label]) => html`<label class="choice" for="${key}"><input type="checkbox" id="${key}" name="${key}" value="on"${realm[key] ? html` checked` : ''}> ${label}</label>`)}
<button type="submit">Save registration settings</button></form>`
  : html`<dl class="facts">${REGISTRATION_SWITCHES.map(([key, label]) => html`<dt>${label.split(':')[0]}</dt><dd>${realm[key] ? 'on' : 'off'}</dd>`)}</dl>`}`;
}

/** A role as the console lists it: how many users hold it, whether it is one of Realmgate's admin roles, whether it contains others. */
export interface RoleRow extends Role {
  users: number;
  admin: boolean;
  composite?: boolean;
}

/** A role's page: `base` is the roles' address of its realm (…/roles) or client (…/clients/<id>/roles). */
export function roleUrl(base: string, name: string): string {
  return `${base}/role?name=${encodeURIComponent(name)}`;
}

/** The roles of the realm or of a client: name (linking to the role's page), description, how many users hold it. */
function roleTable(base: string, roles: RoleRow[]): SafeHtml {
  const rows = roles.map((r) =>
    row(['Role', 'Description', 'Users'], [html`<a href="${roleUrl(base, r.name)}">${r.name}</a>${r.admin ? html` <span class="muted">(admin role)</span>` : ''}${r.composite ? html` <span class="muted">(composite)</span>` : ''}`, r.description ?? '', String(r.users)]),
  );
  return roles.length === 0
    ? html`<p class="muted">No roles yet.</p>`
    : html`<div class="table-wrap"><table><caption class="visually-hidden">Roles</caption><thead><tr><th scope="col">Role</th><th scope="col">Description</th><th scope="col">Users</th></tr></thead><tbody>${rows}</tbody></table></div>`;
}

/** The form creating a role of the realm or of a client (POST to the roles' address). */
function roleCreateForm(csrf: string, base: string, form: Record<string, string>, title = 'Create a role'): SafeHtml {
  return html`<h2>${title}</h2>
<form method="post" action="${base}" class="console-form">${csrfField(csrf)}
<label for="roleName">Role name</label><input type="text" id="roleName" name="name" required autocomplete="off" value="${form.name ?? ''}">
<label for="roleDescription">Description (optional)</label><input type="text" id="roleDescription" name="description" autocomplete="off" value="${form.description ?? ''}">
<button type="submit">Create role</button></form>`;
}

export function rolesPage(frame: ConsoleFrame & { realmId: string }, roles: RoleRow[], canManage: boolean, form: Record<string, string> = {}): string {
  const base = `${realmBase(frame.realmId)}/roles`;
  return consolePage(
    frame,
    html`<p class="muted">Access tokens carry the realm roles of their user in <code>realm_access.roles</code>. Grant a role on the user's page.</p>
${roleTable(base, roles)}${canManage ? roleCreateForm(frame.csrf, base, form) : ''}`,
  );
}

/** What a role contains directly, and the roles that may be added to it (the admin may change it). */
export interface RoleContents {
  contained: Role[];
  available: Role[];
}

/** A role as a composite names it: a realm role by its name, a client role as client/name. */
function containedName(r: Role): string {
  return r.clientId ? `${r.clientId}/${r.name}` : r.name;
}

/**
 * The roles a role contains directly (composite roles), each linking to its page, with a Remove button,
 * and a select of the realm's and its clients' other roles to add (the admin may change the role).
 */
function roleContainsSection(csrf: string, realmId: string, base: string, role: Role, contents: RoleContents, canManage: boolean): SafeHtml {
  const pageOf = (r: Role): string => roleUrl(r.clientId ? `${realmBase(realmId)}/clients/${encodeURIComponent(r.clientId)}/roles` : `${realmBase(realmId)}/roles`, r.name);
  const items = contents.contained.map(
    (r) =>
      html`<li class="row"><span><a href="${pageOf(r)}">${containedName(r)}</a> <span class="muted">${r.clientId ? `client role of ${r.clientId}` : 'realm role'}</span></span>${canManage ? actionForm(`${base}/composites/remove`, csrf, 'Remove', { secondary: true, fields: { role: role.name, contained: r.id } }) : ''}</li>`,
  );
  return html`<h2>Contains</h2>
<p class="muted">Whoever holds this role also holds the roles it contains (and what they contain), in their tokens.</p>
${contents.contained.length === 0 ? html`<p class="muted">No roles: it is not a composite role.</p>` : html`<ul class="cards">${items}</ul>`}
${canManage && contents.available.length > 0
  ? html`<form method="post" action="${base}/composites" class="console-form">${csrfField(csrf)}<input type="hidden" name="role" value="${role.name}">
<label for="containRole">Add a role it contains</label><select id="containRole" name="contained" required>${roleOptions(contents.available)}</select>
<p class="muted">Its holders' next access tokens carry it too.</p><button type="submit">Add contained role</button></form>`
  : ''}`;
}

/**
 * A role's page: what it is, who holds it (view-users), what it contains (composite roles), and, when
 * the admin may change it and it is not one of Realmgate's admin roles, the forms renaming it and
 * deleting it (its name typed again).
 */
export function rolePage(
  frame: ConsoleFrame & { realmId: string },
  role: RoleRow,
  base: string,
  users: User[] | undefined,
  canManage: boolean,
  form: Record<string, string> = {},
  contents: RoleContents = { contained: [], available: [] },
): string {
  const client = role.clientId ? html`<a href="${realmBase(frame.realmId)}/clients/${encodeURIComponent(role.clientId)}">${role.clientId}</a>` : '';
  const userItems = (users ?? []).map((u) => html`<li><a href="${realmBase(frame.realmId)}/users/${encodeURIComponent(u.id)}">${u.username}</a>${u.email ? html` <span class="muted">${u.email}</span>` : ''}</li>`);
  const manage: SafeHtml | '' = role.admin
    ? html`<p class="muted">One of Realmgate's admin roles: it cannot be renamed or deleted. Grant it on a user's page.</p>`
    : canManage
      ? html`<h2>Edit</h2>
<form method="post" action="${base}/update" class="console-form">${csrfField(frame.csrf)}<input type="hidden" name="role" value="${role.name}">
<label for="roleName">Role name</label><input type="text" id="roleName" name="name" required autocomplete="off" value="${form.name ?? role.name}">
<label for="roleDescription">Description</label><input type="text" id="roleDescription" name="description" autocomplete="off" value="${form.description ?? role.description ?? ''}">
<p class="muted">Tokens issued from now on carry the new name; tokens already issued keep the old one until they expire.</p>
<button type="submit">Save role</button></form>
<h2>Delete</h2>
<form method="post" action="${base}/delete" class="console-form">${csrfField(frame.csrf)}<input type="hidden" name="role" value="${role.name}">
<label for="confirm">Type the role name to delete the role</label><input type="text" id="confirm" name="confirm" required autocomplete="off">
<p class="muted">${role.users === 1 ? '1 user holds it' : `${role.users} users hold it`}: their next tokens no longer carry it. This cannot be undone.</p>
<button type="submit" class="danger">Delete role</button></form>`
      : '';
  return consolePage(
    frame,
    html`<dl class="facts">
<dt>Name</dt><dd>${role.name}</dd>
<dt>Description</dt><dd>${role.description ?? ''}</dd>
<dt>Kind</dt><dd>${role.clientId ? html`client role of ${client} (<code>resource_access.${role.clientId}.roles</code>)` : html`realm role (<code>realm_access.roles</code>)`}${role.admin ? ", Realmgate's admin role" : ''}</dd>
<dt>Users</dt><dd>${role.users}</dd>
</dl>
<h2>Users with this role</h2>
${users === undefined
  ? html`<p class="muted">Seeing them needs the view-users role.</p>`
  : users.length === 0
    ? html`<p class="muted">Nobody holds it.</p>`
    : html`<ul class="cards">${userItems}</ul>${users.length < role.users ? html`<p class="muted">The first ${users.length} of ${role.users}, by username.</p>` : ''}`}
${roleContainsSection(frame.csrf, frame.realmId, base, role, contents, canManage)}
${manage}`,
  );
}

export function clientsPage(frame: ConsoleFrame & { realmId: string }, clients: Client[], canManage: boolean, form: Record<string, string> = {}): string {
  const base = realmBase(frame.realmId);
  const rows = clients.map(
    (c) => row(['Client ID', 'Name', 'Type', 'State'], [html`<a href="${base}/clients/${encodeURIComponent(c.clientId)}">${c.clientId}</a>`, c.name ?? '', c.public ? 'public' : 'confidential', c.enabled ? 'enabled' : 'disabled']),
  );
  const create = canManage
    ? html`<h2>Create a client</h2>
<form method="post" action="${base}/clients" class="console-form">
${csrfField(frame.csrf)}
<label for="clientId">Client ID</label><input type="text" id="clientId" name="clientId" required value="${form.clientId ?? ''}">
<label for="name">Name</label><input type="text" id="name" name="name" value="${form.name ?? ''}">
<label for="redirectUri">Redirect URI</label><input type="text" id="redirectUri" name="redirectUri" required inputmode="url" value="${form.redirectUri ?? ''}">
<fieldset><legend>Client type</legend>
<label class="choice"><input type="radio" name="type" value="confidential"${form.type !== 'public' ? html` checked` : ''}> Confidential (has a secret)</label>
<label class="choice"><input type="radio" name="type" value="public"${form.type === 'public' ? html` checked` : ''}> Public (browser or native app, PKCE)</label>
</fieldset>
<button type="submit">Create client</button>
</form>`
    : '';
  return consolePage(
    frame,
    html`<div class="table-wrap"><table><caption class="visually-hidden">Clients</caption><thead><tr><th scope="col">Client ID</th><th scope="col">Name</th><th scope="col">Type</th><th scope="col">State</th></tr></thead><tbody>${rows}</tbody></table></div>
<p>Client registration: <a href="${base}/clients-initial-access">Initial access tokens</a> <span class="muted">(let their bearer register clients, RFC 7591)</span></p>${create}`,
  );
}

/** A client's roles on its page: `adminOnly` for realm-management, which holds only Realmgate's admin roles. */
export interface ClientRoles {
  rows: RoleRow[];
  adminOnly: boolean;
  /** What was typed into the create form, when it was refused. */
  form?: Record<string, string>;
}

export function clientPage(frame: ConsoleFrame & { realmId: string }, client: Client, canManage: boolean, roles: ClientRoles, secret?: string, inScope: readonly string[] = [], previousSecretUntil: number | null = null): string {
  const base = `${realmBase(frame.realmId)}/clients/${encodeURIComponent(client.clientId)}`;
  /** A list of the client's, each item removable, with a form to add one (manage-clients only). */
  const list = (path: string, items: readonly string[], name: string, label: string, button: string, help: string): SafeHtml => {
    const action = `${base}/${path}`;
    const lis = items.map((v) => html`<li class="row"><code>${v}</code>${canManage ? actionForm(`${action}/remove`, frame.csrf, 'Remove', { secondary: true, fields: { [name]: v } }) : ''}</li>`);
    return html`<ul class="cards">${lis}</ul>${items.length === 0 ? html`<p class="muted">None.</p>` : ''}
${canManage
  ? html`<form method="post" action="${action}" class="console-form">${csrfField(frame.csrf)}<label for="${name}">${label}</label><input type="text" id="${name}" name="${name}" required inputmode="url"><p class="muted">${help}</p><button type="submit">${button}</button></form>`
  : ''}`;
  };
  const manage: SafeHtml | '' = canManage
    ? html`<h2>Client</h2>
<div class="row">${client.enabled ? actionForm(`${base}/disable`, frame.csrf, 'Disable client', { secondary: true }) : actionForm(`${base}/enable`, frame.csrf, 'Enable client')}
${client.clientId === 'realm-management' ? '' : actionForm(`${base}/not-before`, frame.csrf, 'Refuse its tokens issued until now', { secondary: true })}</div>
<p class="muted">Refusing its tokens revokes every access token, refresh token and code issued to this client until now (Keycloak's client not-before); the client and its users can get new ones at once.</p>
<h2>Delete</h2>
<form method="post" action="${base}/delete" class="console-form">${csrfField(frame.csrf)}
<label for="confirm">Type the client ID to delete the client</label><input type="text" id="confirm" name="confirm" required autocomplete="off">
<p class="muted">Its refresh tokens are revoked and its service account disabled. This cannot be undone.</p>
<button type="submit" class="danger">Delete client</button></form>`
    : '';
  return consolePage(
    frame,
    html`<dl class="facts">
<dt>Client ID</dt><dd>${client.clientId}</dd>
<dt>Name</dt><dd>${client.name ?? ''}</dd>
<dt>Type</dt><dd>${client.public ? 'public' : 'confidential'}</dd>
<dt>State</dt><dd>${client.enabled ? 'enabled' : 'disabled'}</dd>
${client.notBefore > 0 ? html`<dt>Tokens refused</dt><dd>issued before ${when(client.notBefore)}</dd>` : ''}
</dl>
${secret ? html`<div class="notice" role="status"><p>The client's secret, shown only now: copy it.</p><p><code class="secret">${secret}</code></p></div>` : ''}
<h2>Valid redirect URIs</h2>
${list('redirect-uris', client.redirectUris, 'uri', 'Add a redirect URI', 'Add redirect URI', 'An absolute URI the authorization endpoint may send codes to, matched exactly.')}
<h2>Web origins</h2>
${list('web-origins', client.webOrigins, 'origin', 'Add a web origin', 'Add web origin', 'An origin such as https://app.example.com allowed to call the token endpoints from a browser (CORS), or + for the origins of the redirect URIs.')}
${client.public ? '' : html`<h2>Credentials</h2>
${credentialsSection(`${base}/credentials`, frame.csrf, client, canManage)}
${client.authMethods.includes('private_key_jwt') || client.clientId === 'realm-management' ? '' : secretSection(`${base}/secret`, frame.csrf, canManage, previousSecretUntil)}`}
<h2>Back-channel logout</h2>
${backchannelSection(`${base}/backchannel-logout`, frame.csrf, client, canManage)}
<h2>Pushed authorization requests</h2>
${parSection(`${base}/pushed-requests`, frame.csrf, client, canManage)}
<h2>Request objects</h2>
${requestObjectSection(`${base}/request-objects`, frame.csrf, client, canManage)}
<h2>Token exchange</h2>
${tokenExchangeSection(`${base}/token-exchange`, frame.csrf, client, canManage)}
<h2>DPoP-bound tokens</h2>
${dpopSection(`${base}/dpop`, frame.csrf, client, canManage)}
<h2>Front-channel logout</h2>
${frontchannelSection(`${base}/frontchannel-logout`, frame.csrf, client, canManage)}
<h2>Full scope</h2>
${fullScopeSection(`${base}/full-scope`, frame.csrf, client, canManage, inScope)}
<h2>Client roles</h2>
<p class="muted">${roles.adminOnly
  ? "Realmgate's admin roles of this realm: the client takes no new roles, and none of them is renamed or deleted. Grant them on a user's page."
  : html`Access tokens carry the client roles of their user in <code>resource_access.${client.clientId}.roles</code>. Grant a role on the user's page.`}</p>
${roleTable(`${base}/roles`, roles.rows)}${canManage && !roles.adminOnly ? roleCreateForm(frame.csrf, `${base}/roles`, roles.form ?? {}, 'Create a client role') : ''}
${manage}`,
  );
}

/**
 * How a confidential client authenticates (Keycloak's Credentials tab): its secret (client-secret), or a JWT
 * signed with its key (client-jwt, private_key_jwt), with where its public keys are.
 */
function credentialsSection(action: string, csrf: string, client: Client, canManage: boolean): SafeHtml {
  const jwt = client.authMethods.includes('private_key_jwt');
  const k = client.jwtKeys;
  const alg = k?.signingAlg ?? '';
  const help = html`<p class="muted">A signed JWT (private_key_jwt, RFC 7523): the client proves itself with a short-lived JWT signed by its private key; Realmgate checks it against the public keys below (the JWKS URL when "Use JWKS URL" is on, else the JWKS given here, else the certificate). HMAC-signed JWTs (client_secret_jwt) are not offered: secrets are stored only as hashes.</p>`;
  if (!canManage) {
    return html`<dl class="facts"><dt>Client authenticator</dt><dd>${jwt ? 'Signed JWT (private_key_jwt)' : `Client ID and secret (${client.authMethods.join(', ')})`}</dd>${jwt ? html`<dt>JWKS URL</dt><dd>${k?.jwksUrl ?? 'none'}${k?.useJwksUrl ? ' (used)' : ''}</dd><dt>Signature algorithm</dt><dd>${alg || 'any asymmetric'}</dd>` : ''}</dl>${help}`;
  }
  const check = (on: boolean | undefined): string => (on ? 'checked' : '');
  const algs = ['', 'RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA'].map((a) => html`<option value="${a}"${a === alg ? html` selected` : ''}>${a || 'Any asymmetric algorithm'}</option>`);
  return html`<form method="post" action="${action}" class="console-form">${csrfField(csrf)}
<label for="authenticator">Client authenticator</label><select id="authenticator" name="authenticator">
<option value="client-secret"${jwt ? '' : html` selected`}>Client ID and secret</option>
<option value="client-jwt"${jwt ? html` selected` : ''}>Signed JWT (private_key_jwt)</option></select>
<label class="choice" for="use-jwks-url"><input type="checkbox" id="use-jwks-url" name="useJwksUrl" value="on" ${check(k?.useJwksUrl)}> Use JWKS URL</label>
<label for="jwks-url">JWKS URL</label><input type="text" id="jwks-url" name="jwksUrl" inputmode="url" value="${k?.jwksUrl ?? ''}">
<label class="choice" for="use-jwks-string"><input type="checkbox" id="use-jwks-string" name="useJwksString" value="on" ${check(k?.useJwksString)}> Use the JWKS below</label>
<label for="jwks-string">JWKS (public keys, JSON)</label><textarea id="jwks-string" name="jwksString" rows="4" spellcheck="false" autocomplete="off">${k?.jwksString ?? ''}</textarea>
<label for="jwt-certificate">Certificate (base64 DER or PEM)</label><textarea id="jwt-certificate" name="certificate" rows="3" spellcheck="false" autocomplete="off">${k?.certificate ?? ''}</textarea>
<label for="signing-alg">Signature algorithm</label><select id="signing-alg" name="signingAlg">${algs}</select>
${help}
<button type="submit">Save credentials</button></form>`;
}

/**
 * The client secret: a new one generated (shown once), the old one refused at once or kept valid for a while
 * beside it (Keycloak's rotated secret), so that the application's instances move to the new one without
 * a failed request; a previous secret still valid, and the button that refuses it from now on.
 */
function secretSection(action: string, csrf: string, canManage: boolean, previousUntil: number | null): SafeHtml {
  const previous = previousUntil === null
    ? html`<p class="muted">No previous secret is valid: only the current one is accepted.</p>`
    : html`<dl class="facts"><dt>Previous secret</dt><dd>still accepted until ${when(previousUntil)}</dd></dl>${canManage ? actionForm(`${action}/previous/invalidate`, csrf, 'Refuse the previous secret now', { secondary: true }) : ''}`;
  if (!canManage) return html`<h3>Client secret</h3>${previous}`;
  const keep = [['0', 'No: refuse it at once (a leaked secret)'], ['3600', 'For 1 hour'], ['86400', 'For 1 day'], ['604800', 'For 7 days'], ['2592000', 'For 30 days']].map(([v, label]) => html`<option value="${v}">${label}</option>`);
  return html`<h3>Client secret</h3>${previous}
<form method="post" action="${action}" class="console-form">${csrfField(csrf)}
<label for="keep-previous">Keep the old secret valid beside the new one</label><select id="keep-previous" name="keepPrevious">${keep}</select>
<p class="muted">The new secret is shown once. While the old one is kept, both are accepted: move each instance of the application to the new secret, then refuse the old one here (or let it expire).</p>
<button type="submit" class="secondary">Generate a new secret</button></form>`;
}

/** OpenID Connect Back-Channel Logout: where logout tokens go, with sid or not, offline tokens revoked or not. */
function backchannelSection(action: string, csrf: string, client: Client, canManage: boolean): SafeHtml {
  const b = client.backchannelLogout;
  const help = html`<p class="muted">When a session the client was used in ends (logout, an administrator, a disabled or deleted user), Realmgate POSTs a signed logout token to this URL (OpenID Connect Back-Channel Logout). Leave it empty for none.</p>`;
  if (!canManage) {
    return html`<dl class="facts"><dt>URL</dt><dd>${b.url ?? 'none'}</dd><dt>Session ID (sid)</dt><dd>${b.sessionRequired ? 'sent' : 'not sent'}</dd><dt>Offline tokens</dt><dd>${b.revokeOfflineTokens ? 'revoked at logout' : 'kept'}</dd></dl>${help}`;
  }
  const check = (on: boolean): string => (on ? 'checked' : '');
  return html`<form method="post" action="${action}" class="console-form">${csrfField(csrf)}
<label for="backchannel-url">Back-channel logout URL</label><input type="text" id="backchannel-url" name="url" inputmode="url" value="${b.url ?? ''}">
${help}
<label class="choice" for="backchannel-sid"><input type="checkbox" id="backchannel-sid" name="sessionRequired" value="on" ${check(b.sessionRequired)}> Send the session ID (sid) in the logout token</label>
<label class="choice" for="backchannel-offline"><input type="checkbox" id="backchannel-offline" name="revokeOfflineTokens" value="on" ${check(b.revokeOfflineTokens)}> Revoke the user's offline tokens of this client at logout</label>
<button type="submit">Save back-channel logout</button></form>`;
}

/** A client setting that is one switch (one of Keycloak's "true"/"false" attributes): a checkbox, or the fact for a viewer. */
function switchSection(o: { action: string; csrf: string; canManage: boolean; on: boolean; id: string; label: string; fact: string; help: SafeHtml; button: string; states?: { on: string; off: string } }): SafeHtml {
  if (!o.canManage) return html`<dl class="facts"><dt>${o.fact}</dt><dd>${o.on ? (o.states?.on ?? 'required') : (o.states?.off ?? 'optional')}</dd></dl>${o.help}`;
  return html`<form method="post" action="${o.action}" class="console-form">${csrfField(o.csrf)}
<label class="choice" for="${o.id}"><input type="checkbox" id="${o.id}" name="required" value="on" ${o.on ? 'checked' : ''}> ${o.label}</label>
${o.help}
<button type="submit">${o.button}</button></form>`;
}

/** RFC 9126 (Keycloak's require.pushed.authorization.requests): only pushed authorization requests, or any. */
function parSection(action: string, csrf: string, client: Client, canManage: boolean): SafeHtml {
  const help = html`<p class="muted">Required: the application must first send its sign-in request to the pushed authorization request endpoint (RFC 9126), with its credentials, and send users to the sign-in page with the request_uri it got back; a sign-in request with its parameters in the address is refused. Any client may push its requests when this is off.</p>`;
  return switchSection({ action, csrf, canManage, on: client.requirePushedAuthorizationRequests, id: 'require-par', label: 'Require pushed authorization requests', fact: 'Pushed requests', help, button: 'Save pushed requests' });
}

/** RFC 9449 (Keycloak's dpop.bound.access.tokens): every token request with a DPoP proof, or any. */
function dpopSection(action: string, csrf: string, client: Client, canManage: boolean): SafeHtml {
  const help = html`<p class="muted">Required: every token request of the application must carry a DPoP proof (RFC 9449), so its access tokens are bound to the application's key and useless to whoever steals them; a request without one is refused. Any client may send proofs when this is off.</p>`;
  return switchSection({ action, csrf, canManage, on: client.dpopBoundAccessTokens, id: 'dpop-bound', label: 'Require DPoP-bound tokens', fact: 'DPoP', help, button: 'Save DPoP' });
}

/**
 * Keycloak's fullScopeAllowed: access tokens carry every role of their user, or only those in the
 * client's scope; the roles in its scope (its scope mappings) are listed, read only.
 */
function fullScopeSection(action: string, csrf: string, client: Client, canManage: boolean, inScope: readonly string[]): SafeHtml {
  const roles = inScope.length > 0 ? html`<p class="muted">Roles in its scope: ${inScope.map((r, i) => html`${i > 0 ? ', ' : ''}<code>${r}</code>`)}.</p>` : html`<p class="muted">No role is mapped to its scope.</p>`;
  const help = html`<p class="muted">On (the default): the access tokens of this application carry every role of their user. Off: only the roles in its scope, which are its own client roles and the roles mapped to its scope or to the scope of one of the token's client scopes (realmgate client scope-mappings, or the admin API's scope-mappings).</p>${roles}`;
  return switchSection({ action, csrf, canManage, on: client.fullScopeAllowed, id: 'full-scope', label: 'Full scope allowed', fact: 'Full scope', help, button: 'Save full scope', states: { on: 'on: every role of the user', off: 'off: only the roles in its scope' } });
}

/** RFC 9101 (Keycloak's request.object.required and request.object.signature.alg). */
function requestObjectSection(action: string, csrf: string, client: Client, canManage: boolean): SafeHtml {
  const required = client.requestObjectRequired;
  const alg = client.requestObjectSignatureAlg ?? 'any';
  const help = html`<p class="muted">A request object is the sign-in request signed by the application (JWT-secured authorization request, RFC 9101), verified with the keys of its credentials (JWKS URL, JWKS or certificate); only the parameters inside it count. Required: a sign-in request without one (or, for request_uri, not pushed first) is sent back to the application with an error.</p>`;
  if (!canManage) return html`<dl class="facts"><dt>Request objects</dt><dd>${required}</dd><dt>Request object signature algorithm</dt><dd>${alg}</dd></dl>${help}`;
  const requiredOptions = REQUEST_OBJECT_REQUIRED.map((v) => html`<option value="${v}"${v === required ? html` selected` : ''}>${v}</option>`);
  const algOptions = ['any', ...ASSERTION_ALGS, ...(alg === 'none' ? ['none'] : [])].map((a) => html`<option value="${a}"${a === alg ? html` selected` : ''}>${a === 'any' ? 'Any asymmetric algorithm' : a}</option>`);
  return html`<form method="post" action="${action}" class="console-form">${csrfField(csrf)}
<label for="request-object-required">Request objects required</label><select id="request-object-required" name="required">${requiredOptions}</select>
<label for="request-object-alg">Request object signature algorithm</label><select id="request-object-alg" name="alg">${algOptions}</select>
${help}
<button type="submit">Save request objects</button></form>`;
}

/** RFC 8693 (Keycloak's standard.token.exchange.enabled and enableRefreshRequestedTokenType). */
function tokenExchangeSection(action: string, csrf: string, client: Client, canManage: boolean): SafeHtml {
  const on = client.standardTokenExchange;
  const refresh = client.tokenExchangeRefresh === 'SAME_SESSION';
  const help = html`<p class="muted">On: this confidential client may exchange an access token issued to a user for it (one naming it in its audience) for a new one naming other clients of the realm as audience, with the same or fewer scopes (OAuth 2.0 Token Exchange, RFC 8693). A public client is always refused. A refresh token can be asked for only when allowed below; it ends with the user's session.</p>`;
  if (!canManage) return html`<dl class="facts"><dt>Token exchange</dt><dd>${on ? 'on' : 'off'}</dd><dt>Refresh tokens</dt><dd>${refresh ? 'same session' : 'no'}</dd></dl>${help}`;
  return html`<form method="post" action="${action}" class="console-form">${csrfField(csrf)}
<label class="choice" for="token-exchange"><input type="checkbox" id="token-exchange" name="enabled" value="on" ${on ? 'checked' : ''}> Standard token exchange</label>
<label class="choice" for="token-exchange-refresh"><input type="checkbox" id="token-exchange-refresh" name="refresh" value="on" ${refresh ? 'checked' : ''}> Allow a refresh token (of the same session) to be requested</label>
${help}
<button type="submit">Save token exchange</button></form>`;
}

/** OpenID Connect Front-Channel Logout: the URL a browser frames when it ends a session, with iss and sid or not. */
function frontchannelSection(action: string, csrf: string, client: Client, canManage: boolean): SafeHtml {
  const f = client.frontchannelLogout;
  const help = html`<p class="muted">When a browser signs out (the application's logout or the account page), Realmgate's logout page loads this URL in an invisible frame (OpenID Connect Front-Channel Logout). An administrator's logout has no browser: only back-channel logout reaches the client then.</p>`;
  if (!canManage) {
    return html`<dl class="facts"><dt>Front-channel logout</dt><dd>${f.enabled ? 'on' : 'off'}</dd><dt>URL</dt><dd>${f.url ?? 'none'}</dd><dt>Issuer and session ID</dt><dd>${f.sessionRequired ? 'sent' : 'not sent'}</dd></dl>${help}`;
  }
  const check = (on: boolean): string => (on ? 'checked' : '');
  return html`<form method="post" action="${action}" class="console-form">${csrfField(csrf)}
<label class="choice" for="frontchannel-on"><input type="checkbox" id="frontchannel-on" name="enabled" value="on" ${check(f.enabled)}> Front-channel logout</label>
<label for="frontchannel-url">Front-channel logout URL</label><input type="text" id="frontchannel-url" name="url" inputmode="url" value="${f.url ?? ''}">
${help}
<label class="choice" for="frontchannel-sid"><input type="checkbox" id="frontchannel-sid" name="sessionRequired" value="on" ${check(f.sessionRequired)}> Add the issuer (iss) and session ID (sid) to the URL</label>
<button type="submit">Save front-channel logout</button></form>`;
}

export function usersPage(frame: ConsoleFrame & { realmId: string }, users: User[], canManage: boolean, search: string, form: Record<string, string> = {}): string {
  const base = realmBase(frame.realmId);
  const rows = users.map(
    (u) => row(['Username', 'Email', 'State'], [html`<a href="${base}/users/${encodeURIComponent(u.id)}">${u.username}</a>`, u.email ?? '', u.enabled ? 'enabled' : 'disabled']),
  );
  const create = canManage
    ? html`<h2>Create a user</h2>
<form method="post" action="${base}/users" class="console-form">
${csrfField(frame.csrf)}
<label for="username">Username</label><input type="text" id="username" name="username" required autocomplete="off" value="${form.username ?? ''}">
<label for="email">Email (optional)</label><input type="text" id="email" name="email" inputmode="email" autocomplete="off" value="${form.email ?? ''}">
<label for="password">Initial password</label><input type="password" id="password" name="password" required autocomplete="new-password" minlength="8">
<label class="choice" for="temporary"><input type="checkbox" id="temporary" name="temporary" value="on" checked> Temporary: the user chooses a new one at the next sign-in</label>
<button type="submit">Create user</button>
</form>`
    : '';
  return consolePage(
    frame,
    html`<form method="get" action="${base}/users" class="console-search" role="search"><label for="search">Search users</label><div class="row"><input type="text" id="search" name="search" value="${search}"><button type="submit" class="secondary">Search</button></div></form>
<div class="table-wrap"><table><caption class="visually-hidden">Users</caption><thead><tr><th scope="col">Username</th><th scope="col">Email</th><th scope="col">State</th></tr></thead><tbody>${rows}</tbody></table></div>
${users.length === 0 ? html`<p class="muted">No users found.</p>` : ''}${create}`,
  );
}

/** The roles a user holds (realm roles first, then by client), and the realm's roles they do not hold yet. */
export interface UserRoleChoices {
  granted: Role[];
  available: Role[];
}

/** The groups a user belongs to (by path), and the realm's other groups, to join. */
export interface UserGroupChoices {
  joined: Array<{ group: Group; path: string }>;
  /** The roles held through those groups and the groups above them. */
  roles: Role[];
  available: Array<{ group: Group; path: string }>;
}

/**
 * A user's attributes (names and their values), each name with a Remove button, and a form that sets one
 * name's values, one per line (manage-users). Names and values are shown with their invisible and
 * reordering characters made visible (a value may span lines: its line breaks are its text).
 */
function userAttributes(csrf: string, base: string, attributes: User['attributes'], canManage: boolean): SafeHtml {
  const names = Object.keys(attributes).sort();
  const items = names.map(
    (name) =>
      html`<li class="row"><span><strong>${visible(name)}</strong> <span class="attribute-values">${attributes[name]!.map((v, i) => html`${i > 0 ? ', ' : ''}<code>${visible(v, { multiline: true })}</code>`)}</span></span>${canManage ? actionForm(`${base}/attributes/remove`, csrf, 'Remove', { secondary: true, fields: { name } }) : ''}</li>`,
  );
  return html`<h2>Attributes</h2>
${names.length === 0 ? html`<p class="muted">No attributes.</p>` : html`<ul class="cards">${items}</ul>`}
${canManage
  ? html`<form method="post" action="${base}/attributes" class="console-form">${csrfField(csrf)}
<label for="attributeName">Attribute name</label><input type="text" id="attributeName" name="name" required maxlength="255" autocomplete="off">
<label for="attributeValues">Values, one per line</label><textarea id="attributeValues" name="values" rows="3" required></textarea>
<p class="muted">Replaces the values of that name. A scope or a protocol mapper may put them in the user's next tokens (locale, picture, phoneNumber: the standard claims).</p>
<button type="submit">Set attribute</button></form>`
  : ''}`;
}

/** A user's roles, each with a Revoke button, and a select of the realm's and its clients' other roles to grant (manage-users). */
function userRoles(csrf: string, base: string, roles: UserRoleChoices, canManage: boolean): SafeHtml {
  const where = (r: Role): string => (r.clientId ? `client role of ${r.clientId}` : 'realm role');
  const items = roles.granted.map(
    (r) => html`<li class="row"><span>${r.name} <span class="muted">${where(r)}</span></span>${canManage ? actionForm(`${base}/roles/remove`, csrf, 'Revoke', { secondary: true, fields: { role: r.id } }) : ''}</li>`,
  );
  // One group per container: the realm's roles, then each client's, in the order listed (by client ID).
  const options = roleOptions(roles.available);
  return html`<h2>Roles</h2>
${roles.granted.length === 0 ? html`<p class="muted">No roles.</p>` : html`<ul class="cards">${items}</ul>`}
${canManage && roles.available.length > 0
  ? html`<form method="post" action="${base}/roles" class="console-form">${csrfField(csrf)}<label for="grantRole">Grant a role</label><select id="grantRole" name="role" required>${options}</select>
<p class="muted">The user's next access token carries it.</p><button type="submit">Grant role</button></form>`
  : ''}`;
}

export function userPage(
  frame: ConsoleFrame & { realmId: string },
  user: User,
  lock: BruteForceStatus,
  canManage: boolean,
  sessions: SessionSummary[],
  roles: UserRoleChoices,
  groups: UserGroupChoices,
  otp: OtpSummary[],
  /** The user's linked accounts; whether the admin may open the providers' pages; whether the user has no password (signs in through a provider). */
  linked: { links: FederatedIdentity[]; providerPages: boolean; noPassword: boolean },
  keys: WebAuthnSummary[] = [],
  /** Whether the admin may impersonate this user (src/admin/operations/impersonation.ts mayImpersonate). */
  canImpersonate = false,
): string {
  const base = `${realmBase(frame.realmId)}/users/${encodeURIComponent(user.id)}`;
  const impersonate: SafeHtml | '' = canImpersonate
    ? html`<h2>Impersonate</h2>
<p class="muted">Opens the realm's account page signed in as this user, in this browser: until that session ends, the realm's applications see this user here. The session is marked with your name (the user sees it on their account page) and recorded as an IMPERSONATE event.${frame.realmId === MASTER_REALM ? ' This is your own realm: you are signed out of the console first.' : ''}</p>
${actionForm(`${base}/impersonate`, frame.csrf, 'Impersonate', { secondary: true })}`
    : '';
  const otpSection = html`${userOtpSection({ csrf: frame.csrf, base, otp, setupRequired: user.requiredActions.includes('CONFIGURE_TOTP'), canManage, when })}${userWebAuthnSection({ csrf: frame.csrf, base, keys, setupRequired: user.requiredActions.includes('webauthn-register'), canManage, when })}`;
  const noPassword = linked.noPassword;
  const linkedSection = linkedAccountsSection({ csrf: frame.csrf, realmId: frame.realmId, base, ...linked, canManage, when });
  const manage: SafeHtml | '' = canManage
    ? html`<h2>Account</h2>
<div class="row">${user.enabled ? actionForm(`${base}/disable`, frame.csrf, 'Disable user', { secondary: true }) : actionForm(`${base}/enable`, frame.csrf, 'Enable user')}
${lock.numFailures > 0 || lock.disabled ? actionForm(`${base}/unlock`, frame.csrf, 'Unlock (clear failed logins)', { secondary: true }) : ''}</div>
<h2>Reset password</h2>
<form method="post" action="${base}/password" class="console-form">${csrfField(frame.csrf)}
<label for="password">New password</label><input type="password" id="password" name="password" required autocomplete="new-password" minlength="8">
<label class="choice" for="temporary"><input type="checkbox" id="temporary" name="temporary" value="on" checked> Temporary: the user chooses a new one at the next sign-in</label>
<p class="muted">The user's sessions and tokens end.</p>
<button type="submit">Reset password</button></form>`
    : '';
  const sessionItems = sessions.map(
    (x) => html`<li class="session"><span>Signed in ${when(x.authTime)}<span class="muted">${x.userAgent ? html`${deviceLine(x.userAgent)} · ` : ''}${x.ipAddress ? html`from ${x.ipAddress} · ` : ''}Last active ${when(x.lastAccess)}${x.clients.length ? html` · ${x.clients.join(', ')}` : ''}${x.impersonator !== undefined ? html` · opened by administrator ${x.impersonator} (impersonation)` : ''}</span></span>${canManage ? actionForm(`${base}/sessions/end`, frame.csrf, 'End session', { secondary: true, fields: { session: x.id } }) : ''}</li>`,
  );
  const sessionList = html`<h2>Sessions</h2>${sessions.length === 0
    ? html`<p class="muted">No active sessions.</p>`
    : html`<ul class="cards">${sessionItems}</ul>${canManage && sessions.length > 1 ? actionForm(`${base}/logout`, frame.csrf, 'End all sessions', { secondary: true }) : ''}`}`;
  return consolePage(
    frame,
    html`<dl class="facts">
<dt>Username</dt><dd>${user.username}</dd>
<dt>Email</dt><dd>${user.email ?? ''}</dd>
<dt>State</dt><dd>${user.enabled ? 'enabled' : 'disabled'}</dd>
<dt>Password</dt><dd>${noPassword ? 'none (the user signs in through an identity provider, or an administrator sets one)' : user.requiredActions.includes('UPDATE_PASSWORD') ? 'temporary: a new one is asked for at the next sign-in' : 'set by the user or an administrator'}</dd>
<dt>Failed logins</dt><dd>${lock.numFailures}${lock.disabled ? html` (locked for ${lock.lockedFor} s)` : ''}</dd>
<dt>Created</dt><dd>${when(user.createdAt)}</dd>
</dl>${sessionList}${userRequiredActionsSection({ csrf: frame.csrf, base, actions: user.requiredActions, canManage })}${otpSection}${linkedSection}${userAttributes(frame.csrf, base, user.attributes, canManage)}${userRoles(frame.csrf, base, roles, canManage)}${userGroupsSection(frame.csrf, frame.realmId, base, groups, canManage)}${manage}${impersonate}`,
  );
}

export function eventsPage(frame: ConsoleFrame & { realmId: string }, admin: AdminEvent[], login: StoredEvent[]): string {
  const adminRows = admin.map(
    (e) => row(['Time', 'Operation', 'Resource', 'Path', 'By', 'Via', 'From'], [whenMs(e.timeMs), e.operation, e.resourceType, html`<code>${e.resourcePath}</code>`, e.authUsername ?? e.authUserId ?? '', e.via, e.ip ?? '']),
  );
  const loginRows = login.map(
    (e) => row(['Time', 'Type', 'Outcome', 'User', 'Client', 'From'], [when(e.time), e.type, e.outcome, e.username ?? '', e.clientId ?? '', e.ip ?? '']),
  );
  return consolePage(
    frame,
    html`<h2>Admin events</h2>
${admin.length === 0 ? html`<p class="muted">No admin events yet.</p>` : html`<div class="table-wrap"><table><thead><tr><th scope="col">Time</th><th scope="col">Operation</th><th scope="col">Resource</th><th scope="col">Path</th><th scope="col">By</th><th scope="col">Via</th><th scope="col">From</th></tr></thead><tbody>${adminRows}</tbody></table></div>`}
<h2>Login events</h2>
${login.length === 0 ? html`<p class="muted">No login events yet.</p>` : html`<div class="table-wrap"><table><thead><tr><th scope="col">Time</th><th scope="col">Type</th><th scope="col">Outcome</th><th scope="col">User</th><th scope="col">Client</th><th scope="col">From</th></tr></thead><tbody>${loginRows}</tbody></table></div>`}`,
  );
}

export function organizationsPage(frame: ConsoleFrame & { realmId: string }, orgs: OrganizationDetails[], canManage: boolean, form: Record<string, string> = {}): string {
  const base = realmBase(frame.realmId);
  const rows = orgs.map((o) =>
    row(['Alias', 'Name', 'State'], [html`<a href="${base}/organizations/${encodeURIComponent(o.id)}">${o.alias}</a>`, o.name, o.enabled ? 'enabled' : 'disabled']),
  );
  const create = canManage
    ? html`<h2>Create an organization</h2>
<form method="post" action="${base}/organizations" class="console-form">${csrfField(frame.csrf)}
<label for="alias">Alias</label><input type="text" id="alias" name="alias" required value="${form.alias ?? ''}">
<label for="orgName">Name</label><input type="text" id="orgName" name="name" value="${form.name ?? ''}">
<button type="submit">Create organization</button></form>`
    : '';
  return consolePage(
    frame,
    html`${orgs.length === 0
      ? html`<p class="muted">No organizations yet.</p>`
      : html`<div class="table-wrap"><table><caption class="visually-hidden">Organizations</caption><thead><tr><th scope="col">Alias</th><th scope="col">Name</th><th scope="col">State</th></tr></thead><tbody>${rows}</tbody></table></div>`}${create}`,
  );
}

export function organizationPage(frame: ConsoleFrame & { realmId: string }, org: OrganizationDetails, members: User[] | undefined, canManageMembers: boolean, form: Record<string, string> = {}): string {
  const action = `${realmBase(frame.realmId)}/organizations/${encodeURIComponent(org.id)}/members`;
  const items = (members ?? []).map(
    (u) => html`<li class="row"><span>${u.username}${u.email ? html` <span class="muted">${u.email}</span>` : ''}</span>${canManageMembers ? actionForm(`${action}/remove`, frame.csrf, 'Remove', { secondary: true, fields: { user: u.id } }) : ''}</li>`,
  );
  return consolePage(
    frame,
    html`<dl class="facts">
<dt>Alias</dt><dd>${org.alias}</dd>
<dt>Name</dt><dd>${org.name}</dd>
<dt>State</dt><dd>${org.enabled ? 'enabled' : 'disabled'}</dd>
<dt>Domains</dt><dd>${org.domains.map((d) => d.name).join(', ')}</dd>
</dl>
<h2>Members</h2>
${members === undefined ? html`<p class="muted">Seeing members needs the view-users role.</p>` : members.length === 0 ? html`<p class="muted">No members yet.</p>` : html`<ul class="cards">${items}</ul>`}
${canManageMembers
  ? html`<form method="post" action="${action}" class="console-form">${csrfField(frame.csrf)}<label for="member">Add a member (username)</label><input type="text" id="member" name="user" required autocomplete="off" value="${form.user ?? ''}"><button type="submit">Add member</button></form>`
  : ''}`,
  );
}

/** A page without the admin frame: the 403 and sign-in problems. */
export function consoleMessagePage(title: string, message: string, link?: { href: string; label: string }): string {
  return html`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>${title} · Realmgate admin</title>
<link rel="stylesheet" href="/auth/resources/realmgate.css"></head>
<body><main class="card"><p class="realm">Realmgate admin</p><h1>${title}</h1><p>${message}</p>${link ? html`<p><a href="${link.href}">${link.label}</a></p>` : ''}</main></body></html>
`.value;
}
