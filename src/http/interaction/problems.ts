// The words of a refused form that the admin operations return (src/admin/operations: enrollOtp,
// completePasswordUpdate, registerWebAuthn, checkWebAuthnAssertion, completeProfileUpdate; English, as
// their other callers, the admin API and the CLI, want them), as messages in the page's language. Words
// not listed here (a password policy's sentence, a validation message) stay as they are.
import { msg, type Msg, type Text } from '../../i18n/translator.js';
import type { MessageKey } from '../../i18n/catalog.js';
import { historyFailure, policyFailures, storedPolicy } from '../../admin/password-policy.js';
import type { Realm, User } from '../../storage/types.js';
import { localizedFailures } from '../../views/password-rule.js';

export const EXACT: ReadonlyMap<string, MessageKey> = new Map<string, MessageKey>([
  ['Enter the code your authenticator app shows.', 'missingTotpMessage'],
  ['Invalid authenticator code. Check the time on your phone, then try the new code.', 'invalidTotpSetupMessage'],
  ['The device name must have at most 255 characters and no control characters.', 'invalidTotpDeviceNameMessage'],
  ['Enter a new password.', 'enterNewPasswordMessage'],
  ['The two passwords do not match.', 'invalidPasswordConfirmMessage'],
  ['Choose a password different from your current one.', 'passwordSameAsCurrentMessage'],
  ["This account's password is managed by the organization's user directory (LDAP) and cannot be changed here. Change it there.", 'federatedPasswordMessage'],
  ['The name must have at most 255 characters and no control characters.', 'webauthnInvalidNameMessage'],
  ['Your browser sent no security key. Try again.', 'webauthnNoKeyMessage'],
  ['This security key is registered already.', 'webauthnKeyExistsMessage'],
  ['Your browser sent no security key response. Try again.', 'webauthnNoResponseMessage'],
  ['This security key is not registered for your account.', 'webauthnKeyUnknownMessage'],
  ['Your security key was not accepted. Try again.', 'webauthnRetryMessage'],
  ['Your security key was not accepted. Try again, or use another key.', 'webauthnKeyRefusedMessage'],
  ['This request has expired or was already used. Try again.', 'webauthnChallengeExpiredMessage'],
  ['Your security key must verify you (PIN or fingerprint). Try again.', 'webauthnUserVerificationMessage'],
  ['This kind of security key is not accepted here.', 'webauthnAlgorithmRefusedMessage'],
  ["This security key's attestation cannot be verified here.", 'webauthnAttestationRefusedMessage'],
  ['This model of security key is not accepted here.', 'webauthnModelRefusedMessage'],
  ['This passkey was not accepted. Try again, or sign in with your password.', 'passkeyNotAcceptedMessage'],
  ['Please specify email.', 'missingEmailMessage'],
  ['Email already exists.', 'emailExistsMessage'],
  ['Invalid email address.', 'invalidEmailMessage'],
  ['Please specify first name.', 'missingFirstNameMessage'],
  ['Please specify last name.', 'missingLastNameMessage'],
  ['Invalid first name.', 'invalidFirstNameMessage'],
  ['Invalid last name.', 'invalidLastNameMessage'],
]);

const PATTERNS: ReadonlyArray<[RegExp, MessageKey]> = [
  [/^You have (\d+) authenticators already: remove one first\.$/, 'tooManyAuthenticatorsMessage'],
  [/^You have (\d+) security keys already: remove one first\.$/, 'tooManySecurityKeysMessage'],
];

/** `text` as a message when it is one of the known refusals (its English is the same words), else as it is. */
export function problemText(text: string): Text {
  const key = EXACT.get(text);
  if (key !== undefined) return msg(key);
  for (const [re, k] of PATTERNS) {
    const m = re.exec(text);
    if (m) return msg(k, m[1]!);
  }
  return text;
}

/**
 * completePasswordUpdate's refusal of `password` as a message: a policy's sentence ("The password must
 * ...") from the rules the password fails (the history when no other rule), else problemText.
 */
export function passwordProblemText(problem: string, realm: Pick<Realm, 'passwordPolicy'>, user: Pick<User, 'username' | 'email'>, password: string): Text {
  if (!problem.startsWith('The password must ')) return problemText(problem);
  const policy = storedPolicy(realm.passwordPolicy);
  const failures = policyFailures(policy, { password, username: user.username, email: user.email });
  if (failures.length === 0 && policy.passwordHistory) failures.push(historyFailure(policy.passwordHistory));
  return localizedFailures(failures, problem);
}

/** problemText of each. */
export function problemTexts(texts: readonly string[]): Array<string | Msg> {
  return texts.map(problemText);
}
