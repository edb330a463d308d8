import { html } from './html.js';
import { page } from './layout.js';

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
  return page({
    title: `Join ${ctx.organizationName}`,
    realmName: ctx.realmName,
    body: html`<h1>Join ${ctx.organizationName}</h1>
<p>You were invited to join the organization <strong>${ctx.organizationName}</strong>.</p>
${s.kind === 'accept'
  ? html`<p>You are signed in as <strong>${s.username}</strong>. Once you join, you can choose ${ctx.organizationName} when you sign in to its applications.</p>
<form method="post" action="${ctx.action}">
<input type="hidden" name="csrf" value="${ctx.csrf}">
<input type="hidden" name="key" value="${ctx.key}">
<div class="actions"><button type="submit">Join ${ctx.organizationName}</button></div>
</form>`
  : s.kind === 'sign-in'
    ? html`<p>Sign in to the account this invitation was sent to; you come back here to accept it.</p>
<div class="actions"><a class="button" href="${s.signIn}">Sign in</a></div>`
    : html`<p class="error" role="alert">This invitation is for another account. You are signed in as <strong>${s.username}</strong>.</p>
<p class="muted">Sign out on <a href="${s.account}">your account page</a>, then open the link from the email again.</p>`}`,
  });
}
