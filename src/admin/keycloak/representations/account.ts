import type { Store } from '../../../storage/store.js';
import type { Realm, User } from '../../../storage/types.js';
import { userCredentials } from '../../operations/user-credentials.js';
import { toCredentialRepresentations, type CredentialRepresentation } from './credential.js';

/**
 * Keycloak's account API CredentialContainer: one per credential type the user has or can set up, with
 * the type's texts (message keys of Keycloak's account theme, which its account console translates) and
 * the user's credentials of that type (never their secrets).
 */
export interface CredentialContainer {
  type: CredentialRepresentation['type'];
  category: 'basic-authentication' | 'two-factor' | 'passwordless';
  displayName: string;
  helptext: string;
  iconCssClass: string;
  /** The kc_action that sets one up (an application-initiated action Realmgate has); absent: the account page does. */
  createAction?: string;
  updateAction?: string;
  removeable: boolean;
  /** Keycloak's CredentialMetadataRepresentation; a directory's password is a credential of the type alone. */
  userCredentialMetadatas?: Array<{ credential: Pick<CredentialRepresentation, 'type'> & Partial<CredentialRepresentation>; infoMessage?: string }>;
}

type TypeInfo = Omit<CredentialContainer, 'userCredentialMetadatas'> & {
  /** Listed even when the user has none (it can be set up through createAction). */
  always: boolean;
};

// Keycloak's order (CredentialTypeMetadata's comparison: basic authentication, two-factor, passwordless).
const TYPES: readonly TypeInfo[] = [
  { type: 'password', category: 'basic-authentication', displayName: 'password-display-name', helptext: 'password-help-text', iconCssClass: 'kcAuthenticatorPasswordClass', createAction: 'UPDATE_PASSWORD', updateAction: 'UPDATE_PASSWORD', removeable: false, always: true },
  { type: 'otp', category: 'two-factor', displayName: 'otp-display-name', helptext: 'otp-help-text', iconCssClass: 'kcAuthenticatorOTPClass', createAction: 'CONFIGURE_TOTP', removeable: true, always: true },
  { type: 'webauthn', category: 'two-factor', displayName: 'webauthn-display-name', helptext: 'webauthn-help-text', iconCssClass: 'kcAuthenticatorWebAuthnClass', removeable: true, always: false },
  { type: 'recovery-authn-codes', category: 'two-factor', displayName: 'recovery-authn-codes-display-name', helptext: 'recovery-authn-codes-help-text', iconCssClass: 'kcAuthenticatorRecoveryAuthnCodesClass', removeable: true, always: false },
  { type: 'webauthn-passwordless', category: 'passwordless', displayName: 'webauthn-passwordless-display-name', helptext: 'webauthn-passwordless-help-text', iconCssClass: 'kcAuthenticatorWebAuthnPasswordlessClass', removeable: true, always: false },
];

/**
 * The user's credential types as Keycloak's account API lists them (GET /account/credentials): the
 * password and the authenticator app always (they can be set up by kc_action), security keys, passkeys and
 * recovery codes when the user has some. A user of an LDAP directory has the directory's password
 * (Keycloak's user-storage credential: no id, no date). `withCredentials` false: the types alone.
 */
export async function accountCredentialTypes(store: Store, realm: Pick<Realm, 'id'>, user: User, o: { withCredentials: boolean }): Promise<CredentialContainer[]> {
  const reps = toCredentialRepresentations(await userCredentials(store, { realmId: realm.id, user: user.id }));
  const out: CredentialContainer[] = [];
  for (const { always, ...info } of TYPES) {
    const mine: Array<Pick<CredentialRepresentation, 'type'> & Partial<CredentialRepresentation>> = reps.filter((r) => r.type === info.type);
    if (info.type === 'password' && mine.length === 0 && user.federationLink) mine.push({ type: 'password' });
    if (mine.length === 0 && !always) continue;
    const container: CredentialContainer = { ...info };
    if (o.withCredentials) {
      container.userCredentialMetadatas = mine.map((credential) => {
        if (credential.type !== 'recovery-authn-codes') return { credential };
        // Keycloak tells how many codes are left in the metadata's info message.
        const left = (JSON.parse(credential.credentialData ?? '{}') as { remainingCodes?: number }).remainingCodes;
        return { credential, ...(left !== undefined ? { infoMessage: JSON.stringify({ key: 'recovery-codes-number-remaining', parameters: [String(left)] }) } : {}) };
      });
    }
    out.push(container);
  }
  return out;
}
