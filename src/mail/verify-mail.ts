import type { Services } from '../services.js';
import type { Realm, User } from '../storage/types.js';
import { nowSeconds } from '../clock.js';
import { verifyEmailMail } from '../views/mail.js';
import { actionLink, issueActionToken } from './action-mail.js';
import { MailError, sendMail } from './mailer.js';
import { renderMail } from './locale.js';

/**
 * Mails `user` a link that verifies their email (Keycloak's verify-email action token): bound to the user,
 * to the address it goes to and to its being unverified (src/crypto/action-tokens.ts), so a changed
 * address or a used link is refused. `interactionId`: the sign-in it came from, which the link continues
 * in the same browser. Records SEND_VERIFY_EMAIL, or SEND_VERIFY_EMAIL_ERROR and rejects with a MailError.
 */
export async function mailVerifyLink(
  services: Services,
  realm: Realm,
  user: User & { email: string },
  o: { lifespan: number; interactionId?: string; clientId?: string; redirectUri?: string; ip?: string; by?: string; log: { warn(obj: object, msg: string): void }; pageLocale?: string },
): Promise<void> {
  const base = { realmId: realm.id, ip: o.ip ?? null, clientId: o.clientId ?? null, userId: user.id, username: user.username };
  const token = await issueActionToken(services, user, {
    exp: nowSeconds(services.clock) + o.lifespan,
    actions: ['VERIFY_EMAIL'],
    kind: 'verify',
    ...(o.interactionId ? { interaction: o.interactionId } : {}),
    ...(o.clientId ? { clientId: o.clientId } : {}),
    ...(o.redirectUri ? { redirectUri: o.redirectUri } : {}),
  });
  const link = actionLink(services, realm.id, token);
  const content = await renderMail(services, realm, user, () => verifyEmailMail({ realmName: realm.displayName ?? realm.id, username: user.username, email: user.email, link, lifespan: o.lifespan }), o.pageLocale);
  try {
    await sendMail(services.store, realm, { to: user.email, ...content });
  } catch (err) {
    const reason = err instanceof MailError ? err.message : 'unexpected error';
    o.log.warn({ realm: realm.id, userId: user.id, reason }, 'verify email mail not sent');
    await services.audit.record({ ...base, type: 'SEND_VERIFY_EMAIL_ERROR', outcome: 'failure', reason });
    throw err instanceof MailError ? err : new MailError(reason);
  }
  await services.audit.record({ ...base, type: 'SEND_VERIFY_EMAIL', outcome: 'success', reason: `to ${user.email}${o.by ? ` by ${o.by}` : ''}` });
}
