import { html } from './html.js';
import { page } from './layout.js';
import { t, type Text } from '../i18n/translator.js';

export function deviceEntryPage(ctx: { realmName: string; action: string; csrf: string; userCode?: string; error?: Text }): string {
  const confirming = ctx.userCode !== undefined && !ctx.error;
  return page({
    title: t('oauth2DeviceVerificationTitle'),
    realmName: ctx.realmName,
    body: html`<h1>${confirming ? t('deviceConfirmCodeTitle') : t('verifyOAuth2DeviceUserCode')}</h1>
${ctx.error ? html`<p class="error" role="alert">${ctx.error}</p>` : ''}
${confirming ? html`<p>${t('deviceConfirmCodeHint')}</p>` : ''}
<form method="post" action="${ctx.action}">
<input type="hidden" name="csrf" value="${ctx.csrf}">
<label for="user_code">${t('deviceCodeLabel')}</label>
<input type="text" id="user_code" name="user_code" class="code" value="${ctx.userCode ?? ''}" placeholder="XXXX-XXXX" autocomplete="off" autocapitalize="characters" spellcheck="false" required autofocus>
<div class="actions"><button type="submit">${t('deviceContinue')}</button></div>
</form>`,
  });
}
