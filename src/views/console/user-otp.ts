import { html, type SafeHtml } from '../html.js';
import type { OtpSummary, WebAuthnSummary } from '../../admin/operations/user-credentials.js';
import { coseAlgorithmName } from '../../crypto/cose-key.js';
import { actionForm, csrfField } from './layout.js';
import { REQUIRED_ACTIONS, type RequiredAction } from '../../storage/types.js';
import { REQUIRED_ACTION_NAMES } from '../../admin/required-actions.js';
import { visible } from './group-pages.js';

/**
 * A user's authenticator apps (TOTP): each with its label, when it was set up and its settings, and a
 * Remove button; and whether the user must set one up at the next sign-in (Keycloak's CONFIGURE_TOTP),
 * with the button that switches it (manage-users). Never a key.
 */
export function userOtpSection(o: { csrf: string; base: string; otp: OtpSummary[]; setupRequired: boolean; canManage: boolean; when: (seconds: number) => string }): SafeHtml {
  const items = o.otp.map(
    (c) =>
      html`<li class="session"><span>${c.label !== null ? visible(c.label) : html`<span class="muted">Unnamed authenticator</span>`}<span class="muted">Set up ${o.when(c.createdAt)} · ${c.algorithm}, ${String(c.digits)} digits, ${String(c.period)} s</span></span>${o.canManage ? actionForm(`${o.base}/otp/remove`, o.csrf, 'Remove', { secondary: true, fields: { credential: c.id } }) : ''}</li>`,
  );
  const setup = o.setupRequired
    ? 'Required: the user sets up an authenticator app at the next sign-in.'
    : 'Not required at the next sign-in.';
  return html`<h2>Authenticator apps</h2>
${o.otp.length === 0 ? html`<p class="muted">No authenticator app: the user signs in with their password alone.</p>` : html`<ul class="cards">${items}</ul>`}
<p>Setup: ${setup}</p>
${o.canManage
  ? html`<div class="row">${actionForm(`${o.base}/otp/setup`, o.csrf, o.setupRequired ? 'Stop requiring setup' : 'Require setup at next sign-in', { secondary: o.setupRequired, fields: { required: o.setupRequired ? 'off' : 'on' } })}</div>`
  : ''}`;
}

/**
 * A user's security keys (WebAuthn): each with its label, when it was added, its algorithm and counter,
 * and a Remove button; and whether the user must register one at the next sign-in (Keycloak's
 * webauthn-register), with the button that switches it (manage-users).
 */
export function userWebAuthnSection(o: { csrf: string; base: string; keys: WebAuthnSummary[]; setupRequired: boolean; canManage: boolean; when: (seconds: number) => string }): SafeHtml {
  const items = o.keys.map(
    (k) =>
      html`<li class="session"><span>${k.label !== null ? visible(k.label) : html`<span class="muted">Unnamed security key</span>`}${k.passwordless ? ' (passkey)' : ''}<span class="muted">Added ${o.when(k.createdAt)} · ${coseAlgorithmName(k.alg) ?? String(k.alg)}, counter ${String(k.signCount)}${k.transports.length > 0 ? `, ${k.transports.join(', ')}` : ''}</span></span>${o.canManage ? actionForm(`${o.base}/webauthn/remove`, o.csrf, 'Remove', { secondary: true, fields: { credential: k.id } }) : ''}</li>`,
  );
  return html`<h2>Security keys</h2>
${o.keys.length === 0 ? html`<p class="muted">No security key.</p>` : html`<ul class="cards">${items}</ul>`}
<p>Registration: ${o.setupRequired ? 'Required: the user registers a security key at the next sign-in.' : 'Not required at the next sign-in.'}</p>
${o.canManage
  ? html`<div class="row">${actionForm(`${o.base}/webauthn/setup`, o.csrf, o.setupRequired ? 'Stop requiring a security key' : 'Require a security key at next sign-in', { secondary: o.setupRequired, fields: { required: o.setupRequired ? 'off' : 'on' } })}</div>`
  : ''}`;
}

/**
 * The user's required actions (Keycloak's user page "Required user actions"): every action Realmgate acts
 * on with a checkbox, ticked when the user has it; saved as the complete list (manage-users).
 */
export function userRequiredActionsSection(o: { csrf: string; base: string; actions: readonly RequiredAction[]; canManage: boolean }): SafeHtml {
  if (!o.canManage) {
    return html`<h2>Required actions</h2><p>${o.actions.length === 0 ? 'None: the user signs in without further steps.' : o.actions.map((a) => REQUIRED_ACTION_NAMES[a]).join(', ')}</p>`;
  }
  const boxes = REQUIRED_ACTIONS.map(
    (a) => html`<label class="choice" for="ra-${a}"><input type="checkbox" id="ra-${a}" name="action" value="${a}"${o.actions.includes(a) ? html` checked` : ''}> ${REQUIRED_ACTION_NAMES[a]} <code>${a}</code></label>`,
  );
  return html`<h2>Required actions</h2>
<form method="post" action="${o.base}/required-actions" class="console-form">${csrfField(o.csrf)}
<fieldset><legend>Asked at the next sign-in (when enabled in the realm)</legend>${boxes}</fieldset>
<button type="submit">Save required actions</button></form>`;
}
