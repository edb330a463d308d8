import type { Realm } from '../storage/types.js';
import type { Store } from '../storage/store.js';
import { openSmtpPassword } from '../crypto/smtp-secret.js';

/** A message to one recipient, with its text and HTML parts (the HTML built with the escaping tag). */
export interface Mail {
  to: string;
  subject: string;
  text: string;
  html: string;
}

/** Why a mail was not sent, in words safe for a log and an event (never the password). */
export class MailError extends Error {}

/**
 * A dead or silent SMTP server must cost a request seconds, not minutes (nodemailer waits 2 minutes for
 * a connection and 30 s for the greeting by default, 10 minutes on a stalled socket).
 */
export const SMTP_TIMEOUTS = { connectionTimeout: 5_000, greetingTimeout: 5_000, socketTimeout: 10_000, dnsTimeout: 5_000 } as const;

/** True when the realm can send mail (Keycloak's smtpServer with a host and a sender). */
export function canSendMail(realm: Pick<Realm, 'smtpServer'>): boolean {
  return Boolean(realm.smtpServer.host && realm.smtpServer.from);
}

type Nodemailer = typeof import('nodemailer');
let loaded: Promise<Nodemailer> | undefined;

/**
 * nodemailer is loaded at the first mail, never at start: most processes never send one, and idle memory
 * is a budget (scripts/bundle.mjs keeps it out of the bundle, as pg).
 */
function nodemailer(): Promise<Nodemailer> {
  loaded ??= import('nodemailer').then((m) => ((m as unknown as { default?: Nodemailer }).default ?? m));
  return loaded;
}

/**
 * Sends `mail` through the realm's SMTP server (`smtp` overrides its settings: the admin's test of
 * settings not saved yet). Rejects with a MailError saying why, with the server's reply code when there
 * is one; nodemailer's own error (which may quote the server) never leaves here.
 */
/** Whether two smtpServer maps name the same server (host and port): where a stored SMTP password may go. */
export const sameMailServer = (a: Record<string, string | undefined>, b: Record<string, string | undefined>): boolean =>
  (a.host ?? '').toLowerCase() === (b.host ?? '').toLowerCase() && (a.port ?? '') === (b.port ?? '');

export async function sendMail(store: Store, realm: Pick<Realm, 'id' | 'smtpServer' | 'smtpPassword'>, mail: Mail, smtp?: { server: Record<string, string>; password?: string }): Promise<void> {
  const m = smtp?.server ?? realm.smtpServer;
  if (!m.host || !m.from) throw new MailError('the realm has no SMTP server');
  const ssl = m.ssl === 'true';
  let pass: string | undefined = smtp?.password;
  if (m.auth === 'true' && pass === undefined && realm.smtpPassword !== null) {
    pass = await openSmtpPassword(store, realm.id, realm.smtpPassword);
    if (pass === undefined) throw new MailError('the stored SMTP password does not open (was the data key replaced?)');
  }
  const { createTransport } = await nodemailer();
  const transport = createTransport({
    host: m.host,
    port: m.port ? Number(m.port) : ssl ? 465 : 25,
    secure: ssl,
    requireTLS: m.starttls === 'true',
    ...(m.auth === 'true' ? { auth: { user: m.user ?? '', pass: pass ?? '' } } : {}),
    ...SMTP_TIMEOUTS,
    disableFileAccess: true,
    disableUrlAccess: true,
  });
  try {
    await transport.sendMail({
      from: m.fromDisplayName ? { name: m.fromDisplayName, address: m.from } : m.from,
      ...(m.replyTo ? { replyTo: m.replyToDisplayName ? { name: m.replyToDisplayName, address: m.replyTo } : m.replyTo } : {}),
      ...(m.envelopeFrom ? { envelope: { from: m.envelopeFrom, to: mail.to } } : {}),
      to: mail.to,
      subject: mail.subject,
      text: mail.text,
      html: mail.html,
    });
  } catch (err) {
    const e = err as { code?: unknown; responseCode?: unknown; command?: unknown };
    const parts = [typeof e.code === 'string' ? e.code : 'error', typeof e.responseCode === 'number' ? `SMTP ${e.responseCode}` : undefined, typeof e.command === 'string' ? `at ${e.command.split(' ')[0]}` : undefined];
    throw new MailError(`sending mail through ${m.host}:${m.port ?? (ssl ? 465 : 25)} failed (${parts.filter(Boolean).join(', ')})`);
  } finally {
    transport.close();
  }
}
