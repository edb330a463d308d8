import { html } from './html.js';
import { page } from './layout.js';
import { newPasswordFields, type PasswordRule } from './pages.js';
import { t, th, type Text } from '../i18n/translator.js';

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
  errors?: readonly Text[];
  /** An organization invitation's registration (src/http/interaction/invitation-routes.ts): its email is fixed. */
  invitation?: { organizationName: string; email: string; key: string };
}): string {
  const v = ctx.values ?? {};
  const errors = ctx.errors ?? [];
  return page({
    title: t('registerTitle'),
    realmName: ctx.realmName,
    body: html`<h1>${t('registerHeader')}</h1>
${ctx.invitation ? html`<p>${th('registerInvitedIntro', html`<strong>${ctx.invitation.organizationName}</strong>`)}</p>` : html`<p>${t('registerIntro', ctx.clientName)}</p>`}
${errors.length > 0 ? html`<div class="error" role="alert">${errors.length === 1 ? html`<p>${errors[0]}</p>` : html`<ul>${errors.map((e) => html`<li>${e}</li>`)}</ul>`}</div>` : ''}
<form method="post" action="${ctx.action}">
<input type="hidden" name="csrf" value="${ctx.csrf}">
${ctx.invitation ? html`<input type="hidden" name="key" value="${ctx.invitation.key}">
` : ''}${ctx.emailAsUsername
  ? ''
  : html`<label for="username">${t('username')}</label>
<input type="text" id="username" name="username" value="${v.username ?? ''}" autocomplete="username" autocapitalize="none" spellcheck="false" maxlength="255" required autofocus>
`}<label for="email">${t('email')}</label>
${ctx.invitation
  ? html`<input type="email" id="email" name="email" value="${ctx.invitation.email}" autocomplete="email" readonly aria-describedby="email-fixed">
<p id="email-fixed" class="muted">${t('registerInvitationEmailNote')}</p>`
  : html`<input type="email" id="email" name="email" value="${v.email ?? ''}" autocomplete="email" autocapitalize="none" spellcheck="false" maxlength="320" required${ctx.emailAsUsername ? html` autofocus` : ''}>`}
<label for="firstName">${t('firstName')}</label>
<input type="text" id="firstName" name="firstName" value="${v.firstName ?? ''}" autocomplete="given-name" maxlength="255" required>
<label for="lastName">${t('lastName')}</label>
<input type="text" id="lastName" name="lastName" value="${v.lastName ?? ''}" autocomplete="family-name" maxlength="255" required>
${newPasswordFields('', ctx.rule, { registration: true })}
<div class="actions">${ctx.invitation ? '' : html`<a href="${ctx.back}" class="back">${t('backToSignIn')}</a>`}<button type="submit">${t('doRegister')}</button></div>
</form>`,
  });
}

/**
 * Keycloak's VERIFY_EMAIL required action: a link was mailed to the address; following it goes on with
 * this sign-in. `email` null: the user has no address to verify, only an administrator can help.
 */
/** `resent`: the page of the button that mailed the link again. `clientName`: the application, or words standing for it. */
export function verifyEmailPage(ctx: { realmName: string; clientName: Text; action?: string; csrf: string; email: string | null; resent?: boolean; error?: Text }): string {
  const client = String(ctx.clientName);
  if (ctx.email === null) {
    return page({
      title: t('emailVerifyTitle'),
      realmName: ctx.realmName,
      body: html`<h1>${t('emailVerifyTitle')}</h1>
<p class="error" role="alert">${t('verifyEmailNoAddress', client)}</p>
<p>${t('verifyEmailNoAddressHint')}</p>`,
    });
  }
  return page({
    title: t('emailVerifyTitle'),
    realmName: ctx.realmName,
    body: html`<h1>${t('emailVerifyTitle')}</h1>
<p>${t('verifyEmailIntro', client)}</p>
${ctx.error ? html`<p class="error" role="alert">${ctx.error}</p>` : html`<p class="notice" role="status">${th(ctx.resent ? 'verifyEmailResent' : 'emailVerifyInstruction1', html`<strong>${ctx.email}</strong>`)}</p>`}
${ctx.action
  ? html`<p>${t('verifyEmailOpenLink')}</p>
<form method="post" action="${ctx.action}">
<input type="hidden" name="csrf" value="${ctx.csrf}">
<div class="actions"><button type="submit" class="secondary">${t('verifyEmailResend')}</button></div>
</form>`
  : html`<p>${t('verifyEmailOpenLinkSignIn')}</p>`}`,
  });
}

/**
 * A verify-email link opened outside the sign-in it came from (another browser, a mail app): a button,
 * so that a mail scanner fetching the link verifies nothing (Keycloak asks to confirm as well).
 */
export function confirmVerifyEmailPage(ctx: { realmName: string; action: string; csrf: string; token: string; email: string }): string {
  return page({
    title: t('emailVerifyTitle'),
    realmName: ctx.realmName,
    body: html`<h1>${t('emailVerifyTitle')}</h1>
<p>${th('confirmEmailAddressVerification', html`<strong>${ctx.email}</strong>`)}</p>
<form method="post" action="${ctx.action}">
<input type="hidden" name="csrf" value="${ctx.csrf}">
<input type="hidden" name="key" value="${ctx.token}">
<div class="actions"><button type="submit">${t('doConfirm')}</button></div>
</form>`,
  });
}

/** The end of a verify-email link used outside its sign-in. */
export function emailVerifiedPage(ctx: { realmName: string }): string {
  return page({
    title: t('emailVerifiedTitle'),
    realmName: ctx.realmName,
    body: html`<h1>${t('emailVerifiedMessage')}</h1>
<p class="notice" role="status">${t('emailVerifiedThanks')}</p>
<p class="muted">${t('emailVerifiedHint')}</p>`,
  });
}
