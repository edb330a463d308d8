import type { FastifyBaseLogger } from 'fastify';
import { realmBase, type Services } from '../services.js';
import type { Realm, RequiredAction, User } from '../storage/types.js';
import type { Store } from '../storage/store.js';
import { createActionToken, credentialState, type ActionClaims } from '../crypto/action-tokens.js';
import { nowSeconds } from '../clock.js';
import { executeActionsMail, resetPasswordMail } from '../views/mail.js';
import { MailError, sendMail } from './mailer.js';
import { TERMS_ATTRIBUTE } from '../admin/operations/profile-actions.js';
import { renderMail } from './locale.js';

/**
 * The user's credential state a mailed link is bound to (src/crypto/action-tokens.ts); a link whose
 * actions include VERIFY_EMAIL is bound to the email address and its being unverified too, one with
 * UPDATE_PROFILE to the email and names, one with TERMS_AND_CONDITIONS to the terms' acceptance.
 */
export async function userCredentialState(store: Store, user: Pick<User, 'id' | 'passwordHash' | 'email' | 'emailVerified' | 'firstName' | 'lastName' | 'attributes'>, actions: readonly RequiredAction[] = []): Promise<string> {
  const email = actions.includes('VERIFY_EMAIL') ? { address: user.email, verified: user.emailVerified } : undefined;
  // A link to update the profile or accept the terms is bound to them as they were: once saved (a new
  // email or name, a new acceptance time), it no longer works.
  const more = [
    ...(actions.includes('UPDATE_PROFILE') ? [`profile\0${user.email ?? ''}\0${user.firstName ?? ''}\0${user.lastName ?? ''}`] : []),
    ...(actions.includes('TERMS_AND_CONDITIONS') ? [`terms\0${(user.attributes[TERMS_ATTRIBUTE] ?? []).join(',')}`] : []),
  ];
  return credentialState(user.passwordHash, (await store.otp.list(user.id)).map((c) => c.id), email, more);
}

/**
 * The link of an action token. Always from AUTH_URL, the address the server's issuer uses: never from
 * the request's Host header, which whoever asks for a reset controls (password-reset poisoning).
 */
export function actionLink(services: Pick<Services, 'config'>, realmId: string, token: string): string {
  return `${realmBase(services.config, realmId)}/login-actions/action-token?key=${encodeURIComponent(token)}`;
}

export async function issueActionToken(services: Services, user: User, claims: Omit<ActionClaims, 'nonce' | 'user' | 'realm'>): Promise<string> {
  return createActionToken(services.store, { ...claims, realm: user.realmId, user: user.id }, await userCredentialState(services.store, user, claims.actions));
}

/**
 * "Forgot password?": mails `user` a link to choose a new password, unless the user cannot have one (no
 * email, disabled) or has had enough of them lately. Runs after the page was answered, so its outcome
 * shows nowhere but in the events and the log: never throws.
 */
export async function mailResetLink(services: Services, realm: Realm, user: User | undefined, o: { interactionId?: string; ip: string; clientId?: string; log: FastifyBaseLogger; pageLocale?: string }): Promise<void> {
  const base = { realmId: realm.id, ip: o.ip, clientId: o.clientId ?? null };
  try {
    if (!user || !user.enabled || !user.email) {
      const reason = !user ? 'user not found' : !user.enabled ? 'user disabled' : 'user has no email';
      await services.audit.record({ ...base, type: 'SEND_RESET_PASSWORD_ERROR', outcome: 'failure', userId: user?.id ?? null, username: user?.username ?? null, reason });
      return;
    }
    const key = `${realm.id}\0${user.id}`;
    if (services.resetMails.perUser.blockedFor(key) > 0) {
      await services.audit.record({ ...base, type: 'SEND_RESET_PASSWORD_ERROR', outcome: 'failure', userId: user.id, username: user.username, reason: 'too many reset mails for this user: none sent' });
      return;
    }
    services.resetMails.perUser.fail(key);
    const lifespan = realm.actionTokenUserLifespan;
    const token = await issueActionToken(services, user, { exp: nowSeconds(services.clock) + lifespan, actions: ['UPDATE_PASSWORD'], kind: 'reset', ...(o.interactionId ? { interaction: o.interactionId } : {}), ...(o.clientId ? { clientId: o.clientId } : {}) });
    const link = actionLink(services, realm.id, token);
    const content = await renderMail(services, realm, user, () => resetPasswordMail({ realmName: realm.displayName ?? realm.id, username: user.username, link, lifespan }), o.pageLocale);
    await sendMail(services.store, realm, { to: user.email, ...content });
    await services.audit.record({ ...base, type: 'SEND_RESET_PASSWORD', outcome: 'success', userId: user.id, username: user.username, reason: `to ${user.email}` });
  } catch (err) {
    const reason = err instanceof MailError ? err.message : 'unexpected error (logged)';
    o.log[err instanceof MailError ? 'warn' : 'error']({ realm: realm.id, userId: user?.id, ...(err instanceof MailError ? { reason } : { err }) }, 'reset password mail not sent');
    await services.audit.record({ ...base, type: 'SEND_RESET_PASSWORD_ERROR', outcome: 'failure', userId: user?.id ?? null, username: user?.username ?? null, reason }).catch(() => undefined);
  }
}

/**
 * Keycloak's execute-actions-email: mails `user` a link to do `actions` (then to go to redirectUri, which
 * the caller checked is one of clientId's). Throws MailError when the mail was not sent (the caller
 * answers with an error), after the event and the log.
 */
export async function mailActionsLink(
  services: Services,
  realm: Realm,
  user: User & { email: string },
  o: { actions: RequiredAction[]; lifespan: number; clientId?: string; redirectUri?: string; ip?: string; by?: string; log: { warn(obj: object, msg: string): void } },
): Promise<void> {
  const base = { realmId: realm.id, ip: o.ip ?? null, clientId: o.clientId ?? null, userId: user.id, username: user.username };
  const token = await issueActionToken(services, user, {
    exp: nowSeconds(services.clock) + o.lifespan,
    actions: o.actions,
    kind: 'execute',
    ...(o.clientId ? { clientId: o.clientId } : {}),
    ...(o.redirectUri ? { redirectUri: o.redirectUri } : {}),
  });
  const link = actionLink(services, realm.id, token);
  const content = await renderMail(services, realm, user, () => executeActionsMail({ realmName: realm.displayName ?? realm.id, username: user.username, link, lifespan: o.lifespan, actions: o.actions }));
  try {
    await sendMail(services.store, realm, { to: user.email, ...content });
  } catch (err) {
    const reason = err instanceof MailError ? err.message : 'unexpected error';
    o.log.warn({ realm: realm.id, userId: user.id, reason }, 'execute actions mail not sent');
    await services.audit.record({ ...base, type: 'EXECUTE_ACTIONS_ERROR', outcome: 'failure', reason });
    throw err instanceof MailError ? err : new MailError(reason);
  }
  await services.audit.record({ ...base, type: 'EXECUTE_ACTIONS', outcome: 'success', reason: `${o.actions.join(', ')} mailed to ${user.email}${o.by ? ` by ${o.by}` : ''}` });
}
