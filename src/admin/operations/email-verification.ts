import type { Services } from '../../services.js';
import type { Realm, User } from '../../storage/types.js';
import type { Store } from '../../storage/store.js';
import { mailVerifyLink } from '../../mail/verify-mail.js';
import { requireUser } from './users.js';
import { cliActor, recordAdminEvent, requireRealm, type Actor } from './common.js';
import { checkMailRequest } from './action-emails.js';

/**
 * Keycloak's VerifyEmail.evaluateTriggers, at a sign-in with a password (and at registration): under the
 * realm's verifyEmail, a user whose email is not verified gets the VERIFY_EMAIL required action; a user
 * whose email is verified (by an administrator meanwhile) loses it. Returns the user as it is now.
 */
export async function verifyEmailTrigger(store: Store, realm: Realm, user: User): Promise<User> {
  const has = user.requiredActions.includes('VERIFY_EMAIL');
  const want = !user.emailVerified && (has || realm.verifyEmail);
  if (want === has) return user;
  const requiredActions = want ? [...user.requiredActions, 'VERIFY_EMAIL' as const] : user.requiredActions.filter((a) => a !== 'VERIFY_EMAIL');
  await store.users.update(user.id, { requiredActions });
  return { ...user, requiredActions };
}

/**
 * A mailed link was followed: the email it was sent to (the MAC bound the link to it) is the user's.
 * emailVerified becomes true and VERIFY_EMAIL is done; recorded as Keycloak's VERIFY_EMAIL event.
 */
export async function markEmailVerified(services: Services, user: User, o: { ip: string; clientId?: string }): Promise<User> {
  const requiredActions = user.requiredActions.filter((a) => a !== 'VERIFY_EMAIL');
  await services.store.users.update(user.id, { emailVerified: true, requiredActions });
  await services.audit.record({ realmId: user.realmId, type: 'VERIFY_EMAIL', outcome: 'success', userId: user.id, username: user.username, ip: o.ip, clientId: o.clientId ?? null, reason: `${user.email ?? ''} verified through a mailed link` });
  return { ...user, emailVerified: true, requiredActions };
}

/**
 * Keycloak's PUT users/{id}/send-verify-email: mails the user a link that verifies their email, valid
 * `lifespan` seconds (the realm's actionTokenGeneratedByAdminLifespan by default, 12 hours, as Keycloak), then goes
 * to `redirectUri`, which must be one of `clientId`'s redirect URIs (checked again when the link is used).
 * Refused as execute-actions-email refuses; a mail the server did not take rejects with a MailError.
 */
export async function sendVerifyEmail(
  services: Services,
  input: { realmId: string; user: string; lifespan?: number; clientId?: string; redirectUri?: string; ip?: string; log: { warn(obj: object, msg: string): void } },
  actor: Actor = cliActor(),
): Promise<User> {
  const realm = await requireRealm(services.store, input.realmId);
  const user = await requireUser(services.store, realm.id, input.user);
  const { to, link } = await checkMailRequest(services, realm, user, input, actor);
  await mailVerifyLink(services, realm, to, link);
  await recordAdminEvent(services.store, actor, { realmId: realm.id, operation: 'ACTION', resourceType: 'USER', resourcePath: `users/${user.id}/send-verify-email` });
  return user;
}
