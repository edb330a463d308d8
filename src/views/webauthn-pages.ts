import { html } from './html.js';
import { page } from './layout.js';
import type { PageContext } from './pages.js';
import { WEBAUTHN_SCRIPT_PATH } from './scripts.js';

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
const NOSCRIPT = html`<noscript><p class="error">Security keys work only with JavaScript: turn it on for this site, then reload the page.</p></noscript>
<p class="error" id="webauthn-status" role="alert" hidden></p>`;

/** A form with a link-styled button: a user with an authenticator app and a security key switches (Keycloak's "Try another way"). */
export function otherMethodForm(ctx: { action: string; csrf: string; method: 'otp' | 'webauthn'; proof?: string | undefined }): ReturnType<typeof html> {
  return html`<form method="post" action="${ctx.action}" class="other-method">
<input type="hidden" name="csrf" value="${ctx.csrf}">
${ctx.proof ? html`<input type="hidden" name="proof" value="${ctx.proof}">` : ''}
<input type="hidden" name="method" value="${ctx.method}">
<button type="submit" class="link">Use another method</button>
</form>`;
}

export function webauthnPage(ctx: PageContext & { username: string; options: Record<string, unknown>; error?: string; proof?: string; otherMethod?: string }): string {
  return page({
    title: 'Security key',
    realmName: ctx.realmName,
    script: WEBAUTHN_SCRIPT_PATH,
    body: html`<h1>Use your security key</h1>
<p>Insert or touch the security key you registered for <strong>${ctx.username}</strong> (or use this device's screen lock, if you registered it) to continue to ${ctx.clientName}.</p>
${ctx.error ? html`<p class="error" role="alert">${ctx.error}</p>` : ''}
${NOSCRIPT}
<form method="post" action="${ctx.action}" data-webauthn="get" data-options="${JSON.stringify(ctx.options)}">
<input type="hidden" name="csrf" value="${ctx.csrf}">
${ctx.proof ? html`<input type="hidden" name="proof" value="${ctx.proof}">` : ''}
${ASSERTION_FIELDS}
<div class="actions"><button type="submit" id="webauthn-start" autofocus>Use security key</button></div>
</form>
${ctx.otherMethod ? otherMethodForm({ action: ctx.otherMethod, csrf: ctx.csrf, method: 'otp', proof: ctx.proof }) : ''}`,
  });
}

/** Keycloak's webauthn-register required action (and the account page's "Add a security key"). */
export function registerWebauthnPage(ctx: PageContext & { username: string; options: Record<string, unknown>; error?: string; proof?: string; cancel?: string; passwordless?: boolean }): string {
  const what = ctx.passwordless ? 'passkey' : 'security key';
  return page({
    title: `Register a ${what}`,
    realmName: ctx.realmName,
    script: WEBAUTHN_SCRIPT_PATH,
    body: html`<h1>Register a ${what}</h1>
${ctx.passwordless
  ? html`<p>A passkey lets <strong>${ctx.username}</strong> sign in without a password: a security key with a PIN, or this device's screen lock (fingerprint, face, PIN).</p>`
  : html`<p>Signing in as <strong>${ctx.username}</strong> will also ask for a security key: a USB, NFC or Bluetooth key, or this device's screen lock (fingerprint, face, PIN).</p>`}
${ctx.error ? html`<p class="error" role="alert">${ctx.error}</p>` : ''}
${NOSCRIPT}
<form method="post" action="${ctx.action}" data-webauthn="create" data-options="${JSON.stringify(ctx.options)}">
<input type="hidden" name="csrf" value="${ctx.csrf}">
${ctx.proof ? html`<input type="hidden" name="proof" value="${ctx.proof}">` : ''}
<input type="hidden" name="client_data_json" value="">
<input type="hidden" name="attestation_object" value="">
<input type="hidden" name="transports" value="">
<label for="label">Name of the key <span class="muted">(optional)</span></label>
<input type="text" id="label" name="label" maxlength="255" autocomplete="off" placeholder="e.g. Blue USB key">
<p class="muted">When you press Register, your browser asks you to insert or touch the key.</p>
<div class="actions">${ctx.cancel ? html`<a class="back" href="${ctx.cancel}">Cancel</a>` : ''}<button type="submit" id="webauthn-start">Register</button></div>
</form>`,
  });
}

/** The login page's "Sign in with a passkey" (Keycloak's webauthn-passwordless): no username, the key names the user. */
export function passkeyForm(ctx: { action: string; csrf: string; options: Record<string, unknown> }): ReturnType<typeof html> {
  return html`<form method="post" action="${ctx.action}" data-webauthn="get" data-options="${JSON.stringify(ctx.options)}" class="passkey">
<input type="hidden" name="csrf" value="${ctx.csrf}">
${ASSERTION_FIELDS}
<p class="or"><span>or</span></p>
<div class="actions"><button type="submit" class="secondary" id="webauthn-start">Sign in with a passkey</button></div>
</form>
<p class="error" id="webauthn-status" role="alert" hidden></p>`;
}
