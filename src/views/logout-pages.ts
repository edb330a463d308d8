import { html } from './html.js';
import { page } from './layout.js';

export function logoutConfirmPage(ctx: { realmName: string; clientName: string | undefined; action: string; csrf: string; fields: Record<string, string | undefined> }): string {
  return page({
    title: 'Sign out',
    realmName: ctx.realmName,
    body: html`<h1>Do you want to sign out?</h1>
<p>${ctx.clientName ? html`${ctx.clientName} asks to sign you out of ${ctx.realmName}.` : html`You are about to sign out of ${ctx.realmName}.`}</p>
<form method="post" action="${ctx.action}">
<input type="hidden" name="csrf" value="${ctx.csrf}">
${Object.entries(ctx.fields).map(([k, v]) => (v === undefined ? '' : html`<input type="hidden" name="${k}" value="${v}">`))}
<div class="actions"><button type="submit">Sign out</button></div>
</form>`,
  });
}

export function loggedOutPage(ctx: { realmName: string }): string {
  return page({
    title: 'Signed out',
    realmName: ctx.realmName,
    body: html`<h1>You are signed out</h1>
<p>You can close this window.</p>`,
  });
}
