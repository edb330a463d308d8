import crypto from 'node:crypto';
import type { SigningKey } from '../../storage/types.js';
import type { SigningAlg } from '../../crypto/keystore.js';
import { sealPrivateJwk } from '../../crypto/key-encryption.js';
import type { ReportLine } from './import-report.js';

/**
 * Keycloak's signing keys, moved with their realm: a resource server that pinned the realm's public key
 * (Keycloak's `public_key`, a `realm-public-key` setting, a JWKS cached by kid) and the tokens Keycloak
 * signed before the switch keep verifying against Realmgate's JWKS, and Realmgate signs with the same key.
 *
 * The key providers of a realm export (components["org.keycloak.keys.KeyProvider"]), as Keycloak 26 reads
 * them (org.keycloak.keys): `rsa-generated` and `rsa` hold `privateKey` (PEM or its base64 body, PKCS#1 or
 * PKCS#8) and an optional `certificate`, with `algorithm` RS256 unless set and `keyUse` sig unless set;
 * `ecdsa-generated` holds `ecdsaPrivateKey` (PKCS#8) and `ecdsaPublicKey` (SubjectPublicKeyInfo), base64, on
 * the curve `ecdsaEllipticCurveKey`; `eddsa-generated` the same with `eddsa...` names. Each has `priority`,
 * `enabled` and `active` (an active key signs; a passive one only verifies; a disabled one is not
 * published). Keycloak's kid is the base64url SHA-256 of the public key's SubjectPublicKeyInfo
 * (KeyUtils.createKeyId), or, for an RSA key, the `kid` its config names.
 *
 * Realmgate signs RS256 (RSA of 2048 bits or more), ES256 (P-256) and EdDSA (Ed25519): other keys, and keys
 * that do not parse, are reported and left out; the realm then gets a key of its own as before.
 */

type Json = Record<string, unknown>;

/** A signing key of the file that Realmgate can use, with what Keycloak said of it. */
export interface FileSigningKey {
  /** The element of the report ("signing key rsa-generated"). */
  element: string;
  key: SigningKey;
  priority: number;
  /** Keycloak's `active`: it signed (false: passive, it only verified). */
  active: boolean;
  /** What was left out of it (a certificate that is not the key's). */
  notes?: string[];
}

export interface FileSigningKeys {
  keys: FileSigningKey[];
  /** What the report says of the providers left out (encryption keys, other algorithms, unreadable keys). */
  lines: ReportLine[];
}

/** The first value of a component's config entry (Keycloak's MultivaluedHashMap: a list of strings). */
function first(config: Json, name: string): string | undefined {
  const v = config[name];
  const x = Array.isArray(v) ? v[0] : v;
  return typeof x === 'string' ? x : undefined;
}

/** DER bytes from PEM text or a bare base64 body (Keycloak writes the body; an operator may paste PEM). */
function derOf(text: string): Buffer {
  const body = text.replace(/-----(BEGIN|END) [A-Z0-9 ]+-----/g, '').replace(/\s+/g, '');
  if (body === '' || !/^[A-Za-z0-9+/]+={0,2}$/.test(body)) throw new KeyError('is not base64 or PEM');
  return Buffer.from(body, 'base64');
}

class KeyError extends Error {}

function privateKeyOf(text: string, types: ReadonlyArray<'pkcs1' | 'pkcs8'>): crypto.KeyObject {
  const der = derOf(text);
  for (const type of types) {
    try {
      return crypto.createPrivateKey({ key: der, format: 'der', type });
    } catch {
      // the next encoding
    }
  }
  throw new KeyError('is not a private key');
}

function spkiOf(key: crypto.KeyObject): Buffer {
  return crypto.createPublicKey(key).export({ type: 'spki', format: 'der' });
}

/** Keycloak's kid of a key: base64url(SHA-256(SubjectPublicKeyInfo)). */
export function keycloakKid(privateKey: crypto.KeyObject): string {
  return crypto.createHash('sha256').update(spkiOf(privateKey)).digest('base64url');
}

/** A kid as the signing_keys table keeps it (varchar(64)), printable, as a JOSE header carries it. */
const KID = /^[\x21-\x7e]{1,64}$/;

/** The certificate's JWK members (RFC 7517 4.7-4.9), when it certifies this key; Keycloak publishes them. */
function certificateMembers(text: string | undefined, privateKey: crypto.KeyObject, notes: string[]): Json {
  if (!text) return {};
  try {
    const der = derOf(text);
    const cert = new crypto.X509Certificate(der);
    if (!cert.publicKey.equals(crypto.createPublicKey(privateKey))) {
      notes.push('its certificate is not of this key: left out');
      return {};
    }
    return { x5c: [der.toString('base64')], x5t: crypto.createHash('sha1').update(der).digest('base64url'), 'x5t#S256': crypto.createHash('sha256').update(der).digest('base64url') };
  } catch {
    notes.push('its certificate does not parse: left out');
    return {};
  }
}

/** A key read from a provider: its algorithm, the key, the kid its config names, JWK members to publish. */
interface Found {
  alg: SigningAlg;
  key: crypto.KeyObject;
  kid?: string;
  jwk?: Json;
}

/** The key of an RSA provider, or why it is left out. */
function rsaKey(config: Json, notes: string[]): Found | string {
  const use = (first(config, 'keyUse') ?? 'sig').toLowerCase();
  if (use !== 'sig') return 'an encryption key: Realmgate encrypts no tokens';
  const alg = first(config, 'algorithm') ?? 'RS256';
  if (alg !== 'RS256') return `${alg}: Realmgate signs RS256, ES256 and EdDSA only`;
  const text = first(config, 'privateKey');
  if (!text) return 'no private key in the file';
  const key = privateKeyOf(text, ['pkcs1', 'pkcs8']);
  const bits = key.asymmetricKeyType === 'rsa' ? (key.asymmetricKeyDetails?.modulusLength ?? 0) : 0;
  if (bits === 0) throw new KeyError('is not an RSA key');
  // RFC 7518 3.3: a key of 2048 bits or larger MUST be used with RS256.
  if (bits < 2048 || bits > 16384) return `an RSA key of ${bits} bits: RS256 needs 2048 to 16384`;
  const kid = first(config, 'kid');
  return { alg: 'RS256', key, ...(kid !== undefined ? { kid } : {}), jwk: certificateMembers(first(config, 'certificate'), key, notes) };
}

/** The key of an ECDSA or EdDSA provider (PKCS#8 and SubjectPublicKeyInfo, base64), or why it is left out. */
function curveKey(config: Json, prefix: 'ecdsa' | 'eddsa'): Found | string {
  const curve = first(config, `${prefix}EllipticCurveKey`) ?? (prefix === 'ecdsa' ? 'P-256' : 'Ed25519');
  const alg: SigningAlg = prefix === 'ecdsa' ? 'ES256' : 'EdDSA';
  if (curve !== (prefix === 'ecdsa' ? 'P-256' : 'Ed25519')) return `curve ${curve}: Realmgate signs ES256 (P-256) and EdDSA (Ed25519) only`;
  const text = first(config, `${prefix}PrivateKey`);
  if (!text) return 'no private key in the file';
  const key = privateKeyOf(text, ['pkcs8']);
  const ok = prefix === 'ecdsa' ? key.asymmetricKeyType === 'ec' && key.asymmetricKeyDetails?.namedCurve === 'prime256v1' : key.asymmetricKeyType === 'ed25519';
  if (!ok) throw new KeyError(`is not a ${curve} key`);
  const pub = first(config, `${prefix}PublicKey`);
  // The public key Keycloak published must be this key's: a mismatch would publish one key and sign with another.
  if (pub !== undefined && !derOf(pub).equals(spkiOf(key))) throw new KeyError('does not match its public key');
  return { alg, key };
}

const PROVIDERS: Record<string, (config: Json, notes: string[]) => Found | string> = {
  'rsa-generated': rsaKey,
  rsa: rsaKey,
  'ecdsa-generated': (config) => curveKey(config, 'ecdsa'),
  'eddsa-generated': (config) => curveKey(config, 'eddsa'),
};

/** Why a provider that holds no signing key is not moved. */
const NOT_SIGNING: Record<string, string> = {
  'rsa-enc-generated': 'an encryption key: Realmgate encrypts no tokens',
  'hmac-generated': "Keycloak's refresh tokens do not move (their sessions are not exported); Realmgate signs its own with its own key",
  'aes-generated': 'not used by Realmgate',
};

/**
 * The signing keys of a realm export that Realmgate can use, sealed as every stored private key is, and
 * the report's lines for those it cannot. Nothing of a key's material ever reaches the report.
 */
export function readSigningKeys(rep: Json, realmId: string, now: number): FileSigningKeys {
  const components = rep.components !== null && typeof rep.components === 'object' ? (rep.components as Json) : {};
  const providers = Array.isArray(components['org.keycloak.keys.KeyProvider']) ? components['org.keycloak.keys.KeyProvider'] : [];
  const out: FileSigningKeys = { keys: [], lines: [] };
  const seen = new Set<string>();
  for (const raw of providers) {
    const c = raw !== null && typeof raw === 'object' && !Array.isArray(raw) ? (raw as Json) : {};
    const providerId = typeof c.providerId === 'string' ? c.providerId : '?';
    const element = `signing key ${typeof c.name === 'string' ? c.name : providerId}`;
    const config = c.config !== null && typeof c.config === 'object' && !Array.isArray(c.config) ? (c.config as Json) : {};
    const skip = (reason: string): void => {
      out.lines.push({ element, outcome: 'skipped', reason });
    };
    const read = PROVIDERS[providerId];
    if (!read) {
      skip(NOT_SIGNING[providerId] ?? `key provider ${providerId} is not supported`);
      continue;
    }
    if (first(config, 'enabled') === 'false') {
      skip('disabled in Keycloak (not published there either)');
      continue;
    }
    const notes: string[] = [];
    let found: Found | string;
    try {
      found = read(config, notes);
    } catch (err) {
      skip(`its private key ${err instanceof KeyError ? err.message : 'does not parse'}`);
      continue;
    }
    if (typeof found === 'string') {
      skip(found);
      continue;
    }
    const kid = found.kid ?? keycloakKid(found.key);
    if (!KID.test(kid)) {
      skip('its kid is not 1 to 64 printable characters');
      continue;
    }
    if (seen.has(kid)) {
      skip(`kid ${kid} came before in the file`);
      continue;
    }
    seen.add(kid);
    const pub = crypto.createPublicKey(found.key).export({ format: 'jwk' });
    const priv = found.key.export({ format: 'jwk' });
    const priority = Number.parseInt(first(config, 'priority') ?? '0', 10);
    out.keys.push({
      element,
      priority: Number.isFinite(priority) ? priority : 0,
      active: first(config, 'active') !== 'false',
      ...(notes.length > 0 ? { notes } : {}),
      key: {
        kid,
        realmId,
        alg: found.alg,
        publicJwk: JSON.stringify({ ...pub, kid, alg: found.alg, use: 'sig', ...found.jwk }),
        privateJwk: sealPrivateJwk(JSON.stringify({ ...priv, kid, alg: found.alg })),
        status: 'active',
        createdAt: now,
        retiredAt: null,
      },
    });
  }
  return out;
}

/**
 * Which key signs for each algorithm, as Keycloak chooses (the active key of the highest priority): it
 * stays active; every other key is stored retired now, so that it stays published, verifying the tokens
 * Keycloak signed with it, until the longest of them has expired (isPublished), and signs nothing.
 */
export function chooseSigningKeys(keys: readonly FileSigningKey[], now: number): Map<string, FileSigningKey> {
  const signing = new Map<string, FileSigningKey>();
  for (const k of keys) {
    const best = signing.get(k.key.alg);
    if (k.active && (!best || k.priority > best.priority)) signing.set(k.key.alg, k);
  }
  const chosen = new Set(signing.values());
  for (const k of keys) {
    if (!chosen.has(k)) k.key = { ...k.key, status: 'retired', retiredAt: now };
  }
  return signing;
}

/** The base64 DER of a key, as Keycloak's providers keep it in their config. */
const der64 = (key: crypto.KeyObject, type: 'pkcs1' | 'pkcs8' | 'spki'): string => (type === 'spki' ? spkiOf(key) : key.export({ type, format: 'der' })).toString('base64');

/**
 * The realm's published keys as Keycloak key providers (an export with secrets), which readSigningKeys
 * reads back: `rsa` (Keycloak's provider for a given RSA key; it honours the config's kid), and
 * `ecdsa-generated` / `eddsa-generated` with the key pair (Keycloak computes their kid from the key, so it
 * changes there; Realmgate's import keeps the kid written here). The active key of each algorithm is active
 * with priority 100; a retired key still published is passive. `open` opens a sealed private JWK.
 */
export function keyProviders(keys: readonly SigningKey[], open: (stored: string) => string): Json[] {
  return keys.map((k, i) => {
    const key = crypto.createPrivateKey({ key: JSON.parse(open(k.privateJwk)) as crypto.JsonWebKey, format: 'jwk' });
    const jwk = JSON.parse(k.publicJwk) as { x5c?: string[] };
    const common: Record<string, string> = { kid: k.kid, priority: k.status === 'active' ? '100' : '0', enabled: 'true', active: k.status === 'active' ? 'true' : 'false' };
    let providerId: string;
    let config: Record<string, string>;
    if (k.alg === 'RS256') {
      providerId = 'rsa';
      config = { ...common, privateKey: der64(key, 'pkcs1'), algorithm: 'RS256', keyUse: 'SIG', ...(jwk.x5c?.[0] ? { certificate: jwk.x5c[0] } : {}) };
    } else {
      const prefix = k.alg === 'ES256' ? 'ecdsa' : 'eddsa';
      providerId = `${prefix}-generated`;
      config = { ...common, [`${prefix}PrivateKey`]: der64(key, 'pkcs8'), [`${prefix}PublicKey`]: der64(key, 'spki'), [`${prefix}EllipticCurveKey`]: k.alg === 'ES256' ? 'P-256' : 'Ed25519' };
    }
    return { name: `realmgate-${k.alg.toLowerCase()}-${i + 1}`, providerId, subComponents: {}, config: Object.fromEntries(Object.entries(config).map(([n, v]) => [n, [v]])) };
  });
}
