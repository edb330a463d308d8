import { html } from './html.js';
import { page } from './layout.js';
import { newPasswordFields, type PasswordRule } from './pages.js';

/** What the registration form had typed (never the password): shown again with the errors. */
export interface RegistrationValues {
  username?: string;
  email?: string;
  firstName?: string;
  lastName?: string;
}

/**
 * Keycloak's registration page: username (absent when the email is the username), email, first and last
 * name, a password and its confirmation, the realm's password rule said before typing.
 */
export function registerPage(ctx: {
  realmName: string;
  clientName: string;
  action: string;
  csrf: string;
  back: string;
  emailAsUsername: boolean;
  rule: PasswordRule;
  values?: RegistrationValues;
  errors?: readonly string[];
  /** An organization invitation's registration (src/http/interaction/invitation-routes.ts): its email is fixed. */
  invitation?: { organizationName: string; email: string; key: string };
}): string {
  const v = ctx.values ?? {};
  const errors = ctx.errors ?? [];
  return page({
    title: 'Register',
    realmName: ctx.realmName,
    body: html`<h1>Create your account</h1>
${ctx.invitation ? html`<p>You were invited to join <strong>${ctx.invitation.organizationName}</strong>. Create your account to accept.</p>` : html`<p>Register to continue to ${ctx.clientName}.</p>`}
${errors.length > 0 ? html`<div class="error" role="alert">${errors.length === 1 ? html`<p>${errors[0]}</p>` : html`<ul>${errors.map((e) => html`<li>${e}</li>`)}</ul>`}</div>` : ''}
<form method="post" action="${ctx.action}">
<input type="hidden" name="csrf" value="${ctx.csrf}">
${ctx.invitation ? html`<input type="hidden" name="key" value="${ctx.invitation.key}">
` : ''}${ctx.emailAsUsername
  ? ''
  : html`<label for="username">Username</label>
<input type="text" id="username" name="username" value="${v.username ?? ''}" autocomplete="username" autocapitalize="none" spellcheck="false" maxlength="255" required autofocus>
`}<label for="email">Email</label>
${ctx.invitation
  ? html`<input type="email" id="email" name="email" value="${ctx.invitation.email}" autocomplete="email" readonly aria-describedby="email-fixed">
<p id="email-fixed" class="muted">The address the invitation was sent to.</p>`
  : html`<input type="email" id="email" name="email" value="${v.email ?? ''}" autocomplete="email" autocapitalize="none" spellcheck="false" maxlength="320" required${ctx.emailAsUsername ? html` autofocus` : ''}>`}
<label for="firstName">First name</label>
<input type="text" id="firstName" name="firstName" value="${v.firstName ?? ''}" autocomplete="given-name" maxlength="255" required>
<label for="lastName">Last name</label>
<input type="text" id="lastName" name="lastName" value="${v.lastName ?? ''}" autocomplete="family-name" maxlength="255" required>
${newPasswordFields('', ctx.rule, { registration: true })}
<div class="actions">${ctx.invitation ? '' : html`<a href="${ctx.back}" class="back">Back to sign in</a>`}<button type="submit">Register</button></div>
</form>`,
  });
}

/**
 * Keycloak's VERIFY_EMAIL required action: a link was mailed to the address; following it goes on with
 * this sign-in. `email` null: the user has no address to verify, only an administrator can help.
 */
export function verifyEmailPage(ctx: { realmName: string; clientName: string; action?: string; csrf: string; email: string | null; notice?: string; error?: string }): string {
  if (ctx.email === null) {
    return page({
      title: 'Verify your email',
      realmName: ctx.realmName,
      body: html`<h1>Verify your email</h1>
<p class="error" role="alert">Your account has no email address to verify, so you cannot continue to ${ctx.clientName}.</p>
<p>Contact your administrator: they can add your email address to your account, or verify it for you.</p>`,
    });
  }
  return page({
    title: 'Verify your email',
    realmName: ctx.realmName,
    body: html`<h1>Verify your email</h1>
<p>You need to verify your email address to continue to ${ctx.clientName}.</p>
${ctx.error ? html`<p class="error" role="alert">${ctx.error}</p>` : html`<p class="notice" role="status">${ctx.notice ?? 'An email with a link to verify your address has been sent to'} <strong>${ctx.email}</strong>.</p>`}
${ctx.action
  ? html`<p>Open the link in it to continue. No email? Check your spam folder, or have it sent again.</p>
<form method="post" action="${ctx.action}">
<input type="hidden" name="csrf" value="${ctx.csrf}">
<div class="actions"><button type="submit" class="secondary">Send the email again</button></div>
</form>`
  : html`<p>Open the link in it, then sign in again. No email? Check your spam folder; signing in again sends a new one.</p>`}`,
  });
}

/**
 * A verify-email link opened outside the sign-in it came from (another browser, a mail app): a button,
 * so that a mail scanner fetching the link verifies nothing (Keycloak asks to confirm as well).
 */
export function confirmVerifyEmailPage(ctx: { realmName: string; action: string; csrf: string; token: string; email: string }): string {
  return page({
    title: 'Verify your email',
    realmName: ctx.realmName,
    body: html`<h1>Verify your email</h1>
<p>Confirm that <strong>${ctx.email}</strong> is your email address.</p>
<form method="post" action="${ctx.action}">
<input type="hidden" name="csrf" value="${ctx.csrf}">
<input type="hidden" name="key" value="${ctx.token}">
<div class="actions"><button type="submit">Confirm</button></div>
</form>`,
  });
}

/** The end of a verify-email link used outside its sign-in. */
export function emailVerifiedPage(ctx: { realmName: string }): string {
  return page({
    title: 'Email verified',
    realmName: ctx.realmName,
    body: html`<h1>Your email address has been verified</h1>
<p class="notice" role="status">Thank you.</p>
<p class="muted">Go back to the application you were using, or to the window where you were signing in.</p>`,
  });
}
