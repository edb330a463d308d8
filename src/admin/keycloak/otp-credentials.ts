import { OTP_ALGORITHMS, type OtpAlgorithm } from '../../storage/types.js';
import { base32, fromBase32 } from '../../crypto/totp.js';
import { checkOtpLabel, type OtpSummary } from '../operations/user-credentials.js';
import { ValidationError } from '../validation.js';
import { parseJson, type KeycloakCredential } from './credentials.js';
import { otpCredentialData } from './representations/credential.js';

/**
 * Keycloak's otp credentials in a realm file: `secretData` is `{"value": "..."}` and `credentialData`
 * `{"subType": "totp", "digits": 6, "counter": 0, "period": 30, "algorithm": "HmacSHA1"}`, possibly with
 * `"secretEncoding": "BASE32"`. Keycloak's key is the UTF-8 bytes of value, or, with BASE32, the bytes
 * the base32 text decodes to (OTPCredentialModel.getDecodedSecret): read the same way here, the codes
 * the user's app shows are the codes Realmgate accepts.
 */

/** An authenticator of the file, its key in clear until it is sealed for the user it moves with. */
export interface ImportedOtp {
  key: Buffer;
  label: string | null;
  algorithm: OtpAlgorithm;
  digits: number;
  period: number;
  /** Seconds since the epoch; undefined: the file gives none. */
  createdAt: number | undefined;
}

/** Periods an authenticator app offers (Keycloak lets an administrator choose any; apps show 15 to 300 s). */
export const OTP_PERIOD_RANGE = { min: 15, max: 300 };
const MAX_KEY_BYTES = 1024;

/** The settings and key of an otp credential, or why it cannot move (thrown as a ValidationError). */
function readOtp(c: KeycloakCredential): ImportedOtp {
  const parse = (text: unknown, what: string): Record<string, unknown> => {
    try {
      return parseJson(text, what);
    } catch (err) {
      throw new ValidationError((err as Error).message);
    }
  };
  const data = parse(c.credentialData, 'credentialData');
  const secret = parse(c.secretData, 'secretData');
  const subType = data.subType ?? 'totp';
  if (subType === 'hotp') throw new ValidationError('a counter-based (HOTP) authenticator: Realmgate accepts time-based (TOTP) ones only');
  if (subType !== 'totp') throw new ValidationError(`subType ${JSON.stringify(subType)} is not totp`);
  const algorithm = data.algorithm ?? 'HmacSHA1';
  if (typeof algorithm !== 'string' || !(OTP_ALGORITHMS as readonly string[]).includes(algorithm)) throw new ValidationError(`algorithm ${JSON.stringify(algorithm)} is not one of ${OTP_ALGORITHMS.join(', ')}`);
  const digits = data.digits ?? 6;
  if (digits !== 6 && digits !== 8) throw new ValidationError(`digits ${JSON.stringify(digits)} is not 6 or 8`);
  const period = data.period ?? 30;
  if (typeof period !== 'number' || !Number.isInteger(period) || period < OTP_PERIOD_RANGE.min || period > OTP_PERIOD_RANGE.max) {
    throw new ValidationError(`period ${JSON.stringify(period)} is not a whole number of seconds from ${OTP_PERIOD_RANGE.min} to ${OTP_PERIOD_RANGE.max}`);
  }
  if (typeof secret.value !== 'string' || secret.value === '') throw new ValidationError('secretData has no value');
  const encoding = data.secretEncoding;
  let key: Buffer | undefined;
  if (encoding === 'BASE32') {
    key = fromBase32(secret.value);
    if (!key) throw new ValidationError('secretData value is not base32 (secretEncoding BASE32)');
  } else if (encoding === undefined || encoding === null || encoding === 'UTF8') {
    key = Buffer.from(secret.value, 'utf8');
  } else throw new ValidationError(`secretEncoding ${JSON.stringify(encoding)} is not BASE32`);
  if (key.length === 0 || key.length > MAX_KEY_BYTES) throw new ValidationError(`the key must have 1 to ${MAX_KEY_BYTES} bytes`);
  const createdAt = typeof c.createdDate === 'number' && c.createdDate > 0 ? Math.floor(c.createdDate / 1000) : undefined;
  return { key, label: null, algorithm: algorithm as OtpAlgorithm, digits, period, createdAt };
}

/**
 * An otp credential of the file read: the authenticator, with a label the admin rule refuses left out
 * (and said in `note`); or why it cannot move. Nothing of the key is ever in the words.
 */
export function importOtpCredential(c: KeycloakCredential): { otp: ImportedOtp; note?: string } | { skipped: string } {
  let otp: ImportedOtp;
  try {
    otp = readOtp(c);
  } catch (err) {
    if (!(err instanceof ValidationError)) throw err;
    return { skipped: err.message };
  }
  if (c.userLabel === undefined) return { otp };
  try {
    return { otp: { ...otp, label: checkOtpLabel(c.userLabel) } };
  } catch (err) {
    if (!(err instanceof ValidationError)) throw err;
    return { otp, note: `its label left out: ${err.message}` };
  }
}

/** An authenticator as a Keycloak otp credential with its key (an export with secrets): base32, which Keycloak reads back as the same bytes. */
export function exportOtpCredential(c: OtpSummary, key: Buffer): KeycloakCredential {
  return {
    id: c.id,
    type: 'otp',
    ...(c.label !== null ? { userLabel: c.label } : {}),
    createdDate: c.createdAt * 1000,
    secretData: JSON.stringify({ value: base32(key) }),
    credentialData: otpCredentialData(c, { secretEncoding: 'BASE32' }),
  };
}
