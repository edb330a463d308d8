import { html, type SafeHtml } from './html.js';
import { page } from './layout.js';
import type { PageContext } from './pages.js';
import { t, th, type Text } from '../i18n/translator.js';
import { DEFAULT_TERMS_TEXT } from '../admin/required-actions.js';

/** The form's values: as the user has them, or as typed when the form comes back with errors. */
export interface ProfileValues {
  email: string;
  firstName: string;
  lastName: string;
}

/**
 * Keycloak's UPDATE_PROFILE required action (login-update-profile.ftl): the email and names, prefilled.
 * `readOnly`: a user of an LDAP directory, whose fields come from it (shown, not editable).
 * `cancellable`: asked for by the client (kc_action), which learns of a cancel; on the review page (`review`), back to the login page.
 * `hidden`: fields posted back with the form: the mailed link's `key` (execute-actions-email), the
 * account page's `proof` of the password typed.
 */
export function updateProfilePage(ctx: PageContext & { username: string; values: ProfileValues; errors?: readonly Text[]; cancellable?: boolean; readOnly?: boolean; hidden?: Readonly<Record<string, string>>; review?: { provider: string; complete?: boolean } }): string {
  const v = ctx.values;
  const errors = ctx.errors ?? [];
  const ro = ctx.readOnly ? html` readonly` : '';
  const user = html`<strong>${ctx.username}</strong>`;
  const client = String(ctx.clientName);
  // Keycloak's first broker login "Review Profile": the same form, before the user exists.
  const title = ctx.review ? t('reviewProfileTitle') : t('loginProfileTitle');
  return page({
    title,
    realmName: ctx.realmName,
    body: html`<h1>${title}</h1>
${ctx.review
  ? html`<p>${th(ctx.review.complete ? 'reviewProfileCheckIntro' : 'reviewProfileIntro', html`<strong>${ctx.review.provider}</strong>`, client)}</p>`
  : ctx.readOnly
  ? html`<p>${th('updateProfileReadOnly', user, client)}</p>`
  : ctx.cancellable
    ? html`<p>${th('updateProfileAsked', client, user)}</p>`
    : html`<p>${th('updateProfileIntro', user, client)}</p>`}
${errors.length > 0 ? html`<div class="error" role="alert">${errors.length === 1 ? html`<p>${errors[0]}</p>` : html`<ul>${errors.map((e) => html`<li>${e}</li>`)}</ul>`}</div>` : ''}
<form method="post" action="${ctx.action}">
<input type="hidden" name="csrf" value="${ctx.csrf}">
${hiddenFields(ctx.hidden)}
<label for="email">${t('email')}</label>
<input type="email" id="email" name="email" value="${v.email}" autocomplete="email" autocapitalize="none" spellcheck="false" maxlength="320" required${ro}${ctx.readOnly ? '' : html` autofocus`}>
<label for="firstName">${t('firstName')}</label>
<input type="text" id="firstName" name="firstName" value="${v.firstName}" autocomplete="given-name" maxlength="255" required${ro}>
<label for="lastName">${t('lastName')}</label>
<input type="text" id="lastName" name="lastName" value="${v.lastName}" autocomplete="family-name" maxlength="255" required${ro}>
<div class="actions"><button type="submit">${t(ctx.readOnly ? 'doContinue' : 'doSubmit')}</button>${ctx.cancellable ? html`<button type="submit" name="cancel" value="1" class="secondary" formnovalidate>${t('doCancel')}</button>` : ''}</div>
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

/**
 * Keycloak's TERMS_AND_CONDITIONS required action (terms.ftl): the realm's terms, Accept or Decline. The
 * realm's own terms as written; Realmgate's placeholder for none in the page's language (termsPlainText).
 */
export function termsPage(ctx: PageContext & { username: string; text: string; hidden?: Readonly<Record<string, string>> }): string {
  return page({
    title: t('termsTitle'),
    realmName: ctx.realmName,
    body: html`<h1>${t('termsTitle')}</h1>
<p>${th('termsIntro', String(ctx.clientName), html`<strong>${ctx.username}</strong>`)}</p>
<div class="terms" tabindex="0" aria-label="${t('termsTitle')}">${paragraphs(ctx.text === DEFAULT_TERMS_TEXT ? t('termsPlainText') : ctx.text)}</div>
<form method="post" action="${ctx.action}">
<input type="hidden" name="csrf" value="${ctx.csrf}">
${hiddenFields(ctx.hidden)}
<div class="actions"><button type="submit" name="accept" value="1">${t('doAccept')}</button><button type="submit" name="cancel" value="1" class="secondary">${t('doDecline')}</button></div>
</form>`,
  });
}

/**
 * Keycloak's delete_account required action (delete-account-confirm.ftl): what deleting means, and the
 * button that does it. `cancellable`: asked for by the client (kc_action), which learns of a cancel; the
 * required action set by an administrator has no way around it, as in Keycloak. `error`: a refusal (a
 * user of an LDAP directory).
 */
export function deleteAccountPage(ctx: PageContext & { username: string; cancellable?: boolean; error?: Text; hidden?: Readonly<Record<string, string>> }): string {
  const user = html`<strong>${ctx.username}</strong>`;
  return page({
    title: t('deleteAccountTitle'),
    realmName: ctx.realmName,
    body: html`<h1>${t('deleteAccountTitle')}</h1>
${ctx.error ? html`<div class="error" role="alert"><p>${ctx.error}</p></div>` : ''}
<p>${ctx.cancellable ? th('deleteAccountAsked', String(ctx.clientName), user) : th('deleteAccountIntro', user)}</p>
<p>${t('deleteAccountImplies')}</p>
<ul><li>${t('deleteAccountErases')}</li><li>${t('deleteAccountSignsOut')}</li><li>${t('deleteAccountEnds')}</li></ul>
<form method="post" action="${ctx.action}">
<input type="hidden" name="csrf" value="${ctx.csrf}">
${hiddenFields(ctx.hidden)}
<div class="actions"><button type="submit" name="confirm" value="1" class="danger">${t('doConfirmDelete')}</button>${ctx.cancellable ? html`<button type="submit" name="cancel" value="1" class="secondary">${t('doCancel')}</button>` : ''}</div>
</form>`,
  });
}

/** After delete_account: the account is gone and every session with it (Keycloak's "userDeletedSuccessfully" info page). */
export function accountDeletedPage(ctx: { realmName: string }): string {
  return page({
    title: t('accountDeletedTitle'),
    realmName: ctx.realmName,
    body: html`<h1>${t('accountDeletedTitle')}</h1>
<p class="notice" role="status">${t('accountDeletedMessage')}</p>`,
  });
}

/**
 * Keycloak's idp_link (link-idp-action.ftl), asked for by the client: Continue goes to the provider to
 * sign in there, whose account is then linked to this user; Cancel goes back (kc_action_status=cancelled).
 */
export function idpLinkPage(ctx: PageContext & { username: string; provider: string }): string {
  return page({
    title: t('idpLinkTitle'),
    realmName: ctx.realmName,
    body: html`<h1>${t('idpLinkTitle')}</h1>
<p id="kc-link-text">${th('idpLinkIntro', String(ctx.clientName), html`<strong>${ctx.username}</strong>`, html`<strong>${ctx.provider}</strong>`)}</p>
<p class="muted">${t('idpLinkNext', ctx.provider)}</p>
<form method="post" action="${ctx.action}">
<input type="hidden" name="csrf" value="${ctx.csrf}">
<div class="actions"><button type="submit" name="continue" value="1">${t('doContinue')}</button><button type="submit" name="cancel" value="1" class="secondary">${t('doCancel')}</button></div>
</form>`,
  });
}

/**
 * Keycloak's delete_credential (delete-credential.ftl), asked for by the client: Delete removes the
 * credential (`name`: its label, or what it is), Cancel goes back (kc_action_status=cancelled). The
 * password cannot be deleted (`removable` false): the page says so and offers Cancel only.
 */
export function deleteCredentialPage(ctx: PageContext & { username: string; name: string; removable: boolean; error?: Text }): string {
  return page({
    title: t('deleteCredentialTitle', ctx.name),
    realmName: ctx.realmName,
    body: html`<h1>${t('deleteCredentialTitle', ctx.name)}</h1>
${ctx.error ? html`<div class="error" role="alert"><p>${ctx.error}</p></div>` : ''}
<p>${th('deleteCredentialAsked', String(ctx.clientName), html`<strong>${ctx.name}</strong>`, html`<strong>${ctx.username}</strong>`)}</p>
${ctx.removable ? html`<p>${t('deleteCredentialMessage', ctx.name)}</p>` : html`<p class="error" role="alert">${t('deleteCredentialPassword')}</p>`}
<form method="post" action="${ctx.action}">
<input type="hidden" name="csrf" value="${ctx.csrf}">
<div class="actions">${ctx.removable ? html`<button type="submit" name="confirm" value="1" class="danger">${t('deleteCredentialConfirm')}</button>` : ''}<button type="submit" name="cancel" value="1" class="secondary">${t('doCancel')}</button></div>
</form>`,
  });
}
