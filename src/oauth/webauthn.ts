import { createHash } from 'node:crypto';
import { CborError, decodeCbor, decodeCborPrefix } from '../crypto/cbor.js';
import { coseVerify, readCoseKey, type CosePublicKey } from '../crypto/cose-key.js';
import { safeEqual } from '../crypto/random.js';

/**
 * The Relying Party's checks of W3C Web Authentication Level 2 (https://www.w3.org/TR/webauthn-2/):
 * 7.1 "Registering a New Credential" and 7.2 "Verifying an Authentication Assertion". Pure: the caller
 * gives what it expects (origins, RP ID, policy) and a function that consumes the challenge it stored
 * (single use), and stores what comes back.
 */

/** A refusal; `message` is for the page, `detail` for the log. `cloned`: a signature counter that did not increase. */
export class WebAuthnError extends Error {
  constructor(
    message: string,
    readonly detail: string,
    readonly cloned = false,
  ) {
    super(message);
  }
}

export interface Expectations {
  /** Exact origins (scheme://host[:port]) clientDataJSON may name: AUTH_URL's and the realm's extra ones. */
  origins: readonly string[];
  rpId: string;
  userVerification: 'required' | 'preferred' | 'discouraged' | 'not specified';
  /** Consumes the challenge clientDataJSON names (base64url), once; false when unknown, used, expired or another's. */
  consumeChallenge: (challenge: string) => Promise<boolean>;
}

export interface NewCredential {
  credentialId: Buffer;
  /** The COSE key as the authenticator gave it (what Keycloak's credentialPublicKey holds, base64). */
  publicKeyCose: Buffer;
  alg: number;
  /** RFC 4122 text form; all zeros for authenticators that do not tell (or attestation none). */
  aaguid: string;
  signCount: number;
  attestationFormat: string;
}

const sha256 = (b: Buffer | Uint8Array): Buffer => createHash('sha256').update(b).digest();

const refuse = (message: string, detail: string): never => {
  throw new WebAuthnError(message, detail);
};

const KEY_REFUSED = 'Your security key was not accepted. Try again, or use another key.';

/** 5.8.1 CollectedClientData: JSON in UTF-8 with type, challenge and origin (7.1 steps 5-9, 7.2 steps 9-13). */
async function checkClientData(raw: Buffer, type: 'webauthn.create' | 'webauthn.get', e: Expectations): Promise<void> {
  let data: unknown;
  try {
    data = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(raw));
  } catch {
    refuse(KEY_REFUSED, 'clientDataJSON is not JSON in UTF-8');
  }
  if (typeof data !== 'object' || data === null) return refuse(KEY_REFUSED, 'clientDataJSON is not an object');
  const c = data as Record<string, unknown>;
  if (c.type !== type) refuse(KEY_REFUSED, `clientDataJSON.type is not ${type}`);
  if (typeof c.origin !== 'string' || !e.origins.some((o) => safeEqual(o, c.origin as string))) refuse(KEY_REFUSED, `origin ${JSON.stringify(String(c.origin).slice(0, 100))} is not this server's`);
  // 7.2 step 12 / 7.1 step 8: the challenge we sent; consumed here whatever comes next, so it works once.
  if (typeof c.challenge !== 'string' || !/^[A-Za-z0-9_-]{16,128}$/.test(c.challenge) || !(await e.consumeChallenge(c.challenge))) {
    refuse('This request has expired or was already used. Try again.', 'challenge unknown, used, expired or of another sign-in');
  }
  // Our pages are never framed (frame-ancestors 'none'): a ceremony run in a cross-origin frame is not ours (Level 3 7.1 step 10).
  if (c.crossOrigin === true) refuse(KEY_REFUSED, 'crossOrigin true');
  // 5.8.1: tokenBinding "present" would need a binding we cannot check; Level 2 RPs may ignore "supported".
  const tb = c.tokenBinding as { status?: unknown } | undefined;
  if (tb && typeof tb === 'object' && tb.status === 'present') refuse(KEY_REFUSED, 'token binding present');
}

export interface AuthenticatorData {
  rpIdHash: Buffer;
  up: boolean;
  uv: boolean;
  signCount: number;
  attested?: { aaguid: string; credentialId: Buffer; publicKeyCose: Buffer; publicKey: CosePublicKey };
}

function aaguidText(b: Buffer): string {
  const h = b.toString('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

/** 6.1 Authenticator Data: rpIdHash (32), flags (1), signCount (4, big-endian), then 6.5.1 attested credential data when AT is set. */
export function parseAuthenticatorData(raw: Buffer): AuthenticatorData {
  if (raw.length < 37) refuse(KEY_REFUSED, 'authenticator data shorter than 37 bytes');
  const flags = raw[32]!;
  const out: AuthenticatorData = { rpIdHash: raw.subarray(0, 32), up: (flags & 0x01) !== 0, uv: (flags & 0x04) !== 0, signCount: raw.readUInt32BE(33) };
  let pos = 37;
  if (flags & 0x40) {
    if (raw.length < pos + 18) refuse(KEY_REFUSED, 'attested credential data truncated');
    const aaguid = aaguidText(raw.subarray(pos, pos + 16));
    const idLength = raw.readUInt16BE(pos + 16);
    pos += 18;
    // 7.1 step 19 (Level 2 errata; Level 3 step 23): credential ids longer than 1023 bytes are refused.
    if (idLength === 0 || idLength > 1023 || raw.length < pos + idLength) refuse(KEY_REFUSED, 'credential id empty, too long or truncated');
    const credentialId = Buffer.from(raw.subarray(pos, pos + idLength));
    pos += idLength;
    const { value, end } = decodeCborPrefix(raw, pos);
    const publicKeyCose = Buffer.from(raw.subarray(pos, end));
    pos = end;
    out.attested = { aaguid, credentialId, publicKeyCose, publicKey: readCoseKey(value) };
  }
  // ED: extensions follow; we ask for none and do not read them, but they must be one CBOR map.
  if (flags & 0x80) {
    const { value, end } = decodeCborPrefix(raw, pos);
    if (!(value instanceof Map)) refuse(KEY_REFUSED, 'extensions are not a map');
    pos = end;
  }
  if (pos !== raw.length) refuse(KEY_REFUSED, 'trailing bytes after the authenticator data');
  return out;
}

/** 7.1 steps 13-15, 7.2 steps 15-17: the RP ID's hash, user presence, and user verification when required. */
function checkFlags(a: AuthenticatorData, e: Expectations): void {
  if (!a.rpIdHash.equals(sha256(Buffer.from(e.rpId, 'utf8')))) refuse(KEY_REFUSED, 'rpIdHash is not the SHA-256 of the RP ID');
  if (!a.up) refuse(KEY_REFUSED, 'user presence (UP) flag not set');
  if (e.userVerification === 'required' && !a.uv) refuse('Your security key must verify you (PIN or fingerprint). Try again.', 'user verification (UV) required and not done');
}

/** Wraps the parsers' CborError (malformed input) as a refusal. */
function guarded<T>(f: () => T): T {
  try {
    return f();
  } catch (err) {
    if (err instanceof CborError) return refuse(KEY_REFUSED, err.message);
    throw err;
  }
}

/**
 * 7.1: a new credential. `algorithms`: the COSE algorithms the policy allows; `attestation`: the
 * policy's conveyance preference. Attestation formats: "none" (8.7); "packed" self attestation (8.2,
 * no x5c: its signature checked with the credential's own key); any other format, or packed with a
 * certificate, only when the policy asks no attestation ("not specified" or "none"), then taken as none
 * (nothing it says is trusted); refused when the policy asks for one, since Realmgate verifies no
 * attestation certificates.
 */
export async function verifyRegistration(
  input: { clientDataJSON: Buffer; attestationObject: Buffer },
  e: Expectations & { algorithms: readonly number[]; attestation: string; acceptableAaguids: readonly string[] },
): Promise<NewCredential> {
  await checkClientData(input.clientDataJSON, 'webauthn.create', e);
  const clientDataHash = sha256(input.clientDataJSON);
  const att = guarded(() => decodeCbor(input.attestationObject));
  if (!(att instanceof Map)) return refuse(KEY_REFUSED, 'attestationObject is not a map');
  const fmt = att.get('fmt');
  const authDataRaw = att.get('authData');
  const attStmt = att.get('attStmt');
  if (typeof fmt !== 'string' || !(authDataRaw instanceof Uint8Array) || !(attStmt instanceof Map)) return refuse(KEY_REFUSED, 'attestationObject lacks fmt, authData or attStmt');
  const authData = Buffer.from(authDataRaw);
  const a = guarded(() => parseAuthenticatorData(authData));
  checkFlags(a, e);
  if (!a.attested) return refuse(KEY_REFUSED, 'no attested credential data (AT flag) in a registration');
  const cred = a.attested;
  // 7.1 step 16: the algorithm is one of pubKeyCredParams (the realm's webAuthnPolicySignatureAlgorithms).
  if (!e.algorithms.includes(cred.publicKey.alg)) refuse('This kind of security key is not accepted here.', `algorithm ${cred.publicKey.alg} not in the policy`);
  let format = fmt;
  if (fmt === 'none') {
    if (attStmt.size !== 0) refuse(KEY_REFUSED, 'attestation none with a statement');
  } else if (fmt === 'packed' && !attStmt.has('x5c') && !attStmt.has('ecdaaKeyId')) {
    // 8.2 self attestation: alg equals the credential's, sig over authData || clientDataHash by the credential key.
    const sig = attStmt.get('sig');
    if (attStmt.get('alg') !== cred.publicKey.alg || !(sig instanceof Uint8Array)) refuse(KEY_REFUSED, 'packed self attestation with another algorithm or no signature');
    if (!coseVerify(cred.publicKey, Buffer.concat([authData, clientDataHash]), Buffer.from(sig as Uint8Array))) refuse(KEY_REFUSED, 'packed self attestation signature invalid');
  } else if (e.attestation === 'not specified' || e.attestation === 'none' || e.attestation === '') {
    format = 'none';
  } else {
    refuse('This security key\'s attestation cannot be verified here.', `attestation format ${JSON.stringify(fmt.slice(0, 40))} not verified by Realmgate (the policy asks ${e.attestation})`);
  }
  // Keycloak's webAuthnPolicyAcceptableAaguids: when set, only these authenticator models.
  if (e.acceptableAaguids.length > 0 && !e.acceptableAaguids.some((g) => g.toLowerCase() === cred.aaguid)) refuse('This model of security key is not accepted here.', `AAGUID ${cred.aaguid} not acceptable`);
  return { credentialId: cred.credentialId, publicKeyCose: cred.publicKeyCose, alg: cred.publicKey.alg, aaguid: cred.aaguid, signCount: a.signCount, attestationFormat: format };
}

/**
 * 7.2: an assertion by `credential` (the caller found it among the user's, by the id the browser sent:
 * steps 5-6), whose stored counter is `storedSignCount`. Returns the new counter. `userHandle`: when
 * the authenticator gives one, it must be `expectedUserHandle` (step 6).
 */
export async function verifyAssertion(
  input: { clientDataJSON: Buffer; authenticatorData: Buffer; signature: Buffer; userHandle?: Buffer | undefined },
  credential: { publicKeyCose: Buffer; storedSignCount: number; expectedUserHandle: Buffer },
  e: Expectations,
): Promise<{ signCount: number }> {
  if (input.userHandle && input.userHandle.length > 0 && !input.userHandle.equals(credential.expectedUserHandle)) refuse(KEY_REFUSED, 'userHandle is not the user\'s');
  await checkClientData(input.clientDataJSON, 'webauthn.get', e);
  const a = guarded(() => parseAuthenticatorData(input.authenticatorData));
  checkFlags(a, e);
  const key = guarded(() => readCoseKey(credential.publicKeyCose));
  // 7.2 steps 19-20: the signature over authenticatorData || SHA-256(clientDataJSON).
  if (!coseVerify(key, Buffer.concat([input.authenticatorData, sha256(input.clientDataJSON)]), input.signature)) refuse(KEY_REFUSED, 'signature invalid');
  // 7.2 step 21, 6.1.1: when either counter is non-zero, a counter that does not increase means the
  // authenticator may have been cloned: refused (the RP's choice the step leaves open).
  if ((a.signCount !== 0 || credential.storedSignCount !== 0) && a.signCount <= credential.storedSignCount) {
    throw new WebAuthnError(KEY_REFUSED, `signature counter ${a.signCount} not above the stored ${credential.storedSignCount}: possibly a cloned authenticator`, true);
  }
  return { signCount: a.signCount };
}

