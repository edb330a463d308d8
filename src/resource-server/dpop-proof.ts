import { createHash, timingSafeEqual } from 'node:crypto';
import { calculateJwkThumbprint, decodeProtectedHeader, errors, importJWK, jwtVerify, type JWK, type JWTPayload } from 'jose';

/**
 * DPoP proofs (RFC 9449 4.3), checked the same way by the authorization server (token endpoint, userinfo)
 * and by the resource-server kit: everything but the replay of the jti, which each keeps where it can
 * (the server in its database, the kit in its process). Pure: no clock, no storage, no HTTP.
 */

/** RFC 9449 4.2: asymmetric algorithms only (never none, never a MAC). */
export const DPOP_ALGS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA', 'Ed25519'] as const;
/** How long after its iat a proof is accepted (Keycloak accepts 10 s plus its 15 s skew; RFC 9449 11.1 leaves it to us). */
export const DPOP_PROOF_LIFETIME = 60;
/** Clock skew allowed for a proof made on a client whose clock is ahead (Keycloak's 15 s). */
export const DPOP_CLOCK_SKEW = 15;
/** A proof is a header value: larger is not a proof (and the server refuses headers over its limit anyway). */
const MAX_PROOF_LENGTH = 8192;
/** RFC 7517 / RFC 7518 6: members that only a private or symmetric key has. */
const PRIVATE_MEMBERS = ['d', 'p', 'q', 'dp', 'dq', 'qi', 'oth', 'k'] as const;
const KEY_TYPES = new Set(['RSA', 'EC', 'OKP']);

/** A proof that is not valid; the message says why (for invalid_dpop_proof's description). */
export class DpopProofError extends Error {}

export interface DpopProof {
  /** RFC 7638 SHA-256 thumbprint of the proof's key (cnf.jkt of the tokens bound to it). */
  jkt: string;
  jti: string;
  iat: number;
  /** The htu as compared (RFC 9449 4.3 item 9: without query and fragment, normalized). */
  htu: string;
}

export interface DpopExpectation {
  /** The request's method (htm). */
  method: string;
  /** The URL the request was addressed to, as this server knows itself (htu; query and fragment ignored). */
  url: string;
  nowSeconds: number;
  /** At a resource: the access token presented, whose hash the proof's ath must be (RFC 9449 4.3 item 11). */
  accessToken?: string;
}

/** RFC 9449 4.2: ath is the base64url SHA-256 of the access token's ASCII text. */
export function accessTokenHash(accessToken: string): string {
  return createHash('sha256').update(accessToken, 'ascii').digest('base64url');
}

/** RFC 9449 4.3 item 9 (RFC 3986 6.2.2, 6.2.3): scheme, host and port normalized, query and fragment dropped. */
export function normalizeHtu(url: string): string | undefined {
  try {
    const u = new URL(url);
    if (u.protocol !== 'https:' && u.protocol !== 'http:') return undefined;
    return `${u.protocol}//${u.host}${u.pathname}`;
  } catch {
    return undefined;
  }
}

function sameText(a: string, b: string): boolean {
  const ab = Buffer.from(a);
  const bb = Buffer.from(b);
  return ab.length === bb.length && timingSafeEqual(ab, bb);
}

const fail = (message: string): DpopProofError => new DpopProofError(message);

/** The proof's public key, refused when the header says anything RFC 9449 4.2 and 4.3 do not allow. */
function publicJwk(header: Record<string, unknown>): { jwk: JWK; alg: string } {
  if (header.typ !== 'dpop+jwt') throw fail('the DPoP proof\'s typ must be dpop+jwt');
  const alg = header.alg;
  if (typeof alg !== 'string' || !(DPOP_ALGS as readonly string[]).includes(alg)) throw fail(`the DPoP proof's alg must be one of ${DPOP_ALGS.join(', ')}`);
  const jwk = header.jwk;
  if (typeof jwk !== 'object' || jwk === null || Array.isArray(jwk)) throw fail('the DPoP proof has no jwk');
  const members = jwk as Record<string, unknown>;
  if (typeof members.kty !== 'string' || !KEY_TYPES.has(members.kty)) throw fail('the DPoP proof\'s jwk must be an RSA, EC or OKP public key');
  if (PRIVATE_MEMBERS.some((m) => m in members)) throw fail('the DPoP proof\'s jwk must not contain a private key');
  return { jwk: members as JWK, alg };
}

/**
 * RFC 9449 4.3 items 1 to 11 but the jti's single use (item 12 is the caller's): the proof's shape, typ,
 * alg, public jwk and signature, its claims, htm, htu, iat within DPOP_PROOF_LIFETIME (and not ahead by more
 * than DPOP_CLOCK_SKEW) and, at a resource, ath. Throws DpopProofError saying what is wrong.
 */
export async function checkDpopProof(proof: string, expect: DpopExpectation): Promise<DpopProof> {
  if (proof.length > MAX_PROOF_LENGTH || !/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/.test(proof)) throw fail('the DPoP proof is not a JWT');
  let header: Record<string, unknown>;
  try {
    header = decodeProtectedHeader(proof) as Record<string, unknown>;
  } catch {
    throw fail('the DPoP proof is not a JWT');
  }
  const { jwk, alg } = publicJwk(header);
  let payload: JWTPayload;
  try {
    const key = await importJWK(jwk, alg);
    ({ payload } = await jwtVerify(proof, key, { algorithms: [alg], typ: 'dpop+jwt', currentDate: new Date(expect.nowSeconds * 1000), clockTolerance: DPOP_CLOCK_SKEW }));
  } catch (err) {
    if (err instanceof errors.JWSSignatureVerificationFailed) throw fail('the DPoP proof\'s signature is not valid');
    if (err instanceof errors.JWTExpired || err instanceof errors.JWTClaimValidationFailed) throw fail(`the DPoP proof is not valid: ${err.message}`);
    // Whatever else the key import or the verification refuses (jose's errors, WebCrypto's DOMException
    // for a point not on the curve or a curve not of the alg) comes from the client's header.
    throw fail('the DPoP proof could not be verified with its jwk');
  }
  const { jti, htm, htu, iat, ath } = payload as Record<string, unknown>;
  // RFC 9449 4.2: jti, htm, htu and iat are required.
  if (typeof jti !== 'string' || jti === '' || jti.length > 256 || typeof htm !== 'string' || typeof htu !== 'string' || typeof iat !== 'number' || !Number.isFinite(iat)) {
    throw fail('the DPoP proof lacks jti, htm, htu or iat');
  }
  if (htm !== expect.method) throw fail('the DPoP proof\'s htm is not the method of this request');
  const target = normalizeHtu(htu);
  if (target === undefined || target !== normalizeHtu(expect.url)) throw fail('the DPoP proof\'s htu is not the URL of this request');
  if (iat > expect.nowSeconds + DPOP_CLOCK_SKEW) throw fail('the DPoP proof was issued in the future');
  if (iat < expect.nowSeconds - DPOP_PROOF_LIFETIME) throw fail(`the DPoP proof was issued more than ${DPOP_PROOF_LIFETIME} s ago`);
  if (expect.accessToken !== undefined) {
    if (typeof ath !== 'string') throw fail('the DPoP proof has no ath (the hash of the access token)');
    if (!sameText(ath, accessTokenHash(expect.accessToken))) throw fail('the DPoP proof\'s ath is not the hash of this access token');
  }
  return { jkt: await calculateJwkThumbprint(jwk, 'sha256'), jti, iat: Math.floor(iat), htu: target };
}

/** Until when a proof's jti must be remembered: past it, the proof's iat is too old anyway. */
export function dpopReplayExpiry(proof: DpopProof): number {
  return proof.iat + DPOP_PROOF_LIFETIME + DPOP_CLOCK_SKEW + 1;
}
