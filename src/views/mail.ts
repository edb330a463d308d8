import { html, type SafeHtml } from './html.js';
import type { RequiredAction } from '../storage/types.js';
import { currentTranslator, t, th } from '../i18n/translator.js';

/**
 * The mails Realmgate sends: a text part and an HTML part saying the same. Every value in the HTML goes
 * through the escaping tag (a realm's display name, a username and the link included); the text part
 * has no markup to inject into. ASCII only (scripts/bundle.mjs). The words are those of the current
 * translator (src/i18n/translator.ts withTranslator; src/mail/locale.ts chooses the recipient's language).
 */
export interface MailContent {
  subject: string;
  text: string;
  html: string;
}

const ACTION_WORDS = {
  UPDATE_PASSWORD: 'requiredAction.UPDATE_PASSWORD',
  CONFIGURE_TOTP: 'requiredAction.CONFIGURE_TOTP',
  'webauthn-register': 'requiredAction.webauthn-register',
  'webauthn-register-passwordless': 'requiredAction.webauthn-register-passwordless',
  TERMS_AND_CONDITIONS: 'requiredAction.TERMS_AND_CONDITIONS',
  UPDATE_PROFILE: 'requiredAction.UPDATE_PROFILE',
  VERIFY_EMAIL: 'requiredAction.VERIFY_EMAIL',
} as const satisfies Record<Exclude<RequiredAction, 'delete_account' | 'idp_link' | 'delete_credential'>, string>;

function minutes(seconds: number): string {
  if (seconds < 120) return t('mailSeconds', seconds);
  if (seconds < 7200) return t('mailMinutes', Math.round(seconds / 60));
  return t('mailHours', Math.round(seconds / 3600));
}

function htmlMail(title: string, body: ReturnType<typeof html>): string {
  return html`<!doctype html>
<html lang="${currentTranslator().locale}"><head><meta charset="utf-8"><title>${title}</title></head>
<body style="font-family: sans-serif; line-height: 1.5; color: #1a1a1a;">
${body}
</body></html>`.value;
}

/** A link and how long it works: "Choose a new password (within 30 minutes)." */
function linkWithin(link: string, words: string, lifespan: number): SafeHtml {
  return th('mailLinkWithin', html`<a href="${link}">${words}</a>`, minutes(lifespan));
}

function copyLink(link: string): SafeHtml {
  return html`<p>${t('mailCopyLink')}<br>${link}</p>`;
}

export function resetPasswordMail(o: { realmName: string; username: string; link: string; lifespan: number }): MailContent {
  const subject = t('passwordResetSubject', o.realmName);
  const text = `${t('passwordResetRequested', o.realmName, o.username)}

${t('passwordResetOpenLink', minutes(o.lifespan))}

${o.link}

${t('passwordResetIgnore')}
`;
  const body = html`<p>${th('passwordResetRequested', o.realmName, html`<strong>${o.username}</strong>`)}</p>
<p>${linkWithin(o.link, t('passwordResetLinkText'), o.lifespan)}</p>
${copyLink(o.link)}
<p>${t('passwordResetIgnore')}</p>`;
  return { subject, text, html: htmlMail(subject, body) };
}

export function executeActionsMail(o: { realmName: string; username: string; link: string; lifespan: number; actions: readonly RequiredAction[] }): MailContent {
  const subject = t('executeActionsSubject', o.realmName);
  // delete_account, idp_link and delete_credential are never mailed (src/admin/operations/action-emails.ts).
  const list = o.actions.flatMap((a) => (a === 'delete_account' || a === 'idp_link' || a === 'delete_credential' ? [] : [t(ACTION_WORDS[a])]));
  const text = `${t('executeActionsRequested', o.realmName, o.username)}

${list.map((l) => `- ${l}`).join('\n')}

${t('executeActionsOpenLink', minutes(o.lifespan))}

${o.link}

${t('executeActionsIgnore')}
`;
  const body = html`<p>${th('executeActionsRequested', o.realmName, html`<strong>${o.username}</strong>`)}</p>
<ul>${list.map((l) => html`<li>${l}</li>`)}</ul>
<p>${linkWithin(o.link, t('executeActionsLinkText'), o.lifespan)}</p>
${copyLink(o.link)}
<p>${t('executeActionsIgnore')}</p>`;
  return { subject, text, html: htmlMail(subject, body) };
}

/** Keycloak's verify-email mail: a link proving the address is the user's (sign-in, registration, or an administrator's send-verify-email). */
export function verifyEmailMail(o: { realmName: string; username: string; email: string; link: string; lifespan: number }): MailContent {
  const subject = t('emailVerificationSubject', o.realmName);
  const text = `${t('emailVerificationRequested', o.realmName, o.username, o.email)}

${t('emailVerificationOpenLink', minutes(o.lifespan))}

${o.link}

${t('emailVerificationIgnore')}
`;
  const body = html`<p>${th('emailVerificationRequested', o.realmName, html`<strong>${o.username}</strong>`, o.email)}</p>
<p>${th('emailVerificationIfYou', html`<a href="${o.link}">${t('emailVerificationLinkText')}</a>`, minutes(o.lifespan))}</p>
${copyLink(o.link)}
<p>${t('emailVerificationIgnore')}</p>`;
  return { subject, text, html: htmlMail(subject, body) };
}

/**
 * Keycloak's org-invite mail: an invitation into an organization, the link (to accept as an existing user,
 * or to register) and how long it lasts.
 */
export function organizationInviteMail(o: { realmName: string; organizationName: string; link: string; lifespan: number; firstName?: string | null; register: boolean }): MailContent {
  const subject = t('orgInviteSubject', o.organizationName);
  const greeting = o.firstName ? t('mailGreetingName', o.firstName) : t('mailGreeting');
  const text = `${greeting}

${t('orgInviteInvited', o.organizationName, o.realmName)} ${t(o.register ? 'orgInviteOpenLinkRegister' : 'orgInviteOpenLinkJoin', minutes(o.lifespan))}

${o.link}

${t('orgInviteIgnore')}
`;
  const body = html`<p>${greeting}</p>
<p>${th('orgInviteInvited', html`<strong>${o.organizationName}</strong>`, o.realmName)}</p>
<p>${linkWithin(o.link, t(o.register ? 'orgInviteRegisterLinkText' : 'orgInviteJoinLinkText'), o.lifespan)}</p>
${copyLink(o.link)}
<p>${t('orgInviteIgnore')}</p>`;
  return { subject, text, html: htmlMail(subject, body) };
}

export function testMail(o: { realmName: string }): MailContent {
  const subject = t('emailTestSubject', o.realmName);
  const text = `${t('emailTestBody', o.realmName)}\n`;
  return { subject, text, html: htmlMail(subject, html`<p>${t('emailTestBody', o.realmName)}</p>`) };
}
