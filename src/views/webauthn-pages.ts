import { html, type SafeHtml } from './html.js';
import { page } from './layout.js';
import type { PageContext } from './pages.js';
import { WEBAUTHN_SCRIPT_PATH } from './scripts.js';
import { t, th, type Text } from '../i18n/translator.js';

/**
 * The security key pages (WebAuthn): the sign-in step and the registration (Keycloak's
 * webauthn-register). The page's CSP allows only same-origin scripts: /auth/resources/webauthn.js reads
 * the options from the form's data-options attribute (escaped by the template as any attribute) and
 * posts the browser's response in the hidden fields, with the CSRF token.
 */

/** Where the script puts navigator.credentials.get()'s response (read by assertionFields in src/admin/operations/webauthn.ts). */
const ASSERTION_FIELDS = html`<input type="hidden" name="credential_id" value="">
<input type="hidden" name="client_data_json" value="">
<input type="hidden" name="authenticator_data" value="">
<input type="hidden" name="signature" value="">
<input type="hidden" name="user_handle" value="">`;
const noscript = (): SafeHtml => html`<noscript><p class="error">${t('webauthnNeedsJavaScript')}</p></noscript>
${statusLine()}`;

/**
 * Where webauthn.js says what the browser answered. Its words are English in the script; in another
 * language the page hands them over as data attributes (none in English, so the page stays as it was).
 */
function statusLine(): SafeHtml {
  const words = { unsupported: t('webauthnUnsupportedBrowser'), cancelled: t('webauthnCancelled'), failed: t('webauthnFailed') };
  const english = words.unsupported === 'This browser cannot use security keys.' && words.cancelled === 'The security key was not used (cancelled or timed out). Try again.' && words.failed === 'The security key could not be used. Try again.';
  return english
    ? html`<p class="error" id="webauthn-status" role="alert" hidden></p>`
    : html`<p class="error" id="webauthn-status" role="alert" hidden data-unsupported="${words.unsupported}" data-cancelled="${words.cancelled}" data-failed="${words.failed}"></p>`;
}

/** A form with a link-styled button: a user with an authenticator app and a security key switches (Keycloak's "Try another way"). */
export function otherMethodForm(ctx: { action: string; csrf: string; method: 'otp' | 'webauthn'; proof?: string | undefined }): ReturnType<typeof html> {
  return html`<form method="post" action="${ctx.action}" class="other-method">
<input type="hidden" name="csrf" value="${ctx.csrf}">
${ctx.proof ? html`<input type="hidden" name="proof" value="${ctx.proof}">` : ''}
<input type="hidden" name="method" value="${ctx.method}">
<button type="submit" class="link">${t('doTryAnotherWay')}</button>
</form>`;
}

export function webauthnPage(ctx: PageContext & { username: string; options: Record<string, unknown>; error?: Text; proof?: string; otherMethod?: string }): string {
  return page({
    title: t('webauthnTitle'),
    realmName: ctx.realmName,
    script: WEBAUTHN_SCRIPT_PATH,
    body: html`<h1>${t('webauthnHeader')}</h1>
<p>${th('webauthnIntro', html`<strong>${ctx.username}</strong>`, String(ctx.clientName))}</p>
${ctx.error ? html`<p class="error" role="alert">${ctx.error}</p>` : ''}
${noscript()}
<form method="post" action="${ctx.action}" data-webauthn="get" data-options="${JSON.stringify(ctx.options)}">
<input type="hidden" name="csrf" value="${ctx.csrf}">
${ctx.proof ? html`<input type="hidden" name="proof" value="${ctx.proof}">` : ''}
${ASSERTION_FIELDS}
<div class="actions"><button type="submit" id="webauthn-start" autofocus>${t('webauthnSubmit')}</button></div>
</form>
${ctx.otherMethod ? otherMethodForm({ action: ctx.otherMethod, csrf: ctx.csrf, method: 'otp', proof: ctx.proof }) : ''}`,
  });
}

/** Keycloak's webauthn-register required action (and the account page's "Add a security key"). */
export function registerWebauthnPage(ctx: PageContext & { username: string; options: Record<string, unknown>; error?: Text; proof?: string; cancel?: string; passwordless?: boolean }): string {
  const title = t(ctx.passwordless ? 'passkeyRegisterTitle' : 'webauthnRegisterTitle');
  return page({
    title,
    realmName: ctx.realmName,
    script: WEBAUTHN_SCRIPT_PATH,
    body: html`<h1>${title}</h1>
<p>${th(ctx.passwordless ? 'passkeyRegisterIntro' : 'webauthnRegisterIntro', html`<strong>${ctx.username}</strong>`)}</p>
${ctx.error ? html`<p class="error" role="alert">${ctx.error}</p>` : ''}
${noscript()}
<form method="post" action="${ctx.action}" data-webauthn="create" data-options="${JSON.stringify(ctx.options)}">
<input type="hidden" name="csrf" value="${ctx.csrf}">
${ctx.proof ? html`<input type="hidden" name="proof" value="${ctx.proof}">` : ''}
<input type="hidden" name="client_data_json" value="">
<input type="hidden" name="attestation_object" value="">
<input type="hidden" name="transports" value="">
<label for="label">${t('webauthnKeyName')} <span class="muted">${t('optionalField')}</span></label>
<input type="text" id="label" name="label" maxlength="255" autocomplete="off" placeholder="${t('webauthnKeyNamePlaceholder')}">
<p class="muted">${t('webauthnRegisterHint')}</p>
<div class="actions">${ctx.cancel ? html`<a class="back" href="${ctx.cancel}">${t('doCancel')}</a>` : ''}<button type="submit" id="webauthn-start">${t('doRegisterSecurityKey')}</button></div>
</form>`,
  });
}

/** The login page's "Sign in with a passkey" (Keycloak's webauthn-passwordless): no username, the key names the user. */
export function passkeyForm(ctx: { action: string; csrf: string; options: Record<string, unknown> }): ReturnType<typeof html> {
  return html`<form method="post" action="${ctx.action}" data-webauthn="get" data-options="${JSON.stringify(ctx.options)}" class="passkey">
<input type="hidden" name="csrf" value="${ctx.csrf}">
${ASSERTION_FIELDS}
<p class="or"><span>${t('loginOr')}</span></p>
<div class="actions"><button type="submit" class="secondary" id="webauthn-start">${t('passkey-doAuthenticate')}</button></div>
</form>
${statusLine()}`;
}
