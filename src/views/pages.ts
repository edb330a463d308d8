import type { Organization, Scope } from '../storage/types.js';
import { html, type SafeHtml } from './html.js';
import type { ClientResponse } from '../oauth/authorize/checks.js';
import { page } from './layout.js';
import { otherMethodForm, passkeyForm } from './webauthn-pages.js';
import { WEBAUTHN_SCRIPT_PATH } from './scripts.js';
import { msg, t, th, type Msg, type Text } from '../i18n/translator.js';
import { scopeConsentText } from './scope-text.js';

/** The realm's password rule as a form shows it before the user types (src/admin/password-policy.ts passwordRule). */
export interface PasswordRule {
  min: number;
  max: number;
  text: Text;
}

/**
 * A new password and its confirmation, with the realm's rule said before the user types (the
 * update-password page and a mailed link's page); the username hidden for password managers.
 */
export function newPasswordFields(username: string, rule: PasswordRule, o: { registration?: boolean } = {}): SafeHtml {
  // Registration: the username is a field of its own form, and there is no current password yet.
  return html`${o.registration ? '' : html`<input type="text" name="username" value="${username}" autocomplete="username" readonly hidden>
`}<label for="password-new">${o.registration ? t('password') : t('passwordNew')}</label>
<input type="password" id="password-new" name="password-new" autocomplete="new-password" minlength="${rule.min}" maxlength="${rule.max}" aria-describedby="password-rule" required${o.registration ? '' : html` autofocus`}>
<label for="password-confirm">${o.registration ? t('passwordConfirm') : t('passwordNewConfirm')}</label>
<input type="password" id="password-confirm" name="password-confirm" autocomplete="new-password" minlength="${rule.min}" maxlength="${rule.max}" required>
<p class="muted" id="password-rule">${rule.text}${o.registration ? '' : ` ${t('passwordNotCurrent')}`}</p>`;
}

export interface PageContext {
  realmName: string;
  /** The application's name, or words standing for it (the account page's "your account"). */
  clientName: Text;
  action: string;
  csrf: string;
}

/** An identity provider offered on the login page (Keycloak's "Or sign in with"). */
export interface LoginProvider {
  alias: string;
  name: string;
}

/**
 * What the login page's name field asks for, in Keycloak's words: "Email" when the email is the username
 * (registrationEmailAsUsername, where the realm has that setting), "Username or email" when the realm takes
 * emails at sign-in (loginWithEmailAllowed), else "Username".
 */
export function loginLabel(realm: { loginWithEmailAllowed: boolean; registrationEmailAsUsername?: boolean }): Msg {
  if (realm.registrationEmailAsUsername === true) return msg('email');
  return msg(realm.loginWithEmailAllowed ? 'usernameOrEmail' : 'username');
}

/**
 * The login page. `providers`: the realm's identity providers to sign in with instead, each a button of
 * one form posted to `brokerAction` (with the CSRF token, like every form here).
 */
/**
 * `emailRouting`: some organization's users sign in at its own provider, found from their email's domain:
 * the password is then not required by the form (the server sends such an email on without it).
 */
/**
 * `usernameLabel`: what the name field asks for (Keycloak's "Username or email" when the realm takes
 * emails: loginLabel). `rememberMe`: the realm offers "Remember me" (`remembered`: ticked). `register`:
 * the registration page's address when the realm offers it.
 */
export function loginPage(ctx: PageContext & { error?: Text; username?: string; providers?: readonly LoginProvider[]; brokerAction?: string; emailRouting?: boolean; forgotPassword?: string; usernameLabel?: Text; rememberMe?: boolean; remembered?: boolean; register?: string; passkey?: { action: string; options: Record<string, unknown> } }): string {
  const providers = ctx.providers ?? [];
  return page({
    title: t('loginPageTitle'),
    realmName: ctx.realmName,
    ...(ctx.passkey ? { script: WEBAUTHN_SCRIPT_PATH } : {}),
    body: html`<h1>${t('loginTitleApp', String(ctx.clientName))}</h1>
${ctx.error ? html`<p class="error" role="alert">${ctx.error}</p>` : ''}
<form method="post" action="${ctx.action}">
<input type="hidden" name="csrf" value="${ctx.csrf}">
<label for="username">${ctx.usernameLabel ?? t('username')}</label>
<input type="text" id="username" name="username" value="${ctx.username ?? ''}" autocomplete="username" autocapitalize="none" spellcheck="false" required ${ctx.username ? '' : html`autofocus`}>
<label for="password">${t('password')}</label>
<input type="password" id="password" name="password" autocomplete="current-password"${ctx.emailRouting ? html` aria-describedby="password-note"` : html` required`} ${ctx.username ? html`autofocus` : ''}>
${ctx.emailRouting ? html`<p class="muted" id="password-note">${t('loginEmailRoutingNote')}</p>` : ''}
${ctx.rememberMe ? html`<label class="check"><input type="checkbox" id="rememberMe" name="rememberMe" value="on"${ctx.remembered ? html` checked` : ''}> ${t('rememberMe')}</label>` : ''}
<div class="actions">${ctx.forgotPassword ? html`<a href="${ctx.forgotPassword}" class="forgot">${t('doForgotPassword')}</a>` : ''}<button type="submit">${t('doLogIn')}</button></div>
</form>
${ctx.passkey ? passkeyForm({ action: ctx.passkey.action, csrf: ctx.csrf, options: ctx.passkey.options }) : ''}
${ctx.register ? html`<p class="register">${t('noAccount')} <a href="${ctx.register}">${t('doRegister')}</a></p>` : ''}
${providers.length > 0 && ctx.brokerAction
  ? html`<form method="post" action="${ctx.brokerAction}" class="providers">
<input type="hidden" name="csrf" value="${ctx.csrf}">
<p class="or"><span>${t('identity-provider-login-label')}</span></p>
${providers.map((p) => html`<button type="submit" name="provider" value="${p.alias}" class="secondary">${p.name}</button>`)}
</form>`
  : ''}`,
  });
}

/**
 * Identity brokering: the account at a provider has the email (or username) of an existing local user,
 * so it is linked only once that user signs in here (Keycloak's "Account already exists" and "Link
 * account"); a user without a password cannot, and is told how to go on. Cancel goes back to the login page.
 */
export function linkAccountPage(ctx: PageContext & { username: string; provider: string; by: 'email' | 'username'; passwordless: boolean; error?: Text }): string {
  return page({
    title: t('linkAccountTitle'),
    realmName: ctx.realmName,
    body: html`<h1>${t('linkAccountHeader', ctx.provider)}</h1>
<p>${th(ctx.by === 'email' ? 'linkAccountExistsEmail' : 'linkAccountExistsUsername', ctx.provider, html`<strong>${ctx.username}</strong>`)}</p>
${ctx.error ? html`<p class="error" role="alert">${ctx.error}</p>` : ''}
${ctx.passwordless
  ? html`<p>${t('linkAccountNoPassword', ctx.provider)}</p>
<form method="post" action="${ctx.action}">
<input type="hidden" name="csrf" value="${ctx.csrf}">
<div class="actions"><button type="submit" name="cancel" value="1">${t('backToSignIn')}</button></div>
</form>`
  : html`<p>${t('linkAccountIntro', ctx.provider)}</p>
<form method="post" action="${ctx.action}">
<input type="hidden" name="csrf" value="${ctx.csrf}">
<input type="text" name="username" value="${ctx.username}" autocomplete="username" readonly hidden>
<label for="password">${t('linkAccountPasswordLabel', ctx.username)}</label>
<input type="password" id="password" name="password" autocomplete="current-password" required autofocus>
<div class="actions"><button type="submit">${t('linkAccountSubmit')}</button><button type="submit" name="cancel" value="1" class="secondary" formnovalidate>${t('doCancel')}</button></div>
</form>`}`,
  });
}

/**
 * Keycloak's UPDATE_PASSWORD required action: the password typed was temporary (set by an administrator),
 * so the user chooses their own before going on. The username rides along, read-only, for password managers.
 */
/**
 * `proof`: on the account page, which has no pending request, the signed proof that the password was right.
 * `cancellable`: the client asked for the change (kc_action); the user may decline it and go back.
 */
export function updatePasswordPage(ctx: PageContext & { username: string; error?: Text; proof?: string; cancellable?: boolean; rule: PasswordRule; expired?: boolean }): string {
  const user = html`<strong>${ctx.username}</strong>`;
  const client = String(ctx.clientName);
  return page({
    title: t('updatePasswordTitle'),
    realmName: ctx.realmName,
    body: html`<h1>${t('chooseNewPasswordTitle')}</h1>
${ctx.cancellable
  ? html`<p>${th('updatePasswordAsked', client, user)}</p>`
  : ctx.expired
    ? html`<p>${th('updatePasswordExpired', user, client)}</p>`
    : html`<p>${th('updatePasswordTemporary', user, client)}</p>`}
${ctx.error ? html`<p class="error" role="alert">${ctx.error}</p>` : ''}
<form method="post" action="${ctx.action}">
<input type="hidden" name="csrf" value="${ctx.csrf}">
${ctx.proof ? html`<input type="hidden" name="proof" value="${ctx.proof}">` : ''}
${newPasswordFields(ctx.username, ctx.rule)}
<div class="actions"><button type="submit">${t('doUpdatePassword')}</button>${ctx.cancellable ? html`<button type="submit" name="cancel" value="1" class="secondary" formnovalidate>${t('doCancel')}</button>` : ''}</div>
</form>`,
  });
}

/**
 * The second step of a sign-in for a user with an authenticator app: its current code (RFC 6238). The
 * field takes what phones offer (autocomplete one-time-code, a numeric keypad). `proof`: the account
 * page's signed proof that the password was right.
 */
export function otpPage(ctx: PageContext & { username: string; error?: Text; proof?: string; otherMethod?: string }): string {
  return page({
    title: t('otpTitle'),
    realmName: ctx.realmName,
    body: html`<h1>${t('otpHeader')}</h1>
<p>${th('otpIntro', html`<strong>${ctx.username}</strong>`, String(ctx.clientName))}</p>
${ctx.error ? html`<p class="error" role="alert">${ctx.error}</p>` : ''}
<form method="post" action="${ctx.action}">
<input type="hidden" name="csrf" value="${ctx.csrf}">
${ctx.proof ? html`<input type="hidden" name="proof" value="${ctx.proof}">` : ''}
<label for="otp">${t('loginOtpOneTime')}</label>
<input type="text" id="otp" name="otp" inputmode="numeric" pattern="[0-9 ]*" maxlength="10" autocomplete="one-time-code" required autofocus>
<div class="actions"><button type="submit">${t('doLogIn')}</button></div>
</form>
<details><summary>${t('otpRecoverySummary')}</summary>
<form method="post" action="${ctx.action}">
<input type="hidden" name="csrf" value="${ctx.csrf}">
${ctx.proof ? html`<input type="hidden" name="proof" value="${ctx.proof}">` : ''}
<label for="recovery">${t('otpRecoveryLabel')}</label>
<input type="text" id="recovery" name="otp" maxlength="32" autocomplete="off" autocapitalize="none" spellcheck="false" required>
<p class="muted">${t('otpRecoveryHint')}</p>
<div class="actions"><button type="submit" class="secondary">${t('otpRecoverySubmit')}</button></div>
</form>
</details>
${ctx.otherMethod ? otherMethodForm({ action: ctx.otherMethod, csrf: ctx.csrf, method: 'webauthn', proof: ctx.proof }) : ''}`,
  });
}

/**
 * Keycloak's CONFIGURE_TOTP required action: set up an authenticator app by scanning the QR code (or
 * typing the key), then prove it with a first code. `proof`: as on the other account-page forms.
 */
export function configureOtpPage(ctx: PageContext & { username: string; qr: SafeHtml; key: string; error?: Text; proof?: string; cancellable?: boolean }): string {
  const grouped = ctx.key.replace(/(.{4})/g, '$1 ').trim();
  return page({
    title: t('loginTotpTitle'),
    realmName: ctx.realmName,
    body: html`<h1>${t('configureOtpHeader')}</h1>
<p>${th('configureOtpIntro', html`<strong>${ctx.username}</strong>`)}</p>
${ctx.error ? html`<p class="error" role="alert">${ctx.error}</p>` : ''}
<ol class="steps">
<li>${t('loginTotpStep1')}</li>
<li>${t('loginTotpStep2')}
<div class="qr-box">${ctx.qr}</div>
<details><summary>${t('loginTotpUnableToScan')}</summary>
<p class="key"><code id="otp-key">${grouped}</code></p>
<p class="muted">${t('configureOtpKeyParameters')}</p>
</details></li>
<li>${t('loginTotpStep3')}</li>
</ol>
<form method="post" action="${ctx.action}">
<input type="hidden" name="csrf" value="${ctx.csrf}">
${ctx.proof ? html`<input type="hidden" name="proof" value="${ctx.proof}">` : ''}
<label for="otp">${t('loginOtpOneTime')}</label>
<input type="text" id="otp" name="otp" inputmode="numeric" pattern="[0-9 ]*" maxlength="10" autocomplete="one-time-code" required autofocus>
<label for="label">${t('loginTotpDeviceName')} <span class="muted">${t('optionalField')}</span></label>
<input type="text" id="label" name="label" maxlength="255" autocomplete="off">
<div class="actions"><button type="submit">${t('configureOtpSubmit')}</button>${ctx.cancellable ? html`<button type="submit" name="cancel" value="1" class="secondary" formnovalidate>${t('doCancel')}</button>` : ''}</div>
</form>`,
  });
}

/** `resources`: RFC 8707 2.1, the services the authorization request names (the grant is bound to them). */
export function consentPage(ctx: PageContext & { scopes: Scope[]; resources?: readonly string[] }): string {
  const resources = ctx.resources ?? [];
  const client = String(ctx.clientName);
  return page({
    title: t('consentTitle'),
    realmName: ctx.realmName,
    body: html`<h1>${t('consentHeader', client)}</h1>
<p>${t('consentIntro', client)}</p>
<ul class="permissions">
${ctx.scopes.map((s) => html`<li>${scopeConsentText(s.consentText)}<span class="scope">${s.name}</span></li>`)}
</ul>
${resources.length > 0 ? html`<p>${t(resources.length === 1 ? 'consentResourceOne' : 'consentResourceMany')}</p>
<ul class="resources">
${resources.map((r) => html`<li>${r}</li>`)}
</ul>` : ''}
<form method="post" action="${ctx.action}">
<input type="hidden" name="csrf" value="${ctx.csrf}">
<p class="muted">${t('consentWithdrawNote')}</p>
<div class="actions">
<button type="submit" name="decision" value="deny" class="secondary">${t('doDeny')}</button>
<button type="submit" name="decision" value="allow">${t('doAllow')}</button>
</div>
</form>`,
  });
}

export function organizationPage(ctx: PageContext & { organizations: Organization[]; error?: Text }): string {
  const single = ctx.organizations.length === 1;
  return page({
    title: t('organizationTitle'),
    realmName: ctx.realmName,
    body: html`<h1>${t('organizationHeader', String(ctx.clientName))}</h1>
${ctx.error ? html`<p class="error" role="alert">${ctx.error}</p>` : ''}
<form method="post" action="${ctx.action}">
<input type="hidden" name="csrf" value="${ctx.csrf}">
<fieldset>
<legend>${t('organizationLegend')}</legend>
${ctx.organizations.map(
  (o, i) => html`<label class="choice" for="org-${i}"><input type="radio" id="org-${i}" name="organization" value="${o.alias}" ${single ? html`checked` : ''} required> ${o.name}</label>`,
)}
</fieldset>
<div class="actions"><button type="submit">${t('doContinue')}</button></div>
</form>`,
  });
}

export function deviceDonePage(ctx: { realmName: string; clientName: string; approved: boolean }): string {
  return page({
    title: t(ctx.approved ? 'deviceConnectedTitle' : 'deviceNotConnectedTitle'),
    realmName: ctx.realmName,
    body: ctx.approved
      ? html`<h1>${t('deviceConnectedHeader')}</h1>
<p>${t('deviceConnectedMessage', ctx.clientName)}</p>`
      : html`<h1>${t('deviceNotConnectedHeader')}</h1>
<p class="error" role="alert">${t('deviceNotConnectedMessage', ctx.clientName)}</p>
<p class="muted">${t('deviceNotConnectedHint')}</p>`,
  });
}

export function noOrganizationPage(ctx: { realmName: string; clientName: string; deny: ClientResponse | undefined }): string {
  return page({
    title: t('noOrganizationTitle'),
    realmName: ctx.realmName,
    body: html`<h1>${t('noOrganizationHeader')}</h1>
<p>${t('noOrganizationMessage', ctx.clientName)}</p>
${returnControl(ctx.deny, ctx.clientName)}`,
  });
}

export function errorPage(ctx: { realmName: string; title: Text; description: Text }): string {
  return page({
    title: ctx.title,
    realmName: ctx.realmName,
    body: html`<h1>${ctx.title}</h1>
<p class="error" role="alert">${ctx.description}</p>
<p class="muted">${t('errorPageHint')}</p>`,
  });
}

/** The way back to the client with the error: a link, or for form_post a form the user submits. */
function returnControl(deny: ClientResponse | undefined, clientName: string): SafeHtml | string {
  if (!deny) return '';
  if (deny.mode !== 'form_post') return html`<div class="actions"><a href="${deny.location}">${t('returnToApplication', clientName)}</a></div>`;
  return html`<form method="post" action="${deny.action}">
${Object.entries(deny.fields).map(([k, v]) => html`<input type="hidden" name="${k}" value="${v}">`)}
<div class="actions"><button type="submit">${t('returnToApplication', clientName)}</button></div>
</form>`;
}
