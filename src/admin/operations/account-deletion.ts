import type { Services } from '../../services.js';
import type { Realm, User } from '../../storage/types.js';
import { requiredActionSetting } from '../required-actions.js';
import { sessionsToEnd, tellSessionsEnded } from './session-ends.js';

/**
 * Keycloak's delete_account: a user deletes their own account (the confirmation page of the required
 * action or of kc_action=delete_account, or the account page). The realm decides whether its users may:
 * the action enabled (off by default, as Keycloak registers it). Keycloak asks also for the account
 * client's delete-account role, which Realmgate does not have: enabled, the action lets every user.
 */
export function mayDeleteOwnAccount(realm: Pick<Realm, 'requiredActionSettings'>): boolean {
  return requiredActionSetting(realm, 'delete_account').enabled;
}

export type AccountDeletion = 'deleted' | 'not-allowed' | 'federated';

/**
 * Deletes `user` at their own request: every session ends (the applications of those that asked are told
 * by back-channel logout), every refresh chain, consent, credential and link goes with the user (the same
 * deletion as an administrator's), and a DELETE_ACCOUNT event records it (Keycloak's; a refusal is a
 * DELETE_ACCOUNT_ERROR). Refused when the realm does not allow it, and for a user of an LDAP directory:
 * Realmgate does not write to the directory, so the account would come back at the next sign-in
 * (Keycloak's read-only federation refuses too).
 */
export async function deleteOwnAccount(services: Services, input: { realm: Realm; user: User; ip: string; clientId: string | null; where: string }): Promise<AccountDeletion> {
  const { realm, user } = input;
  const who = { realmId: realm.id, clientId: input.clientId, userId: user.id, username: user.username, ip: input.ip };
  const refusal: AccountDeletion | undefined = !mayDeleteOwnAccount(realm) ? 'not-allowed' : user.federationLink ? 'federated' : undefined;
  if (refusal) {
    const reason = refusal === 'not-allowed' ? 'the realm does not let users delete their account (delete_account is disabled)' : 'a user of an LDAP directory: the directory keeps the account';
    await services.audit.record({ ...who, type: 'DELETE_ACCOUNT_ERROR', outcome: 'failure', reason: `${input.where}: ${reason}` });
    return refusal;
  }
  const ending = await sessionsToEnd(services.store, realm.id, { userId: user.id });
  await services.store.userAdmin.delete(user);
  tellSessionsEnded(services.store, realm.id, ending);
  await services.audit.record({ ...who, type: 'DELETE_ACCOUNT', outcome: 'success', reason: `deleted by the user ${input.where}` });
  return 'deleted';
}
