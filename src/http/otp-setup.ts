import type { Services } from '../services.js';
import type { Realm } from '../storage/types.js';
import { setupKey } from '../crypto/otp-secret.js';
import { base32, otpauthUri } from '../crypto/totp.js';
import { OTP_POLICY } from '../admin/operations/otp.js';
import { qrSvg } from '../views/qr.js';
import type { SafeHtml } from '../views/html.js';
import { ENGLISH, type Translator } from '../i18n/translator.js';

/**
 * What the setup page of an authenticator shows and its form checks: the key (derived from `context`, the
 * sign-in it is set up in), as base32 to type and as the otpauth URI in a QR code (the realm's display
 * name is the issuer the app shows, the username the account).
 */
/** `tr`: the language of the page the QR code goes on (its label). */
export async function otpSetup(services: Services, realm: Realm, username: string, context: string, tr: Translator = ENGLISH): Promise<{ key: Buffer; base32: string; uri: string; qr: SafeHtml }> {
  const key = await setupKey(services.store, context);
  const uri = otpauthUri({ issuer: realm.displayName ?? realm.id, account: username, key, algorithm: OTP_POLICY.algorithm, digits: OTP_POLICY.digits, period: OTP_POLICY.period });
  return { key, base32: base32(key), uri, qr: await qrSvg(uri, tr.t('loginTotpQrCode')) };
}
