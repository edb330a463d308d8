import type { ProfileValues } from './required-action-pages.js';
import { html, type SafeHtml } from './html.js';
import { page } from './layout.js';
import type { PasswordRule } from './pages.js';
import { t, th, type Text } from '../i18n/translator.js';
import { scopeConsentText } from './scope-text.js';

/** A card's form of one (secondary) button, posting `fields` with the page's CSRF token. */
function buttonForm(action: string, csrf: string, fields: Readonly<Record<string, string>>, label: string): SafeHtml {
  return html`<form method="post" action="${action}">
<input type="hidden" name="csrf" value="${csrf}">
${Object.entries(fields).map(([name, value]) => html`<input type="hidden" name="${name}" value="${value}">
`)}<button type="submit" class="secondary">${label}</button>
</form>`;
}

export interface AccountGrant {
  clientId: string;
  clientName: string;
  organizationId: string;
  organizationName: Text;
  scopes: Array<{ name: string; consentText: string }>;
  since: number;
  lastUsed: number | undefined;
}

export interface AccountSession {
  id: string;
  createdAt: number;
  current: boolean;
  /** The administrator who opened the session by impersonating the user (their username), if one did. */
  impersonator?: string;
  /** The browser and system it was started from ("Firefox 128 (Linux)"), and the address, when known. */
  device?: string;
  ipAddress?: string;
}

/** A moment as `<time>`, e.g. 2025-01-31 14:05 UTC (kept on one line by the stylesheet). */
function when(seconds: number): SafeHtml {
  const iso = new Date(seconds * 1000).toISOString();
  return html`<time datetime="${iso.slice(0, 19)}Z">${iso.replace('T', ' ').slice(0, 16)} UTC</time>`;
}

/** An authenticator app (or a security key) of the user, as the account page lists it. */
export interface AccountAuthenticator {
  id: string;
  label: string | null;
  createdAt: number;
  /** A security key that signs in alone (a passkey). */
  passwordless?: boolean;
}

/** The user's account at an identity provider, as the account page lists it. */
export interface AccountLink {
  alias: string;
  providerName: string;
  username: string;
  createdAt: number;
  /** The user's only way in (no password, no other link): not removable. */
  last: boolean;
}

export function accountPage(ctx: {
  realmName: string;
  username: string;
  base: string;
  csrf: string;
  grants: AccountGrant[];
  sessions: AccountSession[];
  authenticators: AccountAuthenticator[];
  /** The user's security keys (WebAuthn), listed as the apps are. */
  securityKeys: AccountAuthenticator[];
  links: AccountLink[];
  /** The providers the user can link an account at (Keycloak's account console "Link account"). */
  linkable: ReadonlyArray<{ alias: string; providerName: string }>;
  /** False for a user made by an identity provider: no password to change. */
  hasPassword: boolean;
  /** The realm's password rule, shown before the user types. */
  passwordRule: PasswordRule;
  /** Unused recovery codes of the user. */
  recoveryCodesLeft: number;
  notice?: Text;
  /** Why the password form was refused (shown by it). */
  passwordError?: Text;
  /** The realm's languages, to choose the user's own (their locale attribute); `current` is preselected. */
  language?: { locales: ReadonlyArray<{ tag: string; name: string }>; current: string };
  /**
   * Keycloak's "Delete account", when the realm lets users (its delete_account action enabled): confirmed
   * by the password (`password`), by a sign-in of the last minutes for a user without one (`recent`), else
   * not offered until they sign in again (`sign-in-again`); never for a user of an LDAP directory
   * (`federated`). `error`: why the last try was refused.
   */
  deletion?: { mode: 'password' | 'recent' | 'sign-in-again' | 'federated'; error?: Text };
  /**
   * Keycloak's "Personal info": the email and names, as the user has them or as typed with `errors`.
   * `readOnly`: a user of an LDAP directory. `password`: a change of email asks for the current password.
   */
  /** usernameEditable: the realm's editUsernameAllowed (and the user's own username); username: as typed, after a refusal. */
  profile: { values: ProfileValues; readOnly: boolean; password: boolean; usernameEditable?: boolean; username?: string; errors?: readonly Text[] };
}): string {
  // The administrator who opened this browser's session by impersonation, if one did.
  const impersonatedBy = ctx.sessions.find((s) => s.current)?.impersonator;
  return page({
    title: t('accountTitle'),
    realmName: ctx.realmName,
    wide: true,
    body: html`<h1>${t('accountTitle')}</h1>
<p class="muted">${th('accountSignedInAs', html`<strong>${ctx.username}</strong>`)}</p>
${impersonatedBy !== undefined ? html`<p class="notice impersonated" role="status">${t('accountImpersonatedNotice', impersonatedBy)}</p>` : ''}
${ctx.notice ? html`<p class="notice" role="status">${ctx.notice}</p>` : ''}
${profileForm(ctx.base, ctx.csrf, ctx.username, ctx.profile)}
<h2>${t('accountApplicationsTitle')}</h2>
${ctx.grants.length === 0
  ? html`<p class="muted">${t('accountNoApplications')}</p>`
  : html`<ul class="cards">
${ctx.grants.map(
  (g) => html`<li class="grant">
<div><strong>${g.clientName}</strong>${g.organizationId === '' ? '' : html` <span class="muted">${t('accountGrantForOrganization', String(g.organizationName))}</span>`}</div>
<ul class="scopes">${g.scopes.map((s) => html`<li>${scopeConsentText(s.consentText)}</li>`)}</ul>
<p class="muted">${th('accountGrantSince', when(g.since))} ${g.lastUsed ? th('accountGrantLastUsed', when(g.lastUsed)) : t('accountGrantNotUsed')}</p>
${buttonForm(`${ctx.base}/revoke`, ctx.csrf, { client_id: g.clientId, organization_id: g.organizationId }, t('removeAccess'))}
</li>`,
)}
</ul>`}
<h2>${t('accountPasswordTitle')}</h2>
${ctx.hasPassword
  ? html`${ctx.passwordError ? html`<p class="error" role="alert">${ctx.passwordError}</p>` : ''}
<form method="post" action="${ctx.base}/password" class="password-form">
<input type="hidden" name="csrf" value="${ctx.csrf}">
<input type="text" name="username" value="${ctx.username}" autocomplete="username" readonly hidden>
<label for="password-current">${t('accountCurrentPassword')}</label>
<input type="password" id="password-current" name="password" autocomplete="current-password" maxlength="1024" required>
<label for="password-new">${t('accountNewPassword')}</label>
<input type="password" id="password-new" name="password-new" autocomplete="new-password" minlength="${ctx.passwordRule.min}" maxlength="${ctx.passwordRule.max}" aria-describedby="password-rule" required>
<label for="password-confirm">${t('accountConfirmNewPassword')}</label>
<input type="password" id="password-confirm" name="password-confirm" autocomplete="new-password" minlength="${ctx.passwordRule.min}" maxlength="${ctx.passwordRule.max}" required>
<p class="muted" id="password-rule">${ctx.passwordRule.text} ${t('accountPasswordChangeSignsOut')}</p>
<div class="actions"><button type="submit" class="secondary">${t('accountChangePassword')}</button></div>
</form>`
  : html`<p class="muted">${t('accountNoPassword')}</p>`}
${ctx.hasPassword || ctx.authenticators.length > 0 || ctx.securityKeys.length > 0
  ? html`<h2>${t('two-factor')}</h2>
${ctx.authenticators.length === 0
  ? ctx.securityKeys.length === 0
    ? html`<p class="muted">${t('accountOnlyPassword')}</p>`
    : html`<p class="muted">${t('accountKeyWithoutApp')}</p>`
  : html`<ul class="cards">
${ctx.authenticators.map(
  (a) => html`<li class="authenticator">
<div><strong>${a.label ?? t('accountAuthenticatorApp')}</strong> <span class="muted">${th('accountSetUpOn', when(a.createdAt))}</span></div>
${buttonForm(`${ctx.base}/otp/remove`, ctx.csrf, { credential_id: a.id }, t('accountRemove'))}
</li>`,
)}
</ul>`}
${ctx.authenticators.length > 0
  ? html`<p class="muted">${ctx.recoveryCodesLeft === 0 ? t('accountRecoveryCodesNone') : t('accountRecoveryCodesLeft', ctx.recoveryCodesLeft)}</p>
<form method="post" action="${ctx.base}/recovery-codes">
<input type="hidden" name="csrf" value="${ctx.csrf}">
<div class="actions"><button type="submit" class="secondary">${ctx.recoveryCodesLeft === 0 ? t('accountCreateRecoveryCodes') : t('accountCreateNewRecoveryCodes')}</button></div>
</form>`
  : ''}
<form method="post" action="${ctx.base}/otp/setup">
<input type="hidden" name="csrf" value="${ctx.csrf}">
<div class="actions">${ctx.authenticators.length === 0 ? html`<button type="submit">${t('accountSetUpAuthenticator')}</button>` : html`<button type="submit" class="secondary">${t('accountAddAuthenticator')}</button>`}</div>
</form>
<h2>${t('accountSecurityKeysTitle')}</h2>
${ctx.securityKeys.length === 0
  ? html`<p class="muted">${t('accountNoSecurityKey')}</p>`
  : html`<ul class="cards">
${ctx.securityKeys.map(
  (k) => html`<li class="authenticator">
<div><strong>${k.label ?? (k.passwordless ? t('accountPasskey') : t('accountSecurityKey'))}</strong>${k.passwordless ? html` ${t('accountPasskeyNote')}` : ''} <span class="muted">${th('accountAddedOn', when(k.createdAt))}</span></div>
${buttonForm(`${ctx.base}/webauthn/remove`, ctx.csrf, { credential_id: k.id }, t('accountRemove'))}
</li>`,
)}
</ul>`}
<form method="post" action="${ctx.base}/webauthn/setup">
<input type="hidden" name="csrf" value="${ctx.csrf}">
<div class="actions"><button type="submit" class="secondary">${t('accountAddSecurityKey')}</button></div>
</form>
`
  : ''}
${ctx.links.length + ctx.linkable.length > 0
  ? html`<h2>${t('linkedAccounts')}</h2>
<ul class="cards">
${ctx.links.map(
  (l) => html`<li class="linked-account">
<div><strong>${l.providerName}</strong> <span class="muted">${th('accountLinkedAs', l.username, when(l.createdAt))}</span></div>
${l.last
  ? html`<p class="muted">${t('accountOnlyWayIn')}</p>`
  : buttonForm(`${ctx.base}/linked-accounts/remove`, ctx.csrf, { provider: l.alias }, t('unLink'))}
</li>`,
)}
${ctx.linkable.map(
  (p) => html`<li class="linkable-account">
<div><strong>${p.providerName}</strong> <span class="muted">${t('accountNotLinked')}</span></div>
${buttonForm(`${ctx.base}/linked-accounts/link`, ctx.csrf, { provider: p.alias }, t('accountLinkAccount'))}
</li>`,
)}
</ul>`
  : ''}
<h2>${t('signedInDevices')}</h2>
<ul class="cards">
${ctx.sessions.map(
  (s) => html`<li class="session">
<div>${s.current ? html`<strong>${t('accountThisBrowser')}</strong>` : t('accountAnotherBrowser')} <span class="muted">${s.device ? html`${s.device} · ` : ''}${s.ipAddress ? html`${s.ipAddress} · ` : ''}${th('accountSessionSince', when(s.createdAt))}${s.impersonator !== undefined ? html`, ${t('accountSessionImpersonated', s.impersonator)}` : ''}</span></div>
${buttonForm(`${ctx.base}/sessions/end`, ctx.csrf, { session_id: s.id }, t('signOut'))}
</li>`,
)}
</ul>${ctx.language ? languageForm(ctx.base, ctx.csrf, ctx.language) : ''}${ctx.deletion ? deletionForm(ctx.base, ctx.csrf, ctx.username, ctx.deletion) : ''}`,
  });
}

/** Keycloak's account console "Delete account" (src/admin/operations/account-deletion.ts). */
function deletionForm(base: string, csrf: string, username: string, deletion: NonNullable<Parameters<typeof accountPage>[0]['deletion']>): SafeHtml {
  const button = html`<div class="actions"><button type="submit" class="danger">${t('doConfirmDelete')}</button></div>`;
  return html`
<h2>${t('deleteAccountTitle')}</h2>
${deletion.error ? html`<p class="error" role="alert">${deletion.error}</p>` : ''}
${deletion.mode === 'federated'
  ? html`<p class="muted">${t('deleteAccountFederatedMessage')}</p>`
  : deletion.mode === 'sign-in-again'
    ? html`<p class="muted">${t('accountDeleteIntro')} ${t('accountDeleteSignInAgain')}</p>`
    : html`<p class="muted">${t('accountDeleteIntro')}</p>
<form method="post" action="${base}/delete" class="delete-account-form">
<input type="hidden" name="csrf" value="${csrf}">
${deletion.mode === 'password'
  ? html`<input type="text" name="username" value="${username}" autocomplete="username" readonly hidden>
<label for="delete-password">${t('accountCurrentPassword')}</label>
<input type="password" id="delete-password" name="password" autocomplete="current-password" maxlength="1024" required>`
  : ''}
${button}
</form>`}`;
}

/** Keycloak's account console language: the user's choice, kept in their locale attribute (mails use it too). */
function languageForm(base: string, csrf: string, language: NonNullable<Parameters<typeof accountPage>[0]['language']>): SafeHtml {
  return html`
<h2>${t('accountLanguageTitle')}</h2>
<form method="post" action="${base}/locale">
<input type="hidden" name="csrf" value="${csrf}">
<label for="locale">${t('accountLanguageIntro')}</label>
<select id="locale" name="locale">${language.locales.map((l) => html`<option value="${l.tag}" lang="${l.tag}"${l.tag === language.current ? html` selected` : ''}>${l.name}</option>`)}</select>
<div class="actions"><button type="submit" class="secondary">${t('accountSaveLanguage')}</button></div>
</form>`;
}

/** The user's new recovery codes, shown once: to print or write down. */
export function recoveryCodesPage(ctx: { realmName: string; username: string; base: string; codes: readonly string[] }): string {
  return page({
    title: t('recoveryCodesTitle'),
    realmName: ctx.realmName,
    body: html`<h1>${t('recoveryCodesHeading')}</h1>
<p>${th('recoveryCodesIntro', html`<strong>${ctx.username}</strong>`)}</p>
<ol class="recovery-codes">
${ctx.codes.map((c) => html`<li><code>${c}</code></li>`)}
</ol>
<div class="actions"><a href="${ctx.base}">${t('backToAccount')}</a></div>`,
  });
}

/** Keycloak's account console "Personal info": the username shown (editable where the realm allows it), the email and names editable (not a directory's). */
function profileForm(base: string, csrf: string, username: string, profile: Parameters<typeof accountPage>[0]['profile']): SafeHtml {
  const v = profile.values;
  const errors = profile.errors ?? [];
  const ro = profile.readOnly ? html` readonly` : '';
  return html`<h2>${t('accountPersonalInfoTitle')}</h2>
${errors.length > 0 ? html`<div class="error" role="alert">${errors.length === 1 ? html`<p>${errors[0]}</p>` : html`<ul>${errors.map((e) => html`<li>${e}</li>`)}</ul>`}</div>` : ''}
${profile.readOnly ? html`<p class="muted">${t('accountProfileFromDirectory')}</p>` : ''}
<form method="post" action="${base}/profile" class="profile-form">
<input type="hidden" name="csrf" value="${csrf}">
<label for="profile-username">${t('username')}</label>
<input type="text" id="profile-username" name="username" value="${profile.username ?? username}" autocomplete="username" autocapitalize="none" spellcheck="false" maxlength="255"${profile.usernameEditable && !profile.readOnly ? html` required` : html` readonly`}>
<label for="profile-email">${t('email')}</label>
<input type="email" id="profile-email" name="email" value="${v.email}" autocomplete="email" autocapitalize="none" spellcheck="false" maxlength="320" required${ro}>
<label for="profile-firstName">${t('firstName')}</label>
<input type="text" id="profile-firstName" name="firstName" value="${v.firstName}" autocomplete="given-name" maxlength="255" required${ro}>
<label for="profile-lastName">${t('lastName')}</label>
<input type="text" id="profile-lastName" name="lastName" value="${v.lastName}" autocomplete="family-name" maxlength="255" required${ro}>
${profile.readOnly
  ? ''
  : html`${profile.password
    ? html`<label for="profile-password">${t('accountCurrentPassword')}</label>
<input type="password" id="profile-password" name="password" autocomplete="current-password" maxlength="1024" aria-describedby="profile-password-hint">
<p class="muted" id="profile-password-hint">${t('accountProfilePasswordHint')}</p>`
    : ''}
<div class="actions"><button type="submit" class="secondary">${t('accountProfileSave')}</button></div>`}
</form>`;
}
