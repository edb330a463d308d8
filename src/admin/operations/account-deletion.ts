import type { Services } from '../../services.js';
import type { Store } from '../../storage/store.js';
import type { Realm, User } from '../../storage/types.js';
import { requiredActionSetting } from '../required-actions.js';
import { sessionsToEnd, tellSessionsEnded } from './session-ends.js';

/**
 * Keycloak's delete_account: a user deletes their own account (the confirmation page of the required
 * action or of kc_action=delete_account, or the account page), when the realm has the action enabled
 * (off by default, as Keycloak registers it).
 */
export function deletionEnabled(realm: Pick<Realm, 'requiredActionSettings'>): boolean {
  return requiredActionSetting(realm, 'delete_account').enabled;
}

/** Keycloak's client whose roles say what a user may do with their own account (Constants.ACCOUNT_MANAGEMENT_CLIENT_ID). */
export const ACCOUNT_CLIENT = 'account';
/** Keycloak's AccountRoles.DELETE_ACCOUNT. */
export const DELETE_ACCOUNT_ROLE = 'delete-account';

/**
 * Whether `userId` holds one of the `account` client's roles `names` (directly, through a group or a
 * composite), as Keycloak asks before account self-service. Only where the realm has such a role (a
 * realm imported from Keycloak with its built-in clients): a realm with none of them (Realmgate's own,
 * or one imported without them) lets every user.
 */
export async function holdsAccountRole(store: Store, realmId: string, userId: string, names: readonly string[]): Promise<boolean> {
  const roles = (await Promise.all(names.map((name) => store.roles.find(realmId, ACCOUNT_CLIENT, name)))).filter((r) => r !== undefined);
  if (roles.length === 0) return true;
  const held = new Set((await store.roles.effectiveRoles(userId)).map((r) => r.id));
  return roles.some((r) => held.has(r.id));
}

/** Whether `user` may delete their own account: the action enabled, and Keycloak's delete-account role where the realm has it. */
export async function mayDeleteOwnAccount(store: Store, realm: Pick<Realm, 'id' | 'requiredActionSettings'>, user: Pick<User, 'id'>): Promise<boolean> {
  return deletionEnabled(realm) && (await holdsAccountRole(store, realm.id, user.id, [DELETE_ACCOUNT_ROLE]));
}

export type AccountDeletion = 'deleted' | 'not-allowed' | 'federated';

/**
 * Deletes `user` at their own request: every session ends (the applications of those that asked are told
 * by back-channel logout), every refresh chain, consent, credential and link goes with the user (the same
 * deletion as an administrator's), and a DELETE_ACCOUNT event records it (Keycloak's; a refusal is a
 * DELETE_ACCOUNT_ERROR). Refused when the user may not (mayDeleteOwnAccount), and for a user of an LDAP directory:
 * Realmgate does not write to the directory, so the account would come back at the next sign-in
 * (Keycloak's read-only federation refuses too).
 */
export async function deleteOwnAccount(services: Services, input: { realm: Realm; user: User; ip: string; clientId: string | null; where: string }): Promise<AccountDeletion> {
  const { realm, user } = input;
  const who = { realmId: realm.id, clientId: input.clientId, userId: user.id, username: user.username, ip: input.ip };
  const refusal: AccountDeletion | undefined = !(await mayDeleteOwnAccount(services.store, realm, user)) ? 'not-allowed' : user.federationLink ? 'federated' : undefined;
  if (refusal) {
    const reason =
      refusal === 'federated'
        ? 'a user of an LDAP directory: the directory keeps the account'
        : deletionEnabled(realm)
          ? `the user lacks the ${ACCOUNT_CLIENT} client's ${DELETE_ACCOUNT_ROLE} role`
          : 'the realm does not let users delete their account (delete_account is disabled)';
    await services.audit.record({ ...who, type: 'DELETE_ACCOUNT_ERROR', outcome: 'failure', reason: `${input.where}: ${reason}` });
    return refusal;
  }
  const ending = await sessionsToEnd(services.store, realm.id, { userId: user.id });
  await services.store.userAdmin.delete(user);
  tellSessionsEnded(services.store, realm.id, ending);
  await services.audit.record({ ...who, type: 'DELETE_ACCOUNT', outcome: 'success', reason: `deleted by the user ${input.where}` });
  return 'deleted';
}
