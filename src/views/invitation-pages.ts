import { html } from './html.js';
import { page } from './layout.js';
import { t, th } from '../i18n/translator.js';

/**
 * An invitation into an organization, opened by the existing user it was sent to: a button to join (a
 * mail scanner fetching the link joins nothing); without a session, a way to sign in first; signed in as
 * someone else, a refusal.
 */
export function invitationPage(ctx: {
  realmName: string;
  organizationName: string;
  action: string;
  csrf: string;
  key: string;
  state: { kind: 'accept'; username: string } | { kind: 'sign-in'; signIn: string } | { kind: 'other-user'; username: string; account: string };
}): string {
  const s = ctx.state;
  const title = t('invitationTitle', ctx.organizationName);
  return page({
    title,
    realmName: ctx.realmName,
    body: html`<h1>${title}</h1>
<p>${th('invitationIntro', html`<strong>${ctx.organizationName}</strong>`)}</p>
${s.kind === 'accept'
  ? html`<p>${th('invitationSignedInAs', html`<strong>${s.username}</strong>`, ctx.organizationName)}</p>
<form method="post" action="${ctx.action}">
<input type="hidden" name="csrf" value="${ctx.csrf}">
<input type="hidden" name="key" value="${ctx.key}">
<div class="actions"><button type="submit">${t('doJoin', ctx.organizationName)}</button></div>
</form>`
  : s.kind === 'sign-in'
    ? html`<p>${t('invitationSignInFirst')}</p>
<div class="actions"><a class="button" href="${s.signIn}">${t('doLogIn')}</a></div>`
    : html`<p class="error" role="alert">${th('invitationOtherAccount', html`<strong>${s.username}</strong>`)}</p>
<p class="muted">${th('invitationSignOutHint', html`<a href="${s.account}">${t('invitationAccountPage')}</a>`)}</p>`}`,
  });
}
