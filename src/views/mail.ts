import { html } from './html.js';
import type { RequiredAction } from '../storage/types.js';

/**
 * The mails Realmgate sends: a text part and an HTML part saying the same. Every value in the HTML goes
 * through the escaping tag (a realm's display name, a username and the link included); the text part
 * has no markup to inject into. ASCII only (scripts/bundle.mjs).
 */
export interface MailContent {
  subject: string;
  text: string;
  html: string;
}

const ACTION_WORDS: Record<RequiredAction, string> = { UPDATE_PASSWORD: 'Update your password', CONFIGURE_TOTP: 'Set up an authenticator app', 'webauthn-register': 'Register a security key', 'webauthn-register-passwordless': 'Register a passkey', TERMS_AND_CONDITIONS: 'Accept the terms and conditions', UPDATE_PROFILE: 'Update your profile', VERIFY_EMAIL: 'Verify your email address' };

function minutes(seconds: number): string {
  if (seconds < 120) return `${seconds} seconds`;
  if (seconds < 7200) return `${Math.round(seconds / 60)} minutes`;
  return `${Math.round(seconds / 3600)} hours`;
}

function htmlMail(title: string, body: ReturnType<typeof html>): string {
  return html`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>${title}</title></head>
<body style="font-family: sans-serif; line-height: 1.5; color: #1a1a1a;">
${body}
</body></html>`.value;
}

export function resetPasswordMail(o: { realmName: string; username: string; link: string; lifespan: number }): MailContent {
  const subject = `Reset your ${o.realmName} password`;
  const text = `Someone asked to reset the password of your ${o.realmName} account ${o.username}.

To choose a new password, open this link within ${minutes(o.lifespan)}:

${o.link}

If you did not ask for this, ignore this mail: your password stays as it is.
`;
  const body = html`<p>Someone asked to reset the password of your ${o.realmName} account <strong>${o.username}</strong>.</p>
<p><a href="${o.link}">Choose a new password</a> (within ${minutes(o.lifespan)}).</p>
<p>If the link does not open, copy this address into your browser:<br>${o.link}</p>
<p>If you did not ask for this, ignore this mail: your password stays as it is.</p>`;
  return { subject, text, html: htmlMail(subject, body) };
}

export function executeActionsMail(o: { realmName: string; username: string; link: string; lifespan: number; actions: readonly RequiredAction[] }): MailContent {
  const subject = `Update your ${o.realmName} account`;
  const list = o.actions.map((a) => ACTION_WORDS[a]);
  const text = `An administrator of ${o.realmName} asks you to update your account ${o.username}:

${list.map((l) => `- ${l}`).join('\n')}

Open this link within ${minutes(o.lifespan)} to do so:

${o.link}

If you do not know why you received this, ignore it.
`;
  const body = html`<p>An administrator of ${o.realmName} asks you to update your account <strong>${o.username}</strong>:</p>
<ul>${list.map((l) => html`<li>${l}</li>`)}</ul>
<p><a href="${o.link}">Update your account</a> (within ${minutes(o.lifespan)}).</p>
<p>If the link does not open, copy this address into your browser:<br>${o.link}</p>
<p>If you do not know why you received this, ignore it.</p>`;
  return { subject, text, html: htmlMail(subject, body) };
}

/** Keycloak's verify-email mail: a link proving the address is the user's (sign-in, registration, or an administrator's send-verify-email). */
export function verifyEmailMail(o: { realmName: string; username: string; email: string; link: string; lifespan: number }): MailContent {
  const subject = `Verify your ${o.realmName} email address`;
  const text = `Someone created or signed in to the ${o.realmName} account ${o.username} with this email address (${o.email}).

If it was you, open this link within ${minutes(o.lifespan)} to verify the address:

${o.link}

If you did not, ignore this mail.
`;
  const body = html`<p>Someone created or signed in to the ${o.realmName} account <strong>${o.username}</strong> with this email address (${o.email}).</p>
<p>If it was you, <a href="${o.link}">verify the address</a> (within ${minutes(o.lifespan)}).</p>
<p>If the link does not open, copy this address into your browser:<br>${o.link}</p>
<p>If you did not, ignore this mail.</p>`;
  return { subject, text, html: htmlMail(subject, body) };
}

/**
 * Keycloak's org-invite mail: an invitation into an organization, the link (to accept as an existing user,
 * or to register) and how long it lasts.
 */
export function organizationInviteMail(o: { realmName: string; organizationName: string; link: string; lifespan: number; firstName?: string | null; register: boolean }): MailContent {
  const subject = `Invitation to join the ${o.organizationName} organization`;
  const greeting = o.firstName ? `Hello ${o.firstName},` : 'Hello,';
  const what = o.register ? 'create your account and join' : 'join';
  const text = `${greeting}

You were invited to join the ${o.organizationName} organization at ${o.realmName}. Open this link within ${minutes(o.lifespan)} to ${what}:

${o.link}

If you do not want to join, ignore this mail.
`;
  const body = html`<p>${greeting}</p>
<p>You were invited to join the <strong>${o.organizationName}</strong> organization at ${o.realmName}.</p>
<p><a href="${o.link}">${o.register ? 'Create your account and join' : 'Join the organization'}</a> (within ${minutes(o.lifespan)}).</p>
<p>If the link does not open, copy this address into your browser:<br>${o.link}</p>
<p>If you do not want to join, ignore this mail.</p>`;
  return { subject, text, html: htmlMail(subject, body) };
}

export function testMail(o: { realmName: string }): MailContent {
  const subject = `[${o.realmName}] Test message`;
  const text = `This is a test message from ${o.realmName}: its SMTP settings work.\n`;
  return { subject, text, html: htmlMail(subject, html`<p>This is a test message from ${o.realmName}: its SMTP settings work.</p>`) };
}
