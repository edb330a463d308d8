import { html } from './html.js';
import { page } from './layout.js';
import { FORM_POST_SCRIPT_PATH } from './scripts.js';
import { t } from '../i18n/translator.js';

/**
 * OAuth 2.0 Form Post Response Mode 2: an HTML form that posts the response parameters to the
 * redirect URI. Our CSP allows only same-origin scripts, so a script file submits it, and a button
 * does when scripts are off. Every value is escaped by the template.
 */
export function formPostPage(ctx: { realmName: string; clientName: string; action: string; fields: Record<string, string> }): string {
  return page({
    title: t('formPostTitle'),
    realmName: ctx.realmName,
    script: FORM_POST_SCRIPT_PATH,
    body: html`<h1>${t('formPostHeading', ctx.clientName)}</h1>
<form method="post" action="${ctx.action}" id="form-post">
${Object.entries(ctx.fields).map(([k, v]) => html`<input type="hidden" name="${k}" value="${v}">`)}
<p class="muted">${t('formPostByHand')}</p>
<div class="actions"><button type="submit">${t('formPostContinue', ctx.clientName)}</button></div>
</form>`,
  });
}
