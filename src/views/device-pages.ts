import { html } from './html.js';
import { page } from './layout.js';

export function deviceEntryPage(ctx: { realmName: string; action: string; csrf: string; userCode?: string; error?: string }): string {
  const confirming = ctx.userCode !== undefined && !ctx.error;
  return page({
    title: 'Connect a device',
    realmName: ctx.realmName,
    body: html`<h1>${confirming ? 'Confirm the code on your device' : 'Enter the code shown on your device'}</h1>
${ctx.error ? html`<p class="error" role="alert">${ctx.error}</p>` : ''}
${confirming ? html`<p>Check that your device shows exactly this code before you continue. If it does not, close this page.</p>` : ''}
<form method="post" action="${ctx.action}">
<input type="hidden" name="csrf" value="${ctx.csrf}">
<label for="user_code">Code</label>
<input type="text" id="user_code" name="user_code" class="code" value="${ctx.userCode ?? ''}" placeholder="XXXX-XXXX" autocomplete="off" autocapitalize="characters" spellcheck="false" required autofocus>
<div class="actions"><button type="submit">Continue</button></div>
</form>`,
  });
}
