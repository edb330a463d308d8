import { html, type SafeHtml } from './html.js';
import { page } from './layout.js';
import type { PageContext } from './pages.js';

/** The form's values: as the user has them, or as typed when the form comes back with errors. */
export interface ProfileValues {
  email: string;
  firstName: string;
  lastName: string;
}

/**
 * Keycloak's UPDATE_PROFILE required action (login-update-profile.ftl): the email and names, prefilled.
 * `readOnly`: a user of an LDAP directory, whose fields come from it (shown, not editable).
 * `cancellable`: asked for by the client (kc_action), which learns of a cancel.
 * `hidden`: fields posted back with the form: the mailed link's `key` (execute-actions-email), the
 * account page's `proof` of the password typed.
 */
export function updateProfilePage(ctx: PageContext & { username: string; values: ProfileValues; errors?: readonly string[]; cancellable?: boolean; readOnly?: boolean; hidden?: Readonly<Record<string, string>> }): string {
  const v = ctx.values;
  const errors = ctx.errors ?? [];
  const ro = ctx.readOnly ? html` readonly` : '';
  return page({
    title: 'Update your profile',
    realmName: ctx.realmName,
    body: html`<h1>Update your profile</h1>
${ctx.readOnly
  ? html`<p>The profile of <strong>${ctx.username}</strong> comes from your organization's user directory (LDAP): check it and continue to ${ctx.clientName}. Changes are made in the directory.</p>`
  : ctx.cancellable
    ? html`<p>${ctx.clientName} asks you to review the profile of <strong>${ctx.username}</strong>.</p>`
    : html`<p>Check the profile of <strong>${ctx.username}</strong> before you continue to ${ctx.clientName}.</p>`}
${errors.length > 0 ? html`<div class="error" role="alert">${errors.length === 1 ? html`<p>${errors[0]}</p>` : html`<ul>${errors.map((e) => html`<li>${e}</li>`)}</ul>`}</div>` : ''}
<form method="post" action="${ctx.action}">
<input type="hidden" name="csrf" value="${ctx.csrf}">
${hiddenFields(ctx.hidden)}
<label for="email">Email</label>
<input type="email" id="email" name="email" value="${v.email}" autocomplete="email" autocapitalize="none" spellcheck="false" maxlength="320" required${ro}${ctx.readOnly ? '' : html` autofocus`}>
<label for="firstName">First name</label>
<input type="text" id="firstName" name="firstName" value="${v.firstName}" autocomplete="given-name" maxlength="255" required${ro}>
<label for="lastName">Last name</label>
<input type="text" id="lastName" name="lastName" value="${v.lastName}" autocomplete="family-name" maxlength="255" required${ro}>
<div class="actions"><button type="submit">${ctx.readOnly ? 'Continue' : 'Submit'}</button>${ctx.cancellable ? html`<button type="submit" name="cancel" value="1" class="secondary" formnovalidate>Cancel</button>` : ''}</div>
</form>`,
  });
}

/** Hidden inputs, escaped. */
const hiddenFields = (fields: Readonly<Record<string, string>> = {}): SafeHtml => html`${Object.entries(fields).map(([name, value]) => html`<input type="hidden" name="${name}" value="${value}">`)}`;

/** Plain text as paragraphs (a blank line between them) and line breaks, every character escaped. */
function paragraphs(text: string): SafeHtml {
  const paras = text.replace(/\r\n?/g, '\n').split(/\n\s*\n/).map((p) => p.trim()).filter((p) => p !== '');
  return html`${paras.map((p) => html`<p>${p.split('\n').map((line, i) => html`${i > 0 ? html`<br>` : ''}${line}`)}</p>`)}`;
}

/** Keycloak's TERMS_AND_CONDITIONS required action (terms.ftl): the realm's terms, Accept or Decline. */
export function termsPage(ctx: PageContext & { username: string; text: string; hidden?: Readonly<Record<string, string>> }): string {
  return page({
    title: 'Terms and conditions',
    realmName: ctx.realmName,
    body: html`<h1>Terms and conditions</h1>
<p>Read and accept the terms to continue to ${ctx.clientName} as <strong>${ctx.username}</strong>.</p>
<div class="terms" tabindex="0" aria-label="Terms and conditions">${paragraphs(ctx.text)}</div>
<form method="post" action="${ctx.action}">
<input type="hidden" name="csrf" value="${ctx.csrf}">
${hiddenFields(ctx.hidden)}
<div class="actions"><button type="submit" name="accept" value="1">Accept</button><button type="submit" name="cancel" value="1" class="secondary">Decline</button></div>
</form>`,
  });
}
