import { createPublicKey, verify as cryptoVerify, type KeyObject } from 'node:crypto';
import { CborError, decodeCbor, type CborValue } from './cbor.js';

/**
 * COSE public keys (RFC 9052 7, RFC 9053) as WebAuthn authenticators give them (W3C WebAuthn Level 2
 * 6.5.2, credentialPublicKey), and the signatures they make: ES256 (-7, P-256; WebAuthn 6.5.5: an ASN.1
 * DER signature), RS256 (-257, RSASSA-PKCS1-v1_5 with SHA-256) and EdDSA (-8, Ed25519).
 */

export const COSE_ALGORITHMS = { ES256: -7, RS256: -257, EdDSA: -8 } as const;
export type CoseAlgorithmName = keyof typeof COSE_ALGORITHMS;

export function coseAlgorithmName(alg: number): CoseAlgorithmName | undefined {
  return (Object.keys(COSE_ALGORITHMS) as CoseAlgorithmName[]).find((n) => COSE_ALGORITHMS[n] === alg);
}

export interface CosePublicKey {
  alg: number;
  key: KeyObject;
}

const b64u = (v: CborValue | undefined, bytes?: number): string => {
  if (!(v instanceof Uint8Array) || (bytes !== undefined && v.length !== bytes) || v.length === 0) throw new CborError('COSE key: a coordinate is missing or of the wrong size');
  return Buffer.from(v).toString('base64url');
};

/** Reads a COSE key (already decoded, or its bytes); throws CborError for a key type or algorithm not listed above. */
export function readCoseKey(input: Uint8Array | CborValue): CosePublicKey {
  const m = input instanceof Uint8Array ? decodeCbor(input) : input;
  if (!(m instanceof Map)) throw new CborError('COSE key: not a map');
  const kty = m.get(1);
  const alg = m.get(3);
  if (typeof alg !== 'number') throw new CborError('COSE key: no algorithm');
  try {
    if (alg === COSE_ALGORITHMS.ES256) {
      // RFC 9053 7.1.1: kty EC2 (2), crv P-256 (1), x and y 32 bytes each.
      if (kty !== 2 || m.get(-1) !== 1) throw new CborError('COSE key: ES256 needs an EC2 key on P-256');
      return { alg, key: createPublicKey({ key: { kty: 'EC', crv: 'P-256', x: b64u(m.get(-2), 32), y: b64u(m.get(-3), 32) }, format: 'jwk' }) };
    }
    if (alg === COSE_ALGORITHMS.RS256) {
      // RFC 8230 4: kty RSA (3), n (-1) and e (-2).
      if (kty !== 3) throw new CborError('COSE key: RS256 needs an RSA key');
      const n = m.get(-1);
      if (!(n instanceof Uint8Array) || n.length < 256 || n.length > 1024) throw new CborError('COSE key: RSA modulus of 2048 to 8192 bits only');
      return { alg, key: createPublicKey({ key: { kty: 'RSA', n: b64u(n), e: b64u(m.get(-2)) }, format: 'jwk' }) };
    }
    if (alg === COSE_ALGORITHMS.EdDSA) {
      // RFC 9053 7.2: kty OKP (1), crv Ed25519 (6), x 32 bytes.
      if (kty !== 1 || m.get(-1) !== 6) throw new CborError('COSE key: EdDSA needs an OKP key on Ed25519');
      return { alg, key: createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: b64u(m.get(-2), 32) }, format: 'jwk' }) };
    }
  } catch (err) {
    if (err instanceof CborError) throw err;
    // createPublicKey refuses a point not on the curve, or a malformed RSA key.
    throw new CborError('COSE key: not a valid public key');
  }
  throw new CborError(`COSE key: algorithm ${alg} is not supported`);
}

/** Whether `signature` is `key`'s signature over `data`; never throws (a malformed signature is false). */
export function coseVerify(k: CosePublicKey, data: Buffer, signature: Buffer): boolean {
  try {
    if (k.alg === COSE_ALGORITHMS.EdDSA) return cryptoVerify(null, data, k.key, signature);
    return cryptoVerify('sha256', data, { key: k.key, dsaEncoding: 'der' }, signature);
  } catch {
    return false;
  }
}
