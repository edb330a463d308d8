import type { Services } from '../../services.js';
import type { Store } from '../../storage/store.js';
import type { User } from '../../storage/types.js';
import { hasPassword } from '../../crypto/passwords.js';
import { removeOtp } from './otp.js';
import { removeWebAuthn } from './webauthn.js';
import { checkOtpLabel, passwordCredentialId, recoveryCodesCredentialId } from './user-credentials.js';
import { NotFound } from '../validation.js';

/**
 * Keycloak's delete_credential (kc_action=delete_credential:<credential id>, Keycloak 24+): an application
 * asks the signed-in user to delete one of their credentials, by the id Keycloak's APIs list it under
 * (the admin API's GET /users/{id}/credentials, src/admin/keycloak/representations/credential.ts).
 */
export interface OwnCredential {
  id: string;
  kind: 'password' | 'otp' | 'webauthn' | 'webauthn-passwordless' | 'recovery-codes';
  /** The user's own name for it (an authenticator's or a key's label); null: none. */
  label: string | null;
}

/** The user's credential of that id; undefined when they have none (Keycloak then ignores the action). */
export async function findOwnCredential(store: Store, user: User, id: string): Promise<OwnCredential | undefined> {
  if (id === passwordCredentialId(user.id)) return hasPassword(user.passwordHash) ? { id, kind: 'password', label: null } : undefined;
  if (id === recoveryCodesCredentialId(user.id)) return (await store.recoveryCodes.summary(user.id)) ? { id, kind: 'recovery-codes', label: null } : undefined;
  const [otp, keys] = await Promise.all([store.otp.list(user.id), store.webauthn.list(user.id)]);
  const app = otp.find((c) => c.id === id);
  if (app) return { id, kind: 'otp', label: app.label };
  const key = keys.find((k) => k.id === id);
  return key ? { id, kind: key.passwordless ? 'webauthn-passwordless' : 'webauthn', label: key.label } : undefined;
}

/** Whether the credential may be deleted by its user: every kind but the password (Keycloak's password credential type is not removable). */
export const removable = (c: OwnCredential): boolean => c.kind !== 'password';

/**
 * Deletes the user's credential at their own request: an authenticator app (with the last one, its
 * recovery codes, as on the account page), a security key or passkey, or the recovery codes. Recorded as
 * REMOVE_TOTP for an authenticator (Keycloak's deprecated event it still sends), REMOVE_CREDENTIAL otherwise.
 * False when it was gone meanwhile, or may not be deleted (the password).
 */
export async function deleteOwnCredential(services: Services, input: { user: User; credential: OwnCredential; ip: string; clientId: string; by?: string }): Promise<boolean> {
  const { user, credential: c } = input;
  const o = { ip: input.ip, clientId: input.clientId, by: input.by ?? `the user (kc_action=delete_credential from ${input.clientId})` };
  switch (c.kind) {
    case 'password':
      return false;
    case 'otp':
      return removeOtp(services.store, user, c.id, o);
    case 'webauthn':
    case 'webauthn-passwordless':
      return removeWebAuthn(services.store, user, c.id, o);
    case 'recovery-codes': {
      if (!(await services.store.recoveryCodes.summary(user.id))) return false;
      await services.store.recoveryCodes.deleteAll(user.id);
      await services.audit.record({ realmId: user.realmId, type: 'REMOVE_CREDENTIAL', outcome: 'success', userId: user.id, username: user.username, clientId: input.clientId, ip: input.ip, reason: `credential_type recovery-authn-codes: recovery codes removed by ${o.by}` });
      return true;
    }
  }
}

/**
 * The user's own new name for an authenticator app or a security key (Keycloak's account API PUT
 * /credentials/{id}/label): the admin API's label rules (checkOtpLabel: blank removes it), recorded as
 * UPDATE_CREDENTIAL. NotFound for any other id (the password and the recovery codes have no label).
 */
export async function renameOwnCredential(services: Services, input: { user: User; credentialId: string; label: string; ip: string; clientId: string | null }): Promise<void> {
  const { user, credentialId } = input;
  const label = checkOtpLabel(input.label);
  const c = await findOwnCredential(services.store, user, credentialId);
  const renamed = c?.kind === 'otp' ? await services.store.otp.rename(user.id, credentialId, label) : c?.kind === 'webauthn' || c?.kind === 'webauthn-passwordless' ? await services.store.webauthn.rename(user.id, credentialId, label) : false;
  if (!renamed || !c) throw new NotFound('Credential not found');
  await services.audit.record({ realmId: user.realmId, type: 'UPDATE_CREDENTIAL', outcome: 'success', userId: user.id, username: user.username, clientId: input.clientId, ip: input.ip, reason: `credential_type ${c.kind}: renamed ${JSON.stringify(c.label ?? '')} -> ${JSON.stringify(label ?? '')} by the user` });
}
