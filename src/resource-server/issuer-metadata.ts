import { createLocalJWKSet, type JSONWebKeySet, type JWTVerifyGetKey } from 'jose';

/** Milliseconds since the epoch; tests pass a clock they can move (src/clock.ts ManualClock fits). */
export interface KitClock {
  nowMs(): number;
}

export interface IssuerMetadataOptions {
  issuer: string;
  clock: KitClock;
  /** How long a fetched JWKS, discovery or realm document is used before it is fetched again. */
  maxAgeSeconds: number;
  /** An unknown kid refetches the JWKS at most once per this many seconds (a forged kid cannot flood the issuer). */
  refetchCooldownSeconds: number;
  timeoutMs: number;
  fetch: typeof fetch;
}

interface Discovery {
  jwksUri: string;
  introspectionEndpoint: string | undefined;
}

interface Cached<T> {
  value: T;
  fetchedAt: number;
}

/**
 * What the kit learns from the issuer over HTTP: the discovery document (OpenID Connect Discovery 1.0),
 * the JWKS it names, and the realm's not-before time. Each is cached; concurrent callers share a fetch;
 * after a failed refetch the last good value is kept.
 */
export class IssuerMetadata {
  private discovery: Cached<Discovery> | undefined;
  private jwks: Cached<{ kids: Set<string>; getKey: JWTVerifyGetKey }> | undefined;
  private notBefore: Cached<number> | undefined;
  private lastKidRefetch = -Infinity;
  private readonly inFlight = new Map<string, Promise<unknown>>();

  constructor(private readonly opts: IssuerMetadataOptions) {}

  private now(): number {
    return this.opts.clock.nowMs();
  }

  private fresh(c: Cached<unknown> | undefined): boolean {
    return c !== undefined && this.now() - c.fetchedAt < this.opts.maxAgeSeconds * 1000;
  }

  private once<T>(key: string, work: () => Promise<T>): Promise<T> {
    let p = this.inFlight.get(key) as Promise<T> | undefined;
    if (!p) {
      p = work().finally(() => this.inFlight.delete(key));
      this.inFlight.set(key, p);
    }
    return p;
  }

  private async getJson(url: string): Promise<{ status: number; body: unknown }> {
    const res = await this.opts.fetch(url, { headers: { accept: 'application/json' }, signal: AbortSignal.timeout(this.opts.timeoutMs), redirect: 'error' });
    if (!res.ok) {
      await res.body?.cancel();
      return { status: res.status, body: undefined };
    }
    try {
      return { status: res.status, body: (await res.json()) as unknown };
    } catch {
      return { status: res.status, body: undefined };
    }
  }

  async getDiscovery(): Promise<Discovery> {
    if (this.discovery && this.fresh(this.discovery)) return this.discovery.value;
    return this.once('discovery', async () => {
      try {
        const { status, body } = await this.getJson(`${this.opts.issuer}/.well-known/openid-configuration`);
        if (!isObject(body)) throw new Error(`discovery document: HTTP ${status}`);
        // OpenID Connect Discovery 1.0, 4.3: the document must name exactly the issuer it was fetched for.
        if (body.issuer !== this.opts.issuer) throw new Error('discovery document names another issuer');
        if (typeof body.jwks_uri !== 'string') throw new Error('discovery document has no jwks_uri');
        const value: Discovery = {
          jwksUri: body.jwks_uri,
          introspectionEndpoint: typeof body.introspection_endpoint === 'string' ? body.introspection_endpoint : undefined,
        };
        this.discovery = { value, fetchedAt: this.now() };
        return value;
      } catch (err) {
        if (this.discovery) return this.discovery.value;
        throw err;
      }
    });
  }

  /**
   * The key set to verify a token with key id `kid`. A kid the cached set does not know means the
   * issuer may have rotated: the set is fetched again, at most once per cooldown.
   */
  async getKeySet(kid: string | undefined): Promise<JWTVerifyGetKey> {
    const cached = this.jwks;
    const known = cached !== undefined && (kid === undefined || cached.value.kids.has(kid));
    if (cached && known && this.fresh(cached)) return cached.value.getKey;
    if (cached && !known) {
      // Only refetches caused by an unknown kid are rate-limited: the first one after a rotation is
      // immediate, and a stream of forged kids costs the issuer one request per cooldown.
      if (this.now() - this.lastKidRefetch < this.opts.refetchCooldownSeconds * 1000) return cached.value.getKey;
      this.lastKidRefetch = this.now();
    }
    return this.once('jwks', async () => {
      try {
        const { jwksUri } = await this.getDiscovery();
        const { status, body } = await this.getJson(jwksUri);
        if (!isObject(body) || !Array.isArray(body.keys)) throw new Error(`JWKS: HTTP ${status}`);
        const set = body as unknown as JSONWebKeySet;
        const kids = new Set(set.keys.map((k) => k.kid).filter((k): k is string => typeof k === 'string'));
        this.jwks = { value: { kids, getKey: createLocalJWKSet(set) }, fetchedAt: this.now() };
        return this.jwks.value.getKey;
      } catch (err) {
        if (this.jwks) return this.jwks.value.getKey;
        throw err;
      }
    });
  }

  /**
   * The realm's not-before time (seconds): tokens issued before it are revoked. Keycloak publishes it
   * as `tokens-not-before` in the realm document at the issuer URL; an issuer without that document
   * has no not-before policy (0).
   */
  async getNotBefore(): Promise<number> {
    if (this.notBefore && this.fresh(this.notBefore)) return this.notBefore.value;
    return this.once('not-before', async () => {
      try {
        const { status, body } = await this.getJson(this.opts.issuer);
        let value = 0;
        if (isObject(body) && typeof body['tokens-not-before'] === 'number') value = body['tokens-not-before'];
        else if (status !== 404 && status !== 200) throw new Error(`realm document: HTTP ${status}`);
        this.notBefore = { value, fetchedAt: this.now() };
        return value;
      } catch (err) {
        if (this.notBefore) return this.notBefore.value;
        throw err;
      }
    });
  }
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
