import { html, SafeHtml } from './html.js';
import { page } from './layout.js';
import { FRONTCHANNEL_SCRIPT } from '../oidc/frontchannel-logout.js';
import { t } from '../i18n/translator.js';

export function logoutConfirmPage(ctx: { realmName: string; clientName: string | undefined; action: string; csrf: string; fields: Record<string, string | undefined> }): string {
  return page({
    title: t('logoutConfirmTitle'),
    realmName: ctx.realmName,
    body: html`<h1>${t('logoutConfirmHeader')}</h1>
<p>${ctx.clientName ? t('logoutConfirmClient', ctx.clientName, ctx.realmName) : t('logoutConfirmRealm', ctx.realmName)}</p>
<form method="post" action="${ctx.action}">
<input type="hidden" name="csrf" value="${ctx.csrf}">
${Object.entries(ctx.fields).map(([k, v]) => (v === undefined ? '' : html`<input type="hidden" name="${k}" value="${v}">`))}
<div class="actions"><button type="submit">${t('doLogout')}</button></div>
</form>`,
  });
}

export function loggedOutPage(ctx: { realmName: string }): string {
  return page({
    title: t('loggedOutTitle'),
    realmName: ctx.realmName,
    body: html`<h1>${t('successLogout')}</h1>
<p>${t('logoutCloseWindow')}</p>`,
  });
}

/**
 * Front-Channel Logout 1.0, 2: the session has ended; each client that took part in it and registered a
 * front-channel logout URL is loaded in an invisible iframe. With a `next` (the post-logout redirect
 * URI with its state, or the account page) the page moves on by itself once the frames have loaded or
 * after a short timeout (FRONTCHANNEL_SCRIPT), and offers a Continue link for browsers without
 * JavaScript; without one it is the signed-out page. Every URL is escaped by the template.
 */
export function frontchannelLogoutPage(ctx: { realmName: string; frames: ReadonlyArray<{ clientName: string; src: string }>; next?: string }): string {
  return page({
    title: t('frontchannel-logout.title'),
    realmName: ctx.realmName,
    body: html`<h1>${ctx.next !== undefined ? t('frontchannelLogoutHeading') : t('successLogout')}</h1>
<p>${ctx.next !== undefined ? t('frontchannelLogoutSignedOutHere') : t('frontchannel-logout.message')}</p>
<ul class="logout-clients">
${ctx.frames.map((f) => html`<li>${f.clientName}</li>`)}
</ul>
${ctx.frames.map((f) => html`<iframe class="logout-frame" src="${f.src}" title="${t('frontchannelLogoutFrameTitle', f.clientName)}" tabindex="-1" aria-hidden="true"></iframe>`)}
${
  ctx.next !== undefined
    ? html`<p class="muted">${t('frontchannelLogoutMovingOn')}</p>
<div class="actions"><a class="button" id="continue" href="${ctx.next}">${t('frontchannelLogoutContinue')}</a></div>
<script>${new SafeHtml(FRONTCHANNEL_SCRIPT)}</script>`
    : html`<p class="muted">${t('logoutCloseWindow')}</p>`
}`,
  });
}
