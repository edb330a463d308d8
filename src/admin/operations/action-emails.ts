import type { Services } from '../../services.js';
import type { Realm, RequiredAction, User } from '../../storage/types.js';
import { canSendMail, sameMailServer, sendMail } from '../../mail/mailer.js';
import type { Store } from '../../storage/store.js';
import { readSmtpServer } from '../keycloak/representations/realm.js';
import { testMail } from '../../views/mail.js';
import { checkSmtpServer } from './realms.js';
import { mailActionsLink } from '../../mail/action-mail.js';
import { ValidationError } from '../validation.js';
import { checkRequiredActions, requireUser } from './users.js';
import { requiredActionSetting } from '../required-actions.js';
import { cliActor, recordAdminEvent, requireRealm, type Actor } from './common.js';

/** The longest a link an administrator mails may live: a year (Keycloak sets no bound). */
export const MAX_ACTION_LIFESPAN_S = 366 * 86_400;

/**
 * Keycloak's execute-actions-email: mails the user a link to do `actions` (UPDATE_PASSWORD,
 * CONFIGURE_TOTP, VERIFY_EMAIL, UPDATE_PROFILE, TERMS_AND_CONDITIONS), valid `lifespan` seconds (the realm's actionTokenGeneratedByAdminLifespan by default),
 * then to go to `redirectUri`, which must be one of `clientId`'s registered redirect URIs (never an open
 * redirect; checked again when the link is used). Refused (ValidationError, in Keycloak's words where it
 * has them): no SMTP server, no email, a disabled user, an action Realmgate does not support or the
 * realm has switched off. A mail the
 * server did not take rejects with a MailError.
 */
export async function sendActionsEmail(
  services: Services,
  input: { realmId: string; user: string; actions: unknown; lifespan?: number; clientId?: string; redirectUri?: string; ip?: string; log: { warn(obj: object, msg: string): void } },
  actor: Actor = cliActor(),
): Promise<User> {
  const realm = await requireRealm(services.store, input.realmId);
  const user = await requireUser(services.store, realm.id, input.user);
  if (!Array.isArray(input.actions) || input.actions.some((a) => typeof a !== 'string')) throw new ValidationError('the body must be a JSON array of required action names');
  const actions: RequiredAction[] = checkRequiredActions(input.actions as string[]);
  // A security key is registered at the sign-in (its page needs the sign-in's origin and challenge), not from a mailed link.
  if (actions.includes('webauthn-register') || actions.includes('webauthn-register-passwordless')) throw new ValidationError('webauthn-register cannot be mailed: require it on the user (requiredActions) and the key is registered at the next sign-in');
  // Deleting an account follows a sign-in (Keycloak's max auth age 0 for it), never a link anyone holding the mail could follow.
  if (actions.includes('delete_account')) throw new ValidationError('delete_account cannot be mailed: require it on the user (requiredActions), and they confirm the deletion after signing in');
  // idp_link names its provider in an application's kc_action only.
  if (actions.includes('idp_link')) throw new ValidationError('idp_link cannot be mailed: an application asks for it (kc_action=idp_link:<provider alias>)');
  if (actions.includes('delete_credential')) throw new ValidationError('delete_credential cannot be mailed: an application asks for it (kc_action=delete_credential:<credential id>)');
  // Keycloak refuses an action the realm has switched off (its required actions list), in these words.
  if (actions.some((a) => !requiredActionSetting(realm, a).enabled)) throw new ValidationError('Provided invalid required actions');
  if (actions.length === 0) throw new ValidationError('no action given: choose from UPDATE_PASSWORD, CONFIGURE_TOTP, VERIFY_EMAIL, UPDATE_PROFILE, TERMS_AND_CONDITIONS');
  const { to, link } = await checkMailRequest(services, realm, user, input, actor);
  await mailActionsLink(services, realm, to, { actions, ...link });
  await recordAdminEvent(services.store, actor, { realmId: realm.id, operation: 'ACTION', resourceType: 'USER', resourcePath: `users/${user.id}/execute-actions-email`, representation: actions });
  return user;
}

/**
 * Keycloak's checks of a mail an administrator asks for (execute-actions-email, send-verify-email), with
 * its messages: the link's lifespan, the client and its redirect URI, an enabled user with an email, a
 * realm that can mail. Returns the user to mail and the link's options (the lifespan by default the
 * realm's actionTokenGeneratedByAdminLifespan, as Keycloak).
 */
export async function checkMailRequest(
  services: Services,
  realm: Realm,
  user: User,
  input: { lifespan?: number; clientId?: string; redirectUri?: string; ip?: string; log: { warn(obj: object, msg: string): void } },
  actor: Actor,
): Promise<{ to: User & { email: string }; link: { lifespan: number; clientId?: string; redirectUri?: string; ip?: string; by?: string; log: { warn(obj: object, msg: string): void } } }> {
  if (input.lifespan !== undefined && (!Number.isSafeInteger(input.lifespan) || input.lifespan < 1 || input.lifespan > MAX_ACTION_LIFESPAN_S)) {
    throw new ValidationError(`lifespan must be a whole number of seconds from 1 to ${MAX_ACTION_LIFESPAN_S}`);
  }
  if (input.redirectUri !== undefined && input.clientId === undefined) throw new ValidationError('Client id missing');
  if (input.clientId !== undefined) {
    const client = await services.store.clients.get(realm.id, input.clientId);
    if (!client) throw new ValidationError("Client doesn't exist");
    if (!client.enabled) throw new ValidationError('Client is not enabled');
    if (input.redirectUri !== undefined && !client.redirectUris.includes(input.redirectUri)) throw new ValidationError('Invalid redirect uri.');
  }
  if (!user.enabled) throw new ValidationError('User is disabled');
  if (!user.email) throw new ValidationError('User email missing');
  if (!canSendMail(realm)) throw new ValidationError('the realm has no SMTP server (smtpServer): set one before sending mail');
  return {
    to: { ...user, email: user.email },
    link: {
      lifespan: input.lifespan ?? realm.actionTokenAdminLifespan,
      ...(input.clientId !== undefined ? { clientId: input.clientId } : {}),
      ...(input.redirectUri !== undefined ? { redirectUri: input.redirectUri } : {}),
      ...(input.ip !== undefined ? { ip: input.ip } : {}),
      ...(actor.username ? { by: actor.username } : {}),
      log: input.log,
    },
  };
}

/**
 * Keycloak's testSMTPConnection: sends a test mail with `settings` (Keycloak's smtpServer map, not
 * saved; its password `**********` or absent means the stored one) to the calling administrator's own
 * email. Refused when the settings are invalid or the administrator has no email; a mail the server did
 * not take rejects with a MailError.
 */
export async function testSmtpConnection(store: Store, input: { realmId: string; adminUserId: string; settings: unknown }): Promise<string> {
  const realm = await requireRealm(store, input.realmId);
  const { server, password } = readSmtpServer(input.settings);
  checkSmtpServer(server);
  // The stored password (the body's masked or left out) goes only to the server it was given for: the
  // test's host is the caller's choice (the same rule as a realm update's, updateRealm).
  if (typeof password !== 'string' && server.auth === 'true' && realm.smtpPassword !== null && !sameMailServer(realm.smtpServer, server)) {
    throw new ValidationError('smtpServer.password must be given to test another host or port: the stored one is sent only to the server it was given for');
  }
  const admin = await store.users.get(input.adminUserId);
  if (!admin?.email) throw new ValidationError('Logged in user does not have an e-mail.');
  const content = testMail({ realmName: realm.displayName ?? realm.id });
  await sendMail(store, realm, { to: admin.email, ...content }, { server, ...(password ? { password } : {}) });
  return admin.email;
}
