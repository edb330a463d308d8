import { html, type SafeHtml } from '../html.js';
import type { BrokerReviewProfile, FederatedIdentity, IdentityProvider } from '../../storage/types.js';
import { actionForm, consolePage, csrfField, realmBase, type ConsoleFrame } from './layout.js';
import { visible } from './group-pages.js';
import { isOAuth2Only } from '../../oauth/social-providers.js';

/** A provider as the console lists it: with the redirect URI to register at the provider. */
export interface ProviderRow {
  provider: IdentityProvider;
  redirectUri: string;
}

/** An organization a provider may belong to (the form's choice). */
export interface OrganizationChoice {
  id: string;
  alias: string;
}

export const DEFAULT_SCOPE = 'openid email profile';

const ENDPOINTS = ['authorizationUrl', 'tokenUrl', 'userInfoUrl', 'jwksUrl'];

/** Where the OAuth 2.0 social providers send users (shown before one is stored). */
const DEFAULT_AUTHORIZATION_URL: Readonly<Record<string, string>> = {
  github: 'https://github.com/login/oauth/authorize',
  microsoft: 'https://login.microsoftonline.com/common/oauth2/v2.0/authorize',
  facebook: 'https://graph.facebook.com/oauth/authorize',
  bitbucket: 'https://bitbucket.org/site/oauth2/authorize',
};

/** The types a provider may be added as in the console: [providerId, label]. */
const PROVIDER_TYPES: ReadonlyArray<[string, string]> = [
  ['oidc', 'OpenID Connect'],
  ['google', 'Google'],
  ['github', 'GitHub'],
  ['gitlab', 'GitLab'],
  ['microsoft', 'Microsoft'],
  ['facebook', 'Facebook'],
  ['linkedin-openid-connect', 'LinkedIn'],
  ['bitbucket', 'Bitbucket'],
  ['keycloak-oidc', 'Keycloak OpenID Connect'],
];
const typeLabel = (type: string): string => PROVIDER_TYPES.find(([id]) => id === type)?.[1] ?? type;

export function providerUrl(realmId: string, alias: string): string {
  return `${realmBase(realmId)}/identity-providers/${encodeURIComponent(alias)}`;
}

function state(p: IdentityProvider): string {
  return [p.enabled ? 'enabled' : 'disabled', ...(p.hideOnLogin ? ['hidden on the login page'] : []), ...(p.linkOnly ? ['link only'] : [])].join(', ');
}

const checkbox = (id: string, label: string, checked: boolean): SafeHtml =>
  html`<label class="choice" for="${id}"><input type="checkbox" id="${id}" name="${id}" value="on"${checked ? html` checked` : ''}> ${label}</label>`;

const textField = (id: string, label: string, value: string, opts: { required?: boolean; url?: boolean; help?: string } = {}): SafeHtml =>
  html`<label for="${id}">${label}</label><input type="text" id="${id}" name="${id}" autocomplete="off"${opts.url ? html` inputmode="url"` : ''}${opts.required ? html` required` : ''} value="${value}">${opts.help ? html`<p class="muted">${opts.help}</p>` : ''}`;

/**
 * The fields the add and edit forms share: endpoints (or the issuer, to discover them), client, options.
 * `form` holds what was typed (or the stored values); a secret is never written back into the page.
 */
function providerFields(form: Record<string, string>, orgs: OrganizationChoice[], opts: { edit: boolean }): SafeHtml {
  const method = form.clientAuthMethod || 'client_secret_post';
  const org = form.organization ?? '';
  const type = form.providerType || 'oidc';
  // The endpoints one by one are for a provider without discovery: folded away until typed into (or edited).
  const open = opts.edit || ENDPOINTS.some((name) => (form[name] ?? '') !== '');
  // A new provider's type; a stored one's is shown and kept (its alias and redirect URI are the type's).
  const typeField = opts.edit
    ? html`<p>Type: <strong>${typeLabel(type)}</strong></p>`
    : html`<label for="providerType">Type</label><select id="providerType" name="providerType">${PROVIDER_TYPES.map(([id, label]) => html`<option value="${id}"${id === type ? html` selected` : ''}>${label}</option>`)}</select>
<p class="muted">Google, GitHub, GitLab, Microsoft, Facebook, LinkedIn and Bitbucket need only the client ID and secret: their endpoints are filled in (Keycloak's social providers).</p>`;
  // Each shown when adding (the type is chosen in the same form) and on its type's page.
  const hostedDomain = (opts.edit ? type !== 'google' : isOAuth2Only(type)) ? '' : textField('hostedDomain', 'Hosted domains (Google only, optional)', form.hostedDomain ?? '', { help: 'Google Workspace domains whose accounts may sign in, comma-separated; empty or * for any Google account. The ID token\'s hd claim must be one of them.' });
  const tenant = (opts.edit ? type !== 'microsoft' : isOAuth2Only(type) && type !== 'microsoft')
    ? ''
    : textField('tenantId', 'Tenant (Microsoft only, optional)', form.tenantId ?? '', { help: 'The Microsoft Entra tenant whose accounts may sign in: its ID or one of its domains; organizations for any work or school account, consumers for personal accounts; empty (common) for any Microsoft account.' });
  // The endpoints of GitHub, Microsoft, Facebook and Bitbucket are made from their addresses (and Microsoft's tenant):
  // another address is the admin API's or the CLI's baseUrl and apiUrl.
  const provider = isOAuth2Only(type)
    ? html`<p class="muted">${typeLabel(type)}'s endpoints: <code>${form.authorizationUrl || DEFAULT_AUTHORIZATION_URL[type] || ''}</code> and its user API.</p>${tenant}`
      : html`<fieldset><legend>Provider</legend>
${textField('issuer', 'Issuer', form.issuer ?? '', { url: true, help: 'Its endpoints and keys are read from {issuer}/.well-known/openid-configuration (OpenID Connect Discovery) when the authorization and token URLs are left empty; ID tokens must name this issuer.' })}
<details${open ? html` open` : ''}><summary>Endpoints one by one${opts.edit ? '' : ' (a provider without discovery)'}</summary>
${textField('authorizationUrl', 'Authorization URL', form.authorizationUrl ?? '', { url: true })}
${textField('tokenUrl', 'Token URL', form.tokenUrl ?? '', { url: true })}
${textField('userInfoUrl', 'Userinfo URL (optional)', form.userInfoUrl ?? '', { url: true })}
${textField('jwksUrl', 'JWKS URL (optional)', form.jwksUrl ?? '', { url: true, help: "With it, ID token signatures are checked against the provider's keys." })}
</details>
${hostedDomain}
${tenant}
</fieldset>`;
  return html`${typeField}
${provider}
<fieldset><legend>Client at the provider</legend>
${textField('clientId', 'Client ID', form.clientId ?? '', { required: true })}
<label for="clientSecret">${opts.edit ? 'New client secret (leave empty to keep the current one)' : 'Client secret'}</label><input type="password" id="clientSecret" name="clientSecret" autocomplete="new-password"${opts.edit ? '' : html` required`}>
<label for="clientAuthMethod">Client authentication</label><select id="clientAuthMethod" name="clientAuthMethod">
<option value="client_secret_post"${method === 'client_secret_post' ? html` selected` : ''}>client_secret_post (form body)</option>
<option value="client_secret_basic"${method === 'client_secret_basic' ? html` selected` : ''}>client_secret_basic (HTTP Basic)</option>
</select>
${textField('scope', 'Scopes', form.scope ?? DEFAULT_SCOPE, { help: isOAuth2Only(type) ? 'Space-separated (GitHub: user:email; Microsoft: User.read; Facebook: email; Bitbucket: account email).' : 'Space-separated; openid is always asked for.' })}
</fieldset>
${orgs.length > 0
  ? html`<label for="organization">Organization</label><select id="organization" name="organization"><option value="">None</option>${orgs.map((o) => html`<option value="${o.id}"${o.id === org ? html` selected` : ''}>${visible(o.alias)}</option>`)}</select>`
  : ''}
<fieldset><legend>Options</legend>
${checkbox('pkce', 'PKCE (S256): send a code challenge', form.pkce !== 'off')}
${checkbox('trustEmail', "Trust email: the provider's addresses count as verified (never Microsoft's: nobody checks them)", form.trustEmail === 'on')}
${checkbox('hideOnLogin', 'Hide on the login page: only kc_idp_hint sends users there', form.hideOnLogin === 'on')}
${checkbox('linkOnly', 'Link only: no new users, only accounts linked already sign in', form.linkOnly === 'on')}
</fieldset>`;
}

/** The realm's providers (alias, display name, state, redirect URI) and the form adding one (manage-identity-providers). */
/** Keycloak's first broker login Review Profile modes, as the console names them. */
const REVIEW_MODES: ReadonlyArray<[BrokerReviewProfile, string]> = [
  ['missing', 'When something is missing (default)'],
  ['on', 'Always'],
  ['off', 'Never'],
];

/** The realm's Review Profile mode: the form to change it (manage-realm), or the mode as text. */
function reviewSection(realmId: string, csrf: string, review: { mode: BrokerReviewProfile; canChange: boolean }): SafeHtml {
  const current = REVIEW_MODES.find(([m]) => m === review.mode)?.[1] ?? review.mode;
  return html`<h2>First sign-in review</h2>
<p class="muted">At a user's first sign-in through any provider of the realm (Keycloak's first broker login <em>Review Profile</em>): when something is missing, an account without an email, a first or a last name is completed before it makes a user; always, the user checks every account; never, the account makes a user as it is.</p>
${review.canChange
  ? html`<form method="post" action="${realmBase(realmId)}/identity-providers/review-profile" class="console-form">${csrfField(csrf)}
<label for="reviewProfile">Review the account the provider gives</label>
<select id="reviewProfile" name="reviewProfile">${REVIEW_MODES.map(([m, text]) => html`<option value="${m}"${m === review.mode ? html` selected` : ''}>${text}</option>`)}</select>
<button type="submit" class="secondary">Save review setting</button></form>`
  : html`<p>${current}</p>`}`;
}

export function identityProvidersPage(frame: ConsoleFrame & { realmId: string }, rows: ProviderRow[], canManage: boolean, orgs: OrganizationChoice[], form: Record<string, string> = {}, review?: { mode: BrokerReviewProfile; canChange: boolean }): string {
  const labels = ['Alias', 'Display name', 'State', 'Redirect URI'];
  const items = rows.map(({ provider: p, redirectUri }) =>
    html`<tr><td data-label="${labels[0]}"><a href="${providerUrl(frame.realmId, p.alias)}">${p.alias}</a></td><td data-label="${labels[1]}">${visible(p.displayName ?? '')}</td><td data-label="${labels[2]}">${state(p)}</td><td data-label="${labels[3]}"><code>${redirectUri}</code></td></tr>`,
  );
  const add = canManage
    ? html`<h2>Add a provider</h2>
<form method="post" action="${realmBase(frame.realmId)}/identity-providers" class="console-form">${csrfField(frame.csrf)}
${textField('alias', 'Alias', form.alias ?? '', { required: true, help: 'Letters, digits, ".", "_" or "-". It is part of the redirect URI and cannot change.' })}
${textField('displayName', 'Display name (optional)', form.displayName ?? '', { help: "The text of the login page's button (default: the alias)." })}
${providerFields(form, orgs, { edit: false })}
<button type="submit">Add provider</button></form>`
    : '';
  return consolePage(
    frame,
    html`<p class="muted">Users sign in through another OpenID Connect provider: a button on the login page, or a client's <code>kc_idp_hint=&lt;alias&gt;</code>. Register the redirect URI at the provider, as a redirect URI of Realmgate's client there.</p>
${rows.length === 0
  ? html`<p class="muted">No identity providers yet.</p>`
  : html`<div class="table-wrap"><table><caption class="visually-hidden">Identity providers</caption><thead><tr>${labels.map((l) => html`<th scope="col">${l}</th>`)}</tr></thead><tbody>${items}</tbody></table></div>`}
${review ? reviewSection(frame.realmId, frame.csrf, review) : ''}
${add}`,
  );
}

/** What the edit form starts with: the stored provider, as the form's fields. */
export function providerForm(p: IdentityProvider): Record<string, string> {
  const c = p.config;
  return {
    providerType: p.providerId,
    hostedDomain: c.hostedDomain ?? '',
    tenantId: c.tenantId ?? '',
    displayName: p.displayName ?? '',
    issuer: c.issuer ?? '',
    authorizationUrl: c.authorizationUrl ?? '',
    tokenUrl: c.tokenUrl ?? '',
    userInfoUrl: c.userInfoUrl ?? '',
    jwksUrl: c.jwksUrl ?? '',
    clientId: c.clientId ?? '',
    clientAuthMethod: c.clientAuthMethod ?? '',
    scope: c.defaultScope ?? '',
    organization: p.organizationId ?? '',
    pkce: c.pkceEnabled === 'true' ? 'on' : 'off',
    trustEmail: p.trustEmail ? 'on' : '',
    hideOnLogin: p.hideOnLogin ? 'on' : '',
    linkOnly: p.linkOnly ? 'on' : '',
  };
}

/** A provider's page: its settings and redirect URI; enable or disable, edit, delete (its alias typed again). */
export function identityProviderPage(
  frame: ConsoleFrame & { realmId: string },
  row: ProviderRow,
  organization: string | null,
  canManage: boolean,
  orgs: OrganizationChoice[],
  form?: Record<string, string>,
): string {
  const { provider: p, redirectUri } = row;
  const c = p.config;
  const base = providerUrl(frame.realmId, p.alias);
  const url = (v: string | undefined): SafeHtml | string => (v ? html`<code>${v}</code>` : '');
  const manage: SafeHtml | '' = canManage
    ? html`<h2>Provider</h2>
<div class="row">${p.enabled ? actionForm(`${base}/disable`, frame.csrf, 'Disable provider', { secondary: true }) : actionForm(`${base}/enable`, frame.csrf, 'Enable provider')}</div>
<h2>Edit</h2>
<form method="post" action="${base}/update" class="console-form">${csrfField(frame.csrf)}
${textField('displayName', 'Display name', (form ?? providerForm(p)).displayName ?? '')}
${providerFields(form ?? providerForm(p), orgs, { edit: true })}
<button type="submit">Save provider</button></form>
<h2>Delete</h2>
<form method="post" action="${base}/delete" class="console-form">${csrfField(frame.csrf)}
<label for="confirm">Type the alias to delete the provider</label><input type="text" id="confirm" name="confirm" required autocomplete="off">
<p class="muted">Every user's link to it is removed; users without a password can then no longer sign in. This cannot be undone.</p>
<button type="submit" class="danger">Delete provider</button></form>`
    : '';
  return consolePage(
    frame,
    html`<dl class="facts long-values">
<dt>Alias</dt><dd>${p.alias}</dd>
<dt>Type</dt><dd>${typeLabel(p.providerId)}</dd>
<dt>Display name</dt><dd>${visible(p.displayName ?? '')}</dd>
<dt>State</dt><dd>${state(p)}</dd>
<dt>Redirect URI</dt><dd><code>${redirectUri}</code></dd>
<dt>Issuer</dt><dd>${url(c.issuer)}</dd>
<dt>Authorization URL</dt><dd>${url(c.authorizationUrl)}</dd>
<dt>Token URL</dt><dd>${url(c.tokenUrl)}</dd>
<dt>Userinfo URL</dt><dd>${url(c.userInfoUrl)}</dd>
<dt>ID token signature</dt><dd>${isOAuth2Only(p.providerId) ? `none (${typeLabel(p.providerId)} has no ID tokens: the account is its user API's)` : c.validateSignature === 'true' ? html`checked with the keys at ${url(c.jwksUrl)}` : 'not checked (the ID token comes from the token endpoint over TLS)'}</dd>
<dt>Client ID</dt><dd>${visible(c.clientId ?? '')}</dd>
<dt>Client secret</dt><dd>${p.sealedClientSecret ? 'set (never shown)' : 'none'}</dd>
<dt>Client authentication</dt><dd>${c.clientAuthMethod || 'client_secret_post'}</dd>
<dt>Scopes</dt><dd>${visible(c.defaultScope || 'openid')}</dd>
<dt>PKCE</dt><dd>${c.pkceEnabled === 'true' ? (c.pkceMethod ?? 'S256') : 'off'}</dd>
<dt>Trust email</dt><dd>${p.trustEmail ? 'yes' : 'no'}</dd>
<dt>Organization</dt><dd>${organization === null ? 'none' : visible(organization)}</dd>
<dt>Sync mode</dt><dd>${visible(c.syncMode || 'IMPORT')}</dd>${p.providerId === 'google' ? html`
<dt>Hosted domains</dt><dd>${visible(c.hostedDomain || 'any Google account')}</dd>` : ''}${p.providerId === 'microsoft' ? html`
<dt>Tenant</dt><dd>${visible(c.tenantId || 'common (any Microsoft account)')}</dd>` : ''}
</dl>
<p class="muted">Register the redirect URI at the provider, as a redirect URI of the client ${visible(c.clientId ?? '')}.</p>
${manage}`,
  );
}

/**
 * A user's linked accounts at identity providers (Keycloak's federated identities): the provider (its
 * page, for an admin who may see it), the account's username and id there, when it was linked; each with
 * an Unlink button (manage-users).
 */
export function linkedAccountsSection(o: {
  csrf: string;
  realmId: string;
  base: string;
  links: FederatedIdentity[];
  providerPages: boolean;
  /** The user has no password: a linked account may be their only way in. */
  noPassword: boolean;
  canManage: boolean;
  when: (seconds: number) => string;
}): SafeHtml {
  const items = o.links.map(
    (l) =>
      html`<li class="session"><span>${o.providerPages ? html`<a href="${providerUrl(o.realmId, l.identityProvider)}">${l.identityProvider}</a>` : l.identityProvider}<span class="muted">${visible(l.federatedUsername ?? l.federatedUserId)} · id ${visible(l.federatedUserId)} · linked ${o.when(l.createdAt)}</span></span>${o.canManage ? actionForm(`${o.base}/federated-identity/remove`, o.csrf, 'Unlink', { secondary: true, fields: { provider: l.identityProvider } }) : ''}</li>`,
  );
  return html`<h2>Linked accounts</h2>
${o.links.length === 0 ? html`<p class="muted">No linked accounts at identity providers.</p>` : html`<ul class="cards">${items}</ul>`}
${o.noPassword && o.links.length > 0 ? html`<p class="muted">The user has no password: without a linked account they cannot sign in (reset their password to give them one).</p>` : ''}`;
}
