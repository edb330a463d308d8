import type { OtpSummary, UserCredentials, WebAuthnSummary } from '../../operations/user-credentials.js';

/**
 * Keycloak's CredentialRepresentation as its admin API lists a user's credentials: times in
 * milliseconds, settings in `credentialData` (a JSON string), and never `secretData`.
 */
export interface CredentialRepresentation {
  id: string;
  type: 'password' | 'otp' | 'webauthn' | 'webauthn-passwordless' | 'recovery-authn-codes';
  userLabel?: string;
  createdDate: number;
  credentialData?: string;
}

/**
 * An authenticator's settings as Keycloak's OTPCredentialData writes them (the counter is HOTP's; a TOTP
 * credential's is 0). `secretEncoding` BASE32 tells Keycloak the key is base32 text, not UTF-8 bytes.
 */
export function otpCredentialData(c: Pick<OtpSummary, 'algorithm' | 'digits' | 'period'>, o: { secretEncoding?: 'BASE32' } = {}): string {
  return JSON.stringify({ subType: 'totp', digits: c.digits, counter: 0, period: c.period, algorithm: c.algorithm, ...(o.secretEncoding ? { secretEncoding: o.secretEncoding } : {}) });
}

export function toOtpCredentialRepresentation(c: OtpSummary): CredentialRepresentation {
  return { id: c.id, type: 'otp', ...(c.label !== null ? { userLabel: c.label } : {}), createdDate: c.createdAt * 1000, credentialData: otpCredentialData(c) };
}

/**
 * A security key's data as Keycloak's WebAuthnCredentialData writes it: the AAGUID, the credential id
 * (base64), the COSE public key (base64), the signature counter, the attestation format and the
 * transports. Keycloak's attestationStatement (the statement of its registration) is not kept.
 */
export function webauthnCredentialData(c: Pick<WebAuthnSummary, 'aaguid' | 'credentialId' | 'publicKey' | 'signCount' | 'attestationFormat' | 'transports'>): string {
  return JSON.stringify({
    aaguid: c.aaguid,
    credentialId: Buffer.from(c.credentialId, 'base64url').toString('base64'),
    credentialPublicKey: c.publicKey,
    counter: c.signCount,
    attestationStatementFormat: c.attestationFormat,
    transports: c.transports,
  });
}

export function toWebAuthnCredentialRepresentation(c: WebAuthnSummary): CredentialRepresentation {
  return { id: c.id, type: c.passwordless ? 'webauthn-passwordless' : 'webauthn', ...(c.label !== null ? { userLabel: c.label } : {}), createdDate: c.createdAt * 1000, credentialData: webauthnCredentialData(c) };
}

/** The password first (Keycloak lists it first), then the authenticators, oldest first, then the security keys, then the recovery codes. */
export function toCredentialRepresentations(creds: UserCredentials): CredentialRepresentation[] {
  const codes = creds.recoveryCodes;
  return [
    ...(creds.password ? [{ id: creds.password.id, type: 'password' as const, createdDate: creds.password.createdAt * 1000 }] : []),
    ...creds.otp.map(toOtpCredentialRepresentation),
    ...creds.webauthn.map(toWebAuthnCredentialRepresentation),
    ...(codes ? [{ id: codes.id, type: 'recovery-authn-codes' as const, createdDate: codes.createdAt * 1000, credentialData: JSON.stringify({ totalCodes: codes.total, remainingCodes: codes.remaining }) }] : []),
  ];
}
