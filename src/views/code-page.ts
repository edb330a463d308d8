import { html, type SafeHtml } from './html.js';
import { page } from './layout.js';
import { t, th, type Text } from '../i18n/translator.js';
import type { MessageKey } from '../i18n/catalog.js';
import app from '../i18n/messages/app.js';

export const CODE_SCRIPT_PATH = '/auth/resources/code-page.js';

/**
 * The code display page's script: the Copy button and the countdown. Served from our own origin so
 * the CSP can keep script-src 'self'; the page works without it (the code is selectable). Its words come
 * from the page (data-copied, data-copy-failed) when they are not the English ones it holds.
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
      status.textContent = ok ? status.dataset.copied || 'Copied.' : status.dataset.copyFailed || 'Select the code and copy it with your keyboard.';
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

const ERROR_WORDS: Record<string, MessageKey> = {
  access_denied: 'codeErrorAccessDenied',
  invalid_scope: 'codeErrorInvalidScope',
  invalid_request: 'codeErrorInvalidRequest',
  unsupported_response_type: 'codeErrorInvalidRequest',
  unauthorized_client: 'codeErrorUnauthorizedClient',
  server_error: 'codeErrorServerError',
  temporarily_unavailable: 'codeErrorTemporarilyUnavailable',
};

/**
 * The script's words when they are not the English ones it holds (another language, or a realm's own
 * texts); nothing otherwise.
 */
function scriptWords(): SafeHtml | string {
  const copied = t('codeCopied');
  const failed = t('codeCopyFailed');
  if (copied === app.en.codeCopied && failed === app.en.codeCopyFailed) return '';
  return html` data-copied="${copied}" data-copy-failed="${failed}"`;
}

export function codeDisplayPage(ctx: { code: string; clientName: Text; realmName: string; secondsLeft: number }): string {
  const live = ctx.secondsLeft > 0;
  const clientName = String(ctx.clientName);
  return page({
    title: t('codeSuccessTitle'),
    realmName: ctx.realmName,
    script: CODE_SCRIPT_PATH,
    body: html`<h1>${live ? t('codeCopyInto', clientName) : t('codeNoLongerUsable')}</h1>
${live ? html`<p>${t('codeAskedForAccess', clientName)}</p>
<div class="code-row">
<label class="visually-hidden" for="code">${t('codeSuccessTitle')}</label>
<textarea id="code" class="code" readonly rows="1" spellcheck="false" autocomplete="off">${ctx.code}</textarea>
<button type="button" id="copy" hidden>${t('codeCopy')}</button>
</div>
<p id="copy-status" class="muted" role="status" aria-live="polite"${scriptWords()}></p>
<p id="countdown" data-seconds-left="${ctx.secondsLeft}">${th('codeExpiresIn', html`<strong id="seconds">${ctx.secondsLeft}</strong>`)}</p>` : ''}
<div id="expired" class="error" role="alert" ${live ? html`hidden` : ''}><p><strong>${t('codeExpired')}</strong></p>
<p>${t('codeStartAgain', clientName)}</p></div>`,
  });
}

export function codeErrorPage(ctx: { error: string | undefined; description: string | undefined }): string {
  // Own keys only: `error=constructor` would otherwise show Object's members (their source) as the words.
  const words = (ctx.error !== undefined && Object.hasOwn(ERROR_WORDS, ctx.error) ? ERROR_WORDS[ctx.error] : undefined) ?? 'codeErrorOther';
  return page({
    title: t('codeErrorTitle'),
    realmName: 'Realmgate',
    body: html`<h1>${t('codeErrorHeading')}</h1>
<p class="error" role="alert">${t(words)}</p>
${ctx.description ? html`<p class="muted">${t('codeErrorDetails', ctx.description)}</p>` : ''}
<p>${t('codeErrorStartAgain')}</p>`,
  });
}
