import { html } from './html.js';
import { page } from './layout.js';
import { newPasswordFields, type PasswordRule } from './pages.js';
import { t, th, type Text } from '../i18n/translator.js';

/**
 * The pages of a mailed link: "Forgot password?" (asks who), the same answer whoever was typed, the
 * new password a link lets the user choose, and the ends of a link used outside a sign-in.
 */
export function forgotPasswordPage(ctx: { realmName: string; clientName: string; action: string; csrf: string; back: string; error?: Text }): string {
  return page({
    title: t('forgotPasswordTitle'),
    realmName: ctx.realmName,
    body: html`<h1>${t('emailForgotTitle')}</h1>
<p>${t('emailInstruction')}</p>
${ctx.error ? html`<p class="error" role="alert">${ctx.error}</p>` : ''}
<form method="post" action="${ctx.action}">
<input type="hidden" name="csrf" value="${ctx.csrf}">
<label for="username">${t('usernameOrEmail')}</label>
<input type="text" id="username" name="username" autocomplete="username" autocapitalize="none" spellcheck="false" maxlength="320" required autofocus>
<div class="actions"><a href="${ctx.back}" class="back">${t('backToSignIn')}</a><button type="submit">${t('doSendLink')}</button></div>
</form>`,
  });
}

/** The same page whatever was typed: it says nothing about whether the account exists. */
export function resetMailSentPage(ctx: { realmName: string; back: string; lifespanMinutes: number }): string {
  return page({
    title: t('checkEmailTitle'),
    realmName: ctx.realmName,
    body: html`<h1>${t('checkEmailTitle')}</h1>
<p class="notice" role="status">${t('resetEmailSentMessage')}</p>
<p>${t(ctx.lifespanMinutes === 1 ? 'resetLinkLifespanMinute' : 'resetLinkLifespanMinutes', ctx.lifespanMinutes)}</p>
<div class="actions"><a href="${ctx.back}">${t('backToSignIn')}</a></div>`,
  });
}

/** The new password a mailed link lets the user choose. */
export function chooseNewPasswordPage(ctx: { realmName: string; username: string; action: string; csrf: string; token: string; rule: PasswordRule; error?: Text }): string {
  return page({
    title: t('chooseNewPasswordTitle'),
    realmName: ctx.realmName,
    body: html`<h1>${t('chooseNewPasswordTitle')}</h1>
<p>${th('chooseNewPasswordIntro', html`<strong>${ctx.username}</strong>`)}</p>
${ctx.error ? html`<p class="error" role="alert">${ctx.error}</p>` : ''}
<form method="post" action="${ctx.action}">
<input type="hidden" name="csrf" value="${ctx.csrf}">
<input type="hidden" name="key" value="${ctx.token}">
${newPasswordFields(ctx.username, ctx.rule)}
<div class="actions"><button type="submit">${t('doSavePassword')}</button></div>
</form>`,
  });
}

/** The end of a link used outside a sign-in (or whose sign-in is gone): what was done; where to go is the user's. */
export function accountUpdatedPage(ctx: { realmName: string; passwordOnly: boolean }): string {
  return page({
    title: t(ctx.passwordOnly ? 'passwordUpdatedTitle' : 'accountUpdatedTitle'),
    realmName: ctx.realmName,
    body: ctx.passwordOnly
      ? html`<h1>${t('accountPasswordUpdatedMessage')}</h1>
<p class="notice" role="status">${t('passwordUpdatedNotice')}</p>
<p class="muted">${t('backToApplicationSignIn')}</p>`
      : html`<h1>${t('accountUpdatedMessage')}</h1>
<p class="notice" role="status">${t('accountUpdatedNotice')}</p>
<p class="muted">${t('backToApplicationSignIn')}</p>`,
  });
}

/** A link that does not work (altered, expired, used, or its account changed): why, and what to do. */
export function linkRefusedPage(ctx: { realmName: string; title: Text; description: Text; hint?: Text }): string {
  return page({
    title: ctx.title,
    realmName: ctx.realmName,
    body: html`<h1>${ctx.title}</h1>
<p class="error" role="alert">${ctx.description}</p>
<p class="muted">${ctx.hint ?? th('linkRefusedHint')}</p>`,
  });
}
