import crypto from 'node:crypto';
import { calculateJwkThumbprint, createLocalJWKSet, exportJWK, generateKeyPair, jwtVerify, type JWK, type JWTPayload } from 'jose';
import { jwsSigner, signCompact, type JwsSigner } from './jws.js';
import type { Store } from '../storage/store.js';
import type { SigningKey } from '../storage/types.js';
import { TtlCache } from '../cache.js';
import { openPrivateJwk, sealPrivateJwk } from './key-encryption.js';
import { nowSeconds, systemClock, type Clock } from '../clock.js';
import { generateHmacKey, importHmacKeys, type RefreshKeys } from './refresh-jwt.js';

/** The algorithm policy, in one table: what Realmgate signs with and how each key is generated. */
export const SIGNING_ALGS = {
  RS256: { generate: () => generateKeyPair('RS256', { modulusLength: 2048, extractable: true }) },
  ES256: { generate: () => generateKeyPair('ES256', { extractable: true }) },
  EdDSA: { generate: () => generateKeyPair('Ed25519', { extractable: true }) },
} as const;

export type SigningAlg = keyof typeof SIGNING_ALGS;

export function isSigningAlg(v: string): v is SigningAlg {
  return Object.hasOwn(SIGNING_ALGS, v);
}

export async function generateSigningKey(realmId: string, alg: SigningAlg, now: number): Promise<SigningKey> {
  const { publicKey, privateKey } = await SIGNING_ALGS[alg].generate();
  const pub = await exportJWK(publicKey);
  const kid = await calculateJwkThumbprint(pub);
  const priv = await exportJWK(privateKey);
  return {
    kid,
    realmId,
    alg,
    publicJwk: JSON.stringify({ ...pub, kid, alg, use: 'sig' }),
    privateJwk: sealPrivateJwk(JSON.stringify({ ...priv, kid, alg })),
    status: 'active',
    createdAt: now,
  };
}

type Signer = JwsSigner;

interface RealmKeys {
  /** The realm's signing key (its signing algorithm): access tokens, and ID tokens of that algorithm. */
  signer: Signer | undefined;
  /** The newest active key of each algorithm (ID tokens of clients that chose another algorithm). */
  byAlg: Map<string, Signer>;
  jwks: { keys: JWK[] };
  verifier: ReturnType<typeof createLocalJWKSet>;
  /** The HMAC keys of refresh tokens (never published). */
  refresh: RefreshKeys | undefined;
}

/** Signing keys per realm, imported once and cached; the JWKS document is prebuilt. */
export class KeyStore {
  private readonly cache: TtlCache<RealmKeys>;

  constructor(
    private readonly store: Store,
    ttlMs: number,
    private readonly clock: Clock = systemClock,
  ) {
    this.cache = new TtlCache<RealmKeys>(ttlMs, 10_000, () => clock.nowMs());
  }

  private load(realmId: string): Promise<RealmKeys | undefined> {
    return this.cache.get(realmId, async () => {
      const realm = await this.store.realms.get(realmId);
      const now = nowSeconds(this.clock);
      const keys = (await this.store.keys.list(realmId)).filter((k) => realm && isPublished(k, realm.accessTokenLifetime, now));
      // Keys come newest first: the newest active key of each algorithm signs for it.
      const byAlg = new Map<string, Signer>();
      for (const k of keys) {
        if (k.status !== 'active' || byAlg.has(k.alg)) continue;
        byAlg.set(k.alg, jwsSigner(k.alg, k.kid, JSON.parse(openPrivateJwk(k.privateJwk)) as crypto.JsonWebKey));
      }
      const newest = keys.find((k) => k.status === 'active');
      const signer = (realm && byAlg.get(realm.signingAlg)) ?? (newest ? byAlg.get(newest.alg) : undefined);
      const jwks = { keys: keys.map((k) => JSON.parse(k.publicJwk) as JWK) };
      const refresh = importHmacKeys(await this.store.hmacKeys.list(realmId));
      return { signer, byAlg, jwks, verifier: createLocalJWKSet(jwks), refresh };
    });
  }

  async jwks(realmId: string): Promise<{ keys: JWK[] }> {
    return (await this.load(realmId))?.jwks ?? { keys: [] };
  }

  /** The kid of the realm's active signing key, if it has one. */
  async activeKid(realmId: string): Promise<string | undefined> {
    return (await this.load(realmId))?.signer?.header.kid;
  }

  /** The algorithm of the realm's active signing key. */
  async algorithm(realmId: string): Promise<string> {
    const alg = (await this.load(realmId))?.signer?.header.alg;
    if (!alg) throw new Error(`realm ${realmId} has no active signing key`);
    return alg;
  }

  /**
   * Signs with the realm's key or, given `alg`, with its active key of that algorithm, generated on
   * first use (a client's id_token_signed_response_alg; a rotation retires it like the others).
   */
  async sign(realmId: string, payload: JWTPayload, alg?: SigningAlg, opts: { typ?: string } = {}): Promise<string> {
    let keys = await this.load(realmId);
    let signer = alg ? keys?.byAlg.get(alg) : keys?.signer;
    if (!signer && alg && keys?.signer) {
      await this.ensureAlgKey(realmId, alg, nowSeconds(this.clock));
      keys = await this.load(realmId);
      signer = keys?.byAlg.get(alg);
    }
    if (!signer) throw new Error(`realm ${realmId} has no active signing key`);
    // A compact JWS over the serialized claims: SignJWT would copy and re-validate them on every call.
    return signCompact(signer, JSON.stringify(payload), opts.typ);
  }

  /**
   * Verifies a JWT signed by one of the realm's published keys (the active one or one still in the
   * JWKS after a rotation); undefined when the signature or the issuer does not match.
   */
  async verify(realmId: string, token: string, opts: { issuer: string; nowSeconds: number }): Promise<JWTPayload | undefined> {
    const keys = await this.load(realmId);
    if (!keys) return undefined;
    try {
      const { payload } = await jwtVerify(token, keys.verifier, {
        issuer: opts.issuer,
        algorithms: Object.keys(SIGNING_ALGS),
        currentDate: new Date(opts.nowSeconds * 1000),
      });
      return payload;
    } catch {
      return undefined;
    }
  }

  /** Makes sure the realm has an active key of `alg` besides its signing key (for ID tokens). */
  async ensureAlgKey(realmId: string, alg: SigningAlg, now: number): Promise<void> {
    const keys = await this.store.keys.list(realmId);
    if (keys.some((k) => k.status === 'active' && k.alg === alg)) return;
    await this.store.keys.insert(await generateSigningKey(realmId, alg, now));
    this.cache.clear();
  }

  /** The algorithms the realm's active keys sign with. */
  async activeAlgorithms(realmId: string): Promise<string[]> {
    return [...((await this.load(realmId))?.byAlg.keys() ?? [])];
  }

  /** Makes sure the realm has an active key, generating one with the realm's algorithm when it has none. */
  async ensureKey(realmId: string, alg: SigningAlg, now: number): Promise<void> {
    const keys = await this.store.keys.list(realmId);
    if (keys.some((k) => k.status === 'active')) return;
    await this.store.keys.insert(await generateSigningKey(realmId, alg, now));
    this.cache.clear();
  }

  /**
   * The realm's refresh token keys. A realm without one (created before refresh tokens were JWTs, or by
   * a door that did not make one) gets it here, so that no path can fail for want of it.
   */
  async refreshKeys(realmId: string): Promise<RefreshKeys> {
    const loaded = (await this.load(realmId))?.refresh;
    if (loaded) return loaded;
    await this.ensureRefreshKey(realmId, nowSeconds(this.clock));
    const keys = (await this.load(realmId))?.refresh;
    if (!keys) throw new Error(`realm ${realmId} has no refresh token key`);
    return keys;
  }

  /** Makes sure the realm has an active HMAC key for its refresh tokens. */
  async ensureRefreshKey(realmId: string, now: number): Promise<void> {
    const keys = await this.store.hmacKeys.list(realmId);
    if (keys.some((k) => k.status === 'active')) return;
    await this.store.hmacKeys.insert(generateHmacKey(realmId, now));
    this.cache.clear();
  }

  clear(): void {
    this.cache.clear();
  }
}

/**
 * A retired key stays in the JWKS, and keeps verifying, until the longest token it may have signed (an
 * access or id token, both living accessTokenLifetime) has expired.
 */
export function isPublished(key: SigningKey, tokenLifetime: number, now: number): boolean {
  return key.status === 'active' || (key.retiredAt != null && key.retiredAt + tokenLifetime > now);
}

export function s256(verifier: string): string {
  return crypto.createHash('sha256').update(verifier).digest('base64url');
}
