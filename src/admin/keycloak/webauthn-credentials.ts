import type { KeycloakCredential } from './credentials.js';
import type { WebAuthnSummary } from '../operations/user-credentials.js';
import { webauthnCredentialData } from './representations/credential.js';
import { readCoseKey } from '../../crypto/cose-key.js';
import { CborError } from '../../crypto/cbor.js';
import type { WebAuthnCredential } from '../../storage/types.js';

/**
 * Keycloak's webauthn credentials (a user's security keys) in a realm file: credentialData is its
 * WebAuthnCredentialData as JSON (aaguid, credentialId and credentialPublicKey in base64, counter,
 * attestationStatementFormat, transports), secretData "{}". A key moves as it is: it keeps working when
 * the RP ID is the same (the realm's webAuthnPolicyRpId, or the host of AUTH_URL as it was Keycloak's).
 */

/** A stored key's fields, from a Keycloak credential (createdAt undefined when the file has no createdDate). */
export type ImportedWebAuthn = Omit<WebAuthnCredential, 'id' | 'realmId' | 'userId' | 'createdAt'> & { createdAt: number | undefined };

const UUID = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;
const B64 = /^[A-Za-z0-9+/_-]+={0,2}$/;
const TRANSPORTS = new Set(['usb', 'nfc', 'ble', 'internal', 'hybrid', 'smart-card']);

/** One webauthn credential of a file, read; or why it cannot move. */
export function importWebAuthnCredential(c: KeycloakCredential): { key: ImportedWebAuthn; note?: string } | { skipped: string } {
  let data: unknown;
  try {
    data = JSON.parse(c.credentialData ?? '');
  } catch {
    return { skipped: 'credentialData is not JSON' };
  }
  if (typeof data !== 'object' || data === null) return { skipped: 'credentialData is not an object' };
  const d = data as Record<string, unknown>;
  if (typeof d.credentialId !== 'string' || !B64.test(d.credentialId)) return { skipped: 'credentialData.credentialId is not base64' };
  const credentialId = Buffer.from(d.credentialId, 'base64');
  if (credentialId.length === 0 || credentialId.length > 1023) return { skipped: 'credentialData.credentialId is empty or longer than 1023 bytes' };
  if (typeof d.credentialPublicKey !== 'string' || !B64.test(d.credentialPublicKey)) return { skipped: 'credentialData.credentialPublicKey is not base64' };
  const publicKey = Buffer.from(d.credentialPublicKey, 'base64');
  let alg: number;
  try {
    alg = readCoseKey(publicKey).alg;
  } catch (err) {
    if (!(err instanceof CborError)) throw err;
    return { skipped: `its public key cannot be used (${err.message}): Realmgate verifies ES256, RS256 and EdDSA keys` };
  }
  const counter = d.counter === undefined || d.counter === null ? 0 : d.counter;
  if (typeof counter !== 'number' || !Number.isSafeInteger(counter) || counter < 0 || counter > 0xffffffff) return { skipped: 'credentialData.counter is not a 32-bit counter' };
  const aaguid = typeof d.aaguid === 'string' && UUID.test(d.aaguid) ? d.aaguid.toLowerCase() : '00000000-0000-0000-0000-000000000000';
  const format = typeof d.attestationStatementFormat === 'string' && /^[a-z0-9-]{1,32}$/.test(d.attestationStatementFormat) ? d.attestationStatementFormat : 'none';
  const transports = Array.isArray(d.transports) ? [...new Set(d.transports.filter((t): t is string => typeof t === 'string' && TRANSPORTS.has(t)))] : [];
  let label: string | null = null;
  let note: string | undefined;
  if (typeof c.userLabel === 'string' && c.userLabel.trim() !== '') {
    if (c.userLabel.trim().length > 255 || /[\x00-\x1f\x7f]/.test(c.userLabel)) note = 'its label left out: at most 255 characters, no control characters';
    else label = c.userLabel.trim();
  }
  const createdAt = typeof c.createdDate === 'number' && c.createdDate > 0 && c.createdDate < 253_402_300_799_000 ? Math.floor(c.createdDate / 1000) : undefined;
  return { key: { label, credentialId, publicKey, alg, aaguid, signCount: counter, attestationFormat: format, transports, createdAt, passwordless: c.type === 'webauthn-passwordless' }, ...(note ? { note } : {}) };
}

/** A security key as Keycloak exports it: type webauthn, its data in credentialData, secretData "{}". */
export function exportWebAuthnCredential(c: WebAuthnSummary): KeycloakCredential {
  return {
    id: c.id,
    type: c.passwordless ? 'webauthn-passwordless' : 'webauthn',
    ...(c.label !== null ? { userLabel: c.label } : {}),
    createdDate: c.createdAt * 1000,
    secretData: '{}',
    credentialData: webauthnCredentialData(c),
  };
}
