import { createHash, generateKeyPairSync, randomBytes, sign, type KeyObject } from 'node:crypto';

/**
 * A software authenticator for tests: keys made with node:crypto, attestation objects and assertions
 * encoded with a CBOR encoder of its own (RFC 8949, the subset WebAuthn uses), so that the server's
 * decoder is checked against an independent encoder, and every field can be made wrong on purpose.
 */

export type CborIn = number | bigint | string | boolean | null | Uint8Array | CborIn[] | Map<CborIn, CborIn> | { [k: string]: CborIn };

function head(major: number, n: number | bigint): Buffer {
  const v = BigInt(n);
  if (v < 24n) return Buffer.from([(major << 5) | Number(v)]);
  if (v < 256n) return Buffer.from([(major << 5) | 24, Number(v)]);
  if (v < 65536n) {
    const b = Buffer.alloc(3);
    b[0] = (major << 5) | 25;
    b.writeUInt16BE(Number(v), 1);
    return b;
  }
  if (v < 4294967296n) {
    const b = Buffer.alloc(5);
    b[0] = (major << 5) | 26;
    b.writeUInt32BE(Number(v), 1);
    return b;
  }
  const b = Buffer.alloc(9);
  b[0] = (major << 5) | 27;
  b.writeBigUInt64BE(v, 1);
  return b;
}

export function cbor(v: CborIn): Buffer {
  if (v === false) return Buffer.from([0xf4]);
  if (v === true) return Buffer.from([0xf5]);
  if (v === null) return Buffer.from([0xf6]);
  if (typeof v === 'number' || typeof v === 'bigint') {
    const b = BigInt(v);
    return b >= 0n ? head(0, b) : head(1, -1n - b);
  }
  if (typeof v === 'string') {
    const bytes = Buffer.from(v, 'utf8');
    return Buffer.concat([head(3, bytes.length), bytes]);
  }
  if (v instanceof Uint8Array) return Buffer.concat([head(2, v.length), Buffer.from(v)]);
  if (Array.isArray(v)) return Buffer.concat([head(4, v.length), ...v.map(cbor)]);
  const entries: Array<[CborIn, CborIn]> = v instanceof Map ? [...v] : Object.entries(v);
  return Buffer.concat([head(5, entries.length), ...entries.flatMap(([k, x]) => [cbor(k), cbor(x)])]);
}

const sha256 = (b: Buffer | string): Buffer => createHash('sha256').update(b).digest();

export type KeyAlg = 'ES256' | 'RS256' | 'EdDSA';

export interface Flags {
  up?: boolean;
  uv?: boolean;
}

/** One credential of a software authenticator. */
export class SoftKey {
  readonly credentialId: Buffer;
  readonly privateKey: KeyObject;
  readonly publicKey: KeyObject;
  signCount = 0;
  constructor(
    readonly alg: KeyAlg = 'ES256',
    o: { credentialId?: Buffer; counter?: boolean } = {},
  ) {
    this.credentialId = o.credentialId ?? randomBytes(32);
    const pair = alg === 'ES256' ? generateKeyPairSync('ec', { namedCurve: 'P-256' }) : alg === 'RS256' ? generateKeyPairSync('rsa', { modulusLength: 2048 }) : generateKeyPairSync('ed25519');
    this.privateKey = pair.privateKey;
    this.publicKey = pair.publicKey;
    this.counts = o.counter !== false;
  }
  /** Whether the authenticator keeps a signature counter (some return 0 always). */
  readonly counts: boolean;

  coseKey(): Buffer {
    const jwk = this.publicKey.export({ format: 'jwk' });
    const b = (s: string | undefined): Buffer => Buffer.from(s!, 'base64url');
    if (this.alg === 'ES256') return cbor(new Map<CborIn, CborIn>([[1, 2], [3, -7], [-1, 1], [-2, b(jwk.x)], [-3, b(jwk.y)]]));
    if (this.alg === 'RS256') return cbor(new Map<CborIn, CborIn>([[1, 3], [3, -257], [-1, b(jwk.n)], [-2, b(jwk.e)]]));
    return cbor(new Map<CborIn, CborIn>([[1, 1], [3, -8], [-1, 6], [-2, b(jwk.x)]]));
  }

  sign(data: Buffer): Buffer {
    if (this.alg === 'EdDSA') return sign(null, data, this.privateKey);
    return sign('sha256', data, this.privateKey);
  }
}

export function authenticatorData(o: { rpId: string; flags?: Flags; signCount: number; attested?: { aaguid?: Buffer; credentialId: Buffer; cose: Buffer } }): Buffer {
  const up = o.flags?.up ?? true;
  const uv = o.flags?.uv ?? true;
  const flags = (up ? 0x01 : 0) | (uv ? 0x04 : 0) | (o.attested ? 0x40 : 0);
  const count = Buffer.alloc(4);
  count.writeUInt32BE(o.signCount);
  const parts = [sha256(o.rpId), Buffer.from([flags]), count];
  if (o.attested) {
    const len = Buffer.alloc(2);
    len.writeUInt16BE(o.attested.credentialId.length);
    parts.push(o.attested.aaguid ?? Buffer.alloc(16), len, o.attested.credentialId, o.attested.cose);
  }
  return Buffer.concat(parts);
}

export function clientData(o: { type: string; challenge: string; origin: string; extra?: Record<string, unknown> }): Buffer {
  return Buffer.from(JSON.stringify({ type: o.type, challenge: o.challenge, origin: o.origin, crossOrigin: false, ...o.extra }));
}

export interface AttestationOptions {
  challenge: string;
  origin: string;
  rpId: string;
  type?: string;
  flags?: Flags;
  fmt?: 'none' | 'packed' | 'fido-u2f';
  aaguid?: Buffer;
  /** packed: sign with another key than the credential's (a forged self attestation). */
  forgeSelfAttestation?: boolean;
}

/** navigator.credentials.create()'s response, as the page's script posts it (base64url fields). */
export function attest(key: SoftKey, o: AttestationOptions): { client_data_json: string; attestation_object: string; transports: string } {
  const cdj = clientData({ type: o.type ?? 'webauthn.create', challenge: o.challenge, origin: o.origin });
  const authData = authenticatorData({ rpId: o.rpId, ...(o.flags ? { flags: o.flags } : {}), signCount: key.signCount, attested: { credentialId: key.credentialId, cose: key.coseKey(), ...(o.aaguid ? { aaguid: o.aaguid } : {}) } });
  const fmt = o.fmt ?? 'none';
  let attStmt: Map<CborIn, CborIn> = new Map();
  if (fmt === 'packed') {
    const signer = o.forgeSelfAttestation ? new SoftKey(key.alg) : key;
    attStmt = new Map<CborIn, CborIn>([['alg', key.alg === 'ES256' ? -7 : key.alg === 'RS256' ? -257 : -8], ['sig', signer.sign(Buffer.concat([authData, sha256(cdj)]))]]);
  } else if (fmt === 'fido-u2f') {
    attStmt = new Map<CborIn, CborIn>([['sig', randomBytes(70)], ['x5c', [randomBytes(300)]]]);
  }
  const obj = cbor(new Map<CborIn, CborIn>([['fmt', fmt], ['attStmt', attStmt], ['authData', authData]]));
  return { client_data_json: cdj.toString('base64url'), attestation_object: obj.toString('base64url'), transports: 'usb' };
}

export interface AssertionOptions {
  challenge: string;
  origin: string;
  rpId: string;
  type?: string;
  flags?: Flags;
  /** The counter to put in the authenticator data (default: the key's, advanced by one when it counts). */
  signCount?: number;
  userHandle?: string;
  badSignature?: boolean;
  /** The credential id to send (default the key's). */
  credentialId?: Buffer;
}

/** navigator.credentials.get()'s response, as the page's script posts it. */
export function assertWith(key: SoftKey, o: AssertionOptions): Record<string, string> {
  if (o.signCount === undefined && key.counts) key.signCount += 1;
  const count = o.signCount ?? (key.counts ? key.signCount : 0);
  const cdj = clientData({ type: o.type ?? 'webauthn.get', challenge: o.challenge, origin: o.origin });
  const authData = authenticatorData({ rpId: o.rpId, ...(o.flags ? { flags: o.flags } : {}), signCount: count });
  let signature = key.sign(Buffer.concat([authData, sha256(cdj)]));
  if (o.badSignature) signature = key.sign(Buffer.concat([authData, sha256(Buffer.from('something else'))]));
  return {
    credential_id: (o.credentialId ?? key.credentialId).toString('base64url'),
    client_data_json: cdj.toString('base64url'),
    authenticator_data: authData.toString('base64url'),
    signature: signature.toString('base64url'),
    user_handle: o.userHandle !== undefined ? Buffer.from(o.userHandle).toString('base64url') : '',
  };
}

/** The options JSON a security key page carries (its form's data-options). */
export function pageOptions(html: string): { challenge: string; rpId?: string; rp?: { id: string }; allowCredentials?: Array<{ id: string }>; excludeCredentials?: Array<{ id: string }>; pubKeyCredParams?: Array<{ alg: number }>; user?: { id: string } } {
  const m = /data-options="([^"]*)"/.exec(html);
  if (!m) throw new Error(`no security key options in the page:\n${html.slice(0, 400)}`);
  return JSON.parse(m[1]!.replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&#96;/g, '`').replace(/&amp;/g, '&'));
}

/**
 * Registers `key` for the user the way the pages do (a challenge given, the attestation checked by
 * registerWebAuthn), for tests that need a user with a security key. AUTH_URL's origin and host.
 */
export async function registerTestKey(store: import('../../src/storage/store.js').Store, authUrl: string, userId: string, key: SoftKey, label = '', o: { passwordless?: boolean } = {}): Promise<void> {
  const { issueChallenge, registerWebAuthn } = await import('../../src/admin/operations/webauthn.js');
  const user = (await store.users.get(userId))!;
  const realm = (await store.realms.get(user.realmId))!;
  const challenge = await issueChallenge(store, realm, `test:${userId}`, 'create');
  const url = new URL(authUrl);
  const r = attest(key, { challenge, origin: url.origin, rpId: realm.webAuthnPolicy.rpId || url.hostname });
  const refused = await registerWebAuthn(store, { authUrl }, { realm, user, boundTo: `test:${userId}`, clientDataJSON: Buffer.from(r.client_data_json, 'base64url'), attestationObject: Buffer.from(r.attestation_object, 'base64url'), transports: ['usb', 'nfc'], label, ...(o.passwordless ? { passwordless: true } : {}) });
  if (refused) throw new Error(refused);
}
