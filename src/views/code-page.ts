import { html } from './html.js';
import { page } from './layout.js';

export const CODE_SCRIPT_PATH = '/auth/resources/code-page.js';

/**
 * The code display page's script: the Copy button and the countdown. Served from our own origin so
 * the CSP can keep script-src 'self'; the page works without it (the code is selectable).
 */
export const CODE_SCRIPT = `(() => {
  const field = document.getElementById('code');
  const button = document.getElementById('copy');
  const status = document.getElementById('copy-status');
  const countdown = document.getElementById('countdown');
  const seconds = document.getElementById('seconds');
  const expired = document.getElementById('expired');
  if (button && field) {
    button.hidden = false;
    button.addEventListener('click', async () => {
      field.select();
      let ok = false;
      try { await navigator.clipboard.writeText(field.value); ok = true; }
      catch { try { ok = document.execCommand('copy'); } catch { ok = false; } }
      status.textContent = ok ? 'Copied.' : 'Select the code and copy it with your keyboard.';
    });
  }
  if (countdown && seconds && expired) {
    const end = performance.now() + Number(countdown.dataset.secondsLeft) * 1000;
    const tick = () => {
      const left = Math.max(0, Math.ceil((end - performance.now()) / 1000));
      seconds.textContent = String(left);
      if (left > 0) { setTimeout(tick, 250); return; }
      countdown.hidden = true;
      expired.hidden = false;
      if (field) field.disabled = true;
      if (button) button.disabled = true;
    };
    tick();
  }
})();
`;

const ERROR_WORDS: Record<string, string> = {
  access_denied: 'Access was denied, so no code was issued.',
  invalid_scope: 'The application asked for permissions that are not available to it.',
  invalid_request: 'The application sent a request this server could not accept.',
  unsupported_response_type: 'The application sent a request this server could not accept.',
  unauthorized_client: 'The application is not allowed to make this request.',
  server_error: 'The server could not complete the sign-in. Please try again later.',
  temporarily_unavailable: 'The server is busy. Please try again in a moment.',
};

export function codeDisplayPage(ctx: { code: string; clientName: string; realmName: string; secondsLeft: number }): string {
  const live = ctx.secondsLeft > 0;
  return page({
    title: 'Authorization code',
    realmName: ctx.realmName,
    script: CODE_SCRIPT_PATH,
    body: html`<h1>${live ? html`Copy this code into ${ctx.clientName}` : 'This code can no longer be used'}</h1>
${live ? html`<p>${ctx.clientName} asked for access to your account. Paste this code where it asks for it.</p>
<div class="code-row">
<label class="visually-hidden" for="code">Authorization code</label>
<textarea id="code" class="code" readonly rows="1" spellcheck="false" autocomplete="off">${ctx.code}</textarea>
<button type="button" id="copy" hidden>Copy</button>
</div>
<p id="copy-status" class="muted" role="status" aria-live="polite"></p>
<p id="countdown" data-seconds-left="${ctx.secondsLeft}">The code works once and expires in <strong id="seconds">${ctx.secondsLeft}</strong> seconds.</p>` : ''}
<div id="expired" class="error" role="alert" ${live ? html`hidden` : ''}><p><strong>This code has expired or was already used.</strong></p>
<p>Go back to ${ctx.clientName} and start the sign-in again to get a new code.</p></div>`,
  });
}

export function codeErrorPage(ctx: { error: string | undefined; description: string | undefined }): string {
  // Own keys only: `error=constructor` would otherwise show Object's members (their source) as the words.
  const words = (ctx.error !== undefined && Object.hasOwn(ERROR_WORDS, ctx.error) ? ERROR_WORDS[ctx.error] : undefined) ?? 'The sign-in did not complete.';
  return page({
    title: 'Sign-in not completed',
    realmName: 'Realmgate',
    body: html`<h1>No code was issued</h1>
<p class="error" role="alert">${words}</p>
${ctx.description ? html`<p class="muted">Details: ${ctx.description}</p>` : ''}
<p>Go back to the application and start again.</p>`,
  });
}
