import type { Organization, Scope } from '../storage/types.js';
import { html, type SafeHtml } from './html.js';
import type { ClientResponse } from '../oauth/authorize/checks.js';
import { page } from './layout.js';
import { otherMethodForm, passkeyForm } from './webauthn-pages.js';
import { WEBAUTHN_SCRIPT_PATH } from './scripts.js';

/** The realm's password rule as a form shows it before the user types (src/admin/password-policy.ts passwordRule). */
export interface PasswordRule {
  min: number;
  max: number;
  text: string;
}

/**
 * A new password and its confirmation, with the realm's rule said before the user types (the
 * update-password page and a mailed link's page); the username hidden for password managers.
 */
export function newPasswordFields(username: string, rule: PasswordRule, o: { registration?: boolean } = {}): SafeHtml {
  // Registration: the username is a field of its own form, and there is no current password yet.
  return html`${o.registration ? '' : html`<input type="text" name="username" value="${username}" autocomplete="username" readonly hidden>
`}<label for="password-new">${o.registration ? 'Password' : 'New password'}</label>
<input type="password" id="password-new" name="password-new" autocomplete="new-password" minlength="${rule.min}" maxlength="${rule.max}" aria-describedby="password-rule" required${o.registration ? '' : html` autofocus`}>
<label for="password-confirm">${o.registration ? 'Confirm password' : 'Confirm new password'}</label>
<input type="password" id="password-confirm" name="password-confirm" autocomplete="new-password" minlength="${rule.min}" maxlength="${rule.max}" required>
<p class="muted" id="password-rule">${rule.text}${o.registration ? '' : ' Not your current password.'}</p>`;
}

export interface PageContext {
  realmName: string;
  clientName: string;
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
export function loginLabel(realm: { loginWithEmailAllowed: boolean; registrationEmailAsUsername?: boolean }): string {
  if (realm.registrationEmailAsUsername === true) return 'Email';
  return realm.loginWithEmailAllowed ? 'Username or email' : 'Username';
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
export function loginPage(ctx: PageContext & { error?: string; username?: string; providers?: readonly LoginProvider[]; brokerAction?: string; emailRouting?: boolean; forgotPassword?: string; usernameLabel?: string; rememberMe?: boolean; remembered?: boolean; register?: string; passkey?: { action: string; options: Record<string, unknown> } }): string {
  const providers = ctx.providers ?? [];
  return page({
    title: 'Sign in',
    realmName: ctx.realmName,
    ...(ctx.passkey ? { script: WEBAUTHN_SCRIPT_PATH } : {}),
    body: html`<h1>Sign in to continue to ${ctx.clientName}</h1>
${ctx.error ? html`<p class="error" role="alert">${ctx.error}</p>` : ''}
<form method="post" action="${ctx.action}">
<input type="hidden" name="csrf" value="${ctx.csrf}">
<label for="username">${ctx.usernameLabel ?? 'Username'}</label>
<input type="text" id="username" name="username" value="${ctx.username ?? ''}" autocomplete="username" autocapitalize="none" spellcheck="false" required ${ctx.username ? '' : html`autofocus`}>
<label for="password">Password</label>
<input type="password" id="password" name="password" autocomplete="current-password"${ctx.emailRouting ? html` aria-describedby="password-note"` : html` required`} ${ctx.username ? html`autofocus` : ''}>
${ctx.emailRouting ? html`<p class="muted" id="password-note">Signing in with your organization's account? Your email is enough: you continue at its sign-in page.</p>` : ''}
${ctx.rememberMe ? html`<label class="check"><input type="checkbox" id="rememberMe" name="rememberMe" value="on"${ctx.remembered ? html` checked` : ''}> Remember me</label>` : ''}
<div class="actions">${ctx.forgotPassword ? html`<a href="${ctx.forgotPassword}" class="forgot">Forgot password?</a>` : ''}<button type="submit">Sign in</button></div>
</form>
${ctx.passkey ? passkeyForm({ action: ctx.passkey.action, csrf: ctx.csrf, options: ctx.passkey.options }) : ''}
${ctx.register ? html`<p class="register">New user? <a href="${ctx.register}">Register</a></p>` : ''}
${providers.length > 0 && ctx.brokerAction
  ? html`<form method="post" action="${ctx.brokerAction}" class="providers">
<input type="hidden" name="csrf" value="${ctx.csrf}">
<p class="or"><span>or sign in with</span></p>
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
export function linkAccountPage(ctx: PageContext & { username: string; provider: string; by: 'email' | 'username'; passwordless: boolean; error?: string }): string {
  const what = ctx.by === 'email' ? 'the same email address' : 'the same username';
  return page({
    title: 'Link your account',
    realmName: ctx.realmName,
    body: html`<h1>Link your ${ctx.provider} account</h1>
<p>An account with ${what} as your ${ctx.provider} account already exists here: <strong>${ctx.username}</strong>.</p>
${ctx.error ? html`<p class="error" role="alert">${ctx.error}</p>` : ''}
${ctx.passwordless
  ? html`<p>That account has no password to confirm it with. Sign in the way you usually do, or ask an administrator to link your ${ctx.provider} account.</p>
<form method="post" action="${ctx.action}">
<input type="hidden" name="csrf" value="${ctx.csrf}">
<div class="actions"><button type="submit" name="cancel" value="1">Back to sign in</button></div>
</form>`
  : html`<p>If it is yours, enter its password to link the two. From then on you can sign in with ${ctx.provider}.</p>
<form method="post" action="${ctx.action}">
<input type="hidden" name="csrf" value="${ctx.csrf}">
<input type="text" name="username" value="${ctx.username}" autocomplete="username" readonly hidden>
<label for="password">Password of ${ctx.username}</label>
<input type="password" id="password" name="password" autocomplete="current-password" required autofocus>
<div class="actions"><button type="submit">Link and sign in</button><button type="submit" name="cancel" value="1" class="secondary" formnovalidate>Cancel</button></div>
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
export function updatePasswordPage(ctx: PageContext & { username: string; error?: string; proof?: string; cancellable?: boolean; rule: PasswordRule; expired?: boolean }): string {
  return page({
    title: 'Update password',
    realmName: ctx.realmName,
    body: html`<h1>Choose a new password</h1>
${ctx.cancellable
  ? html`<p>${ctx.clientName} asks you to choose a new password for <strong>${ctx.username}</strong>. Your other sessions will be signed out.</p>`
  : ctx.expired
    ? html`<p>The password of <strong>${ctx.username}</strong> has expired: choose a new one before you continue to ${ctx.clientName}.</p>`
    : html`<p>The password of <strong>${ctx.username}</strong> was set by an administrator and must be changed before you continue to ${ctx.clientName}.</p>`}
${ctx.error ? html`<p class="error" role="alert">${ctx.error}</p>` : ''}
<form method="post" action="${ctx.action}">
<input type="hidden" name="csrf" value="${ctx.csrf}">
${ctx.proof ? html`<input type="hidden" name="proof" value="${ctx.proof}">` : ''}
${newPasswordFields(ctx.username, ctx.rule)}
<div class="actions"><button type="submit">Update password</button>${ctx.cancellable ? html`<button type="submit" name="cancel" value="1" class="secondary" formnovalidate>Cancel</button>` : ''}</div>
</form>`,
  });
}

/**
 * The second step of a sign-in for a user with an authenticator app: its current code (RFC 6238). The
 * field takes what phones offer (autocomplete one-time-code, a numeric keypad). `proof`: the account
 * page's signed proof that the password was right.
 */
export function otpPage(ctx: PageContext & { username: string; error?: string; proof?: string; otherMethod?: string }): string {
  return page({
    title: 'Authenticator code',
    realmName: ctx.realmName,
    body: html`<h1>Enter your authenticator code</h1>
<p>Open the authenticator app on your phone and enter the code it shows for <strong>${ctx.username}</strong> to continue to ${ctx.clientName}.</p>
${ctx.error ? html`<p class="error" role="alert">${ctx.error}</p>` : ''}
<form method="post" action="${ctx.action}">
<input type="hidden" name="csrf" value="${ctx.csrf}">
${ctx.proof ? html`<input type="hidden" name="proof" value="${ctx.proof}">` : ''}
<label for="otp">One-time code</label>
<input type="text" id="otp" name="otp" inputmode="numeric" pattern="[0-9 ]*" maxlength="10" autocomplete="one-time-code" required autofocus>
<div class="actions"><button type="submit">Sign in</button></div>
</form>
<details><summary>Lost your phone? Use a recovery code</summary>
<form method="post" action="${ctx.action}">
<input type="hidden" name="csrf" value="${ctx.csrf}">
${ctx.proof ? html`<input type="hidden" name="proof" value="${ctx.proof}">` : ''}
<label for="recovery">Recovery code</label>
<input type="text" id="recovery" name="otp" maxlength="32" autocomplete="off" autocapitalize="none" spellcheck="false" required>
<p class="muted">One of the codes you saved when you set up your authenticator app. Each works once.</p>
<div class="actions"><button type="submit" class="secondary">Sign in with a recovery code</button></div>
</form>
</details>
${ctx.otherMethod ? otherMethodForm({ action: ctx.otherMethod, csrf: ctx.csrf, method: 'webauthn', proof: ctx.proof }) : ''}`,
  });
}

/**
 * Keycloak's CONFIGURE_TOTP required action: set up an authenticator app by scanning the QR code (or
 * typing the key), then prove it with a first code. `proof`: as on the other account-page forms.
 */
export function configureOtpPage(ctx: PageContext & { username: string; qr: SafeHtml; key: string; error?: string; proof?: string; cancellable?: boolean }): string {
  const grouped = ctx.key.replace(/(.{4})/g, '$1 ').trim();
  return page({
    title: 'Set up an authenticator',
    realmName: ctx.realmName,
    body: html`<h1>Set up an authenticator app</h1>
<p>Signing in as <strong>${ctx.username}</strong> will also ask for a code from an app on your phone.</p>
${ctx.error ? html`<p class="error" role="alert">${ctx.error}</p>` : ''}
<ol class="steps">
<li>Install an authenticator app: FreeOTP, Google Authenticator, Microsoft Authenticator, Aegis or your password manager.</li>
<li>Scan this code with the app:
<div class="qr-box">${ctx.qr}</div>
<details><summary>Cannot scan it? Type the key instead</summary>
<p class="key"><code id="otp-key">${grouped}</code></p>
<p class="muted">Time-based, SHA-1, 6 digits, every 30 seconds.</p>
</details></li>
<li>Enter the code the app shows, to finish.</li>
</ol>
<form method="post" action="${ctx.action}">
<input type="hidden" name="csrf" value="${ctx.csrf}">
${ctx.proof ? html`<input type="hidden" name="proof" value="${ctx.proof}">` : ''}
<label for="otp">One-time code</label>
<input type="text" id="otp" name="otp" inputmode="numeric" pattern="[0-9 ]*" maxlength="10" autocomplete="one-time-code" required autofocus>
<label for="label">Device name <span class="muted">(optional)</span></label>
<input type="text" id="label" name="label" maxlength="255" autocomplete="off">
<div class="actions"><button type="submit">Finish setup</button>${ctx.cancellable ? html`<button type="submit" name="cancel" value="1" class="secondary" formnovalidate>Cancel</button>` : ''}</div>
</form>`,
  });
}

/** `resources`: RFC 8707 2.1, the services the authorization request names (the grant is bound to them). */
export function consentPage(ctx: PageContext & { scopes: Scope[]; resources?: readonly string[] }): string {
  const resources = ctx.resources ?? [];
  return page({
    title: 'Allow access',
    realmName: ctx.realmName,
    body: html`<h1>${ctx.clientName} wants to access your account</h1>
<p>If you allow it, ${ctx.clientName} will be able to:</p>
<ul class="permissions">
${ctx.scopes.map((s) => html`<li>${s.consentText}<span class="scope">${s.name}</span></li>`)}
</ul>
${resources.length > 0 ? html`<p>Only on ${resources.length === 1 ? 'this service' : 'these services'}:</p>
<ul class="resources">
${resources.map((r) => html`<li>${r}</li>`)}
</ul>` : ''}
<form method="post" action="${ctx.action}">
<input type="hidden" name="csrf" value="${ctx.csrf}">
<p class="muted">You can withdraw this access at any time.</p>
<div class="actions">
<button type="submit" name="decision" value="deny" class="secondary">Deny</button>
<button type="submit" name="decision" value="allow">Allow</button>
</div>
</form>`,
  });
}

export function organizationPage(ctx: PageContext & { organizations: Organization[]; error?: string }): string {
  const single = ctx.organizations.length === 1;
  return page({
    title: 'Choose an organization',
    realmName: ctx.realmName,
    body: html`<h1>Choose the organization ${ctx.clientName} will work with</h1>
${ctx.error ? html`<p class="error" role="alert">${ctx.error}</p>` : ''}
<form method="post" action="${ctx.action}">
<input type="hidden" name="csrf" value="${ctx.csrf}">
<fieldset>
<legend>Organization</legend>
${ctx.organizations.map(
  (o, i) => html`<label class="choice" for="org-${i}"><input type="radio" id="org-${i}" name="organization" value="${o.alias}" ${single ? html`checked` : ''} required> ${o.name}</label>`,
)}
</fieldset>
<div class="actions"><button type="submit">Continue</button></div>
</form>`,
  });
}

export function deviceDonePage(ctx: { realmName: string; clientName: string; approved: boolean }): string {
  return page({
    title: ctx.approved ? 'Device connected' : 'Device not connected',
    realmName: ctx.realmName,
    body: ctx.approved
      ? html`<h1>Your device is connected</h1>
<p>${ctx.clientName} now has the access you allowed. You can close this window and go back to your device.</p>`
      : html`<h1>Your device was not connected</h1>
<p class="error" role="alert">${ctx.clientName} did not get access: the request was denied or has expired.</p>
<p class="muted">To try again, start the sign-in on your device once more.</p>`,
  });
}

export function noOrganizationPage(ctx: { realmName: string; clientName: string; deny: ClientResponse | undefined }): string {
  return page({
    title: 'No organization',
    realmName: ctx.realmName,
    body: html`<h1>Your account has no organization</h1>
<p>${ctx.clientName} works on behalf of an organization, and your account is not a member of any. Ask your administrator to add you to one, then try again.</p>
${returnControl(ctx.deny, ctx.clientName)}`,
  });
}

export function errorPage(ctx: { realmName: string; title: string; description: string }): string {
  return page({
    title: ctx.title,
    realmName: ctx.realmName,
    body: html`<h1>${ctx.title}</h1>
<p class="error" role="alert">${ctx.description}</p>
<p class="muted">Go back to the application you came from and start again. If this keeps happening, contact its support.</p>`,
  });
}

/** The way back to the client with the error: a link, or for form_post a form the user submits. */
function returnControl(deny: ClientResponse | undefined, clientName: string): SafeHtml | string {
  if (!deny) return '';
  if (deny.mode !== 'form_post') return html`<div class="actions"><a href="${deny.location}">Return to ${clientName}</a></div>`;
  return html`<form method="post" action="${deny.action}">
${Object.entries(deny.fields).map(([k, v]) => html`<input type="hidden" name="${k}" value="${v}">`)}
<div class="actions"><button type="submit">Return to ${clientName}</button></div>
</form>`;
}
