import { html } from './html.js';
import { page } from './layout.js';
import { newPasswordFields, type PasswordRule } from './pages.js';

/**
 * The pages of a mailed link: "Forgot password?" (asks who), the same answer whoever was typed, the
 * new password a link lets the user choose, and the ends of a link used outside a sign-in.
 */
export function forgotPasswordPage(ctx: { realmName: string; clientName: string; action: string; csrf: string; back: string; error?: string }): string {
  return page({
    title: 'Forgot password',
    realmName: ctx.realmName,
    body: html`<h1>Forgot your password?</h1>
<p>Enter your username or email address. We will send you an email with a link to choose a new password.</p>
${ctx.error ? html`<p class="error" role="alert">${ctx.error}</p>` : ''}
<form method="post" action="${ctx.action}">
<input type="hidden" name="csrf" value="${ctx.csrf}">
<label for="username">Username or email</label>
<input type="text" id="username" name="username" autocomplete="username" autocapitalize="none" spellcheck="false" maxlength="320" required autofocus>
<div class="actions"><a href="${ctx.back}" class="back">Back to sign in</a><button type="submit">Send link</button></div>
</form>`,
  });
}

/** The same page whatever was typed: it says nothing about whether the account exists. */
export function resetMailSentPage(ctx: { realmName: string; back: string; lifespanMinutes: number }): string {
  return page({
    title: 'Check your email',
    realmName: ctx.realmName,
    body: html`<h1>Check your email</h1>
<p class="notice" role="status">If an account exists, you will receive an email with instructions.</p>
<p>The link in it works for ${ctx.lifespanMinutes} ${ctx.lifespanMinutes === 1 ? 'minute' : 'minutes'}, once. No email? Check your spam folder, or ask for a new link in a few minutes.</p>
<div class="actions"><a href="${ctx.back}">Back to sign in</a></div>`,
  });
}

/** The new password a mailed link lets the user choose. */
export function chooseNewPasswordPage(ctx: { realmName: string; username: string; action: string; csrf: string; token: string; rule: PasswordRule; error?: string }): string {
  return page({
    title: 'Choose a new password',
    realmName: ctx.realmName,
    body: html`<h1>Choose a new password</h1>
<p>Choose a new password for <strong>${ctx.username}</strong>. Your other sessions will be signed out.</p>
${ctx.error ? html`<p class="error" role="alert">${ctx.error}</p>` : ''}
<form method="post" action="${ctx.action}">
<input type="hidden" name="csrf" value="${ctx.csrf}">
<input type="hidden" name="key" value="${ctx.token}">
${newPasswordFields(ctx.username, ctx.rule)}
<div class="actions"><button type="submit">Save password</button></div>
</form>`,
  });
}

/** The end of a link used outside a sign-in (or whose sign-in is gone): what was done; where to go is the user's. */
export function accountUpdatedPage(ctx: { realmName: string; passwordOnly: boolean }): string {
  return page({
    title: ctx.passwordOnly ? 'Password updated' : 'Account updated',
    realmName: ctx.realmName,
    body: ctx.passwordOnly
      ? html`<h1>Your password has been updated</h1>
<p class="notice" role="status">You can now sign in with your new password.</p>
<p class="muted">Go back to the application you were using and sign in.</p>`
      : html`<h1>Your account has been updated</h1>
<p class="notice" role="status">Everything that was asked of you is done.</p>
<p class="muted">Go back to the application you were using and sign in.</p>`,
  });
}

/** A link that does not work (altered, expired, used, or its account changed): why, and what to do. */
export function linkRefusedPage(ctx: { realmName: string; title: string; description: string; hint?: string }): string {
  return page({
    title: ctx.title,
    realmName: ctx.realmName,
    body: html`<h1>${ctx.title}</h1>
<p class="error" role="alert">${ctx.description}</p>
<p class="muted">${ctx.hint ?? html`Ask for a new link: at the sign-in page choose &quot;Forgot password?&quot;, or ask your administrator to send one again.`}</p>`,
  });
}
