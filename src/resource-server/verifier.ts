import { decodeProtectedHeader, errors, jwtVerify, type JWTPayload } from 'jose';
import { IssuerMetadata, type KitClock } from './issuer-metadata.js';
import { insufficientScope, invalidDpop, invalidRequest, invalidToken, noToken, unavailable, type BearerError } from './errors.js';
import { checkDpopProof, dpopReplayExpiry, DpopProofError } from './dpop-proof.js';

export interface VerifierOptions {
  /** The realm's issuer, e.g. `https://login.example.com/auth/realms/acme` (no trailing slash). */
  issuer: string;
  /** This API's name in the tokens' `aud` claim (one of them, when several are accepted). */
  audience: string | string[];
  /** Scopes every call needs (each one must be granted); routes may add more. */
  requiredScopes?: string[];
  /** The token must have been issued for this organization (Keycloak's `organization` claim), or one of these. */
  organization?: string | string[];
  /** Seconds of clock skew allowed on exp, iat and nbf (default 0). */
  clockTolerance?: number;
  /** A confidential client's credentials, for calls that ask to introspect (RFC 7662). */
  introspection?: { clientId: string; clientSecret: string };
  /** `realm` in the WWW-Authenticate challenge. */
  realm?: string;
  /** Source of time (default: the system clock). */
  clock?: KitClock;
  /** Keys, discovery and not-before are cached this long (default 300 s). */
  cacheMaxAgeSeconds?: number;
  /** An unknown key id refetches the JWKS at most once per this many seconds (default 30). */
  refetchCooldownSeconds?: number;
  /** Timeout of each request to the issuer (default 5000 ms). */
  timeoutMs?: number;
  /** Signature algorithms accepted (default: the asymmetric ones Realmgate and Keycloak sign with). */
  algorithms?: string[];
  /**
   * This API's external base URL as its clients call it (`https://api.example.com`, or with a path prefix):
   * the htu a DPoP proof must name is this plus the request's path (RFC 9449 4.3; never taken from the Host
   * header, which the client chooses). Without it, verifyRequest refuses DPoP requests.
   */
  publicUrl?: string;
  /** How many DPoP proof ids (jti) are remembered to refuse a replay (default 10000; the oldest are forgotten first). */
  dpopReplayCacheSize?: number;
  fetch?: typeof fetch;
}

/** What a verified access token says (Keycloak's claims; more may be present). */
export interface AccessTokenClaims extends JWTPayload {
  iss: string;
  sub: string;
  exp: number;
  iat: number;
  scope: string;
  azp?: string;
  client_id?: string;
  sid?: string;
  organization?: string[] | Record<string, unknown>;
}

export interface VerifyOptions {
  /** Scopes this call needs on top of the verifier's requiredScopes. */
  requiredScopes?: string[];
  /** Ask the issuer too (RFC 7662), so a revoked token is refused at once rather than when it expires. */
  introspect?: boolean;
  /**
   * RFC 9449: the request's DPoP header (undefined when absent), its method and its full URL, needed for an
   * `Authorization: DPoP <token>` (verifyRequest fills it in from the request).
   */
  dpop?: { proof: string | undefined; method: string; url: string };
}

/** What verifyRequest reads of a request (node:http, Express, Fastify). */
export interface RequestLike {
  headers: Record<string, string | string[] | undefined>;
  method?: string | undefined;
  url?: string | undefined;
}

export type VerifyResult = { ok: true; claims: AccessTokenClaims; scopes: string[] } | { ok: false; error: BearerError };

export interface Verifier {
  /** Verifies a bearer token, given bare or as the whole Authorization header value. */
  verify(tokenOrAuthorization: string | undefined, opts?: VerifyOptions): Promise<VerifyResult>;
  /** verify() of a request's Authorization header, with its DPoP header, method and URL (publicUrl + its path). */
  verifyRequest(req: RequestLike, opts?: VerifyOptions): Promise<VerifyResult>;
  readonly realm: string | undefined;
}

const DEFAULT_ALGORITHMS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA', 'Ed25519'];
// RFC 6750 2.1: b64token = 1*( ALPHA / DIGIT / "-" / "." / "_" / "~" / "+" / "/" ) *"="
const B64TOKEN = /^[A-Za-z0-9\-._~+/]+=*$/;
const MAX_TOKEN_LENGTH = 16 * 1024;

/** A verifier for access tokens of one issuer, to share across requests (it caches the issuer's keys). */
export function createVerifier(options: VerifierOptions): Verifier {
  const issuer = options.issuer.replace(/\/+$/, '');
  const clock = options.clock ?? { nowMs: () => Date.now() };
  const fetchFn = options.fetch ?? globalThis.fetch;
  const audiences = Array.isArray(options.audience) ? options.audience : [options.audience];
  if (audiences.length === 0 || audiences.some((a) => !a)) throw new TypeError('createVerifier: audience is required');
  const organizations = options.organization === undefined ? undefined : Array.isArray(options.organization) ? options.organization : [options.organization];
  const metadata = new IssuerMetadata({
    issuer,
    clock,
    fetch: fetchFn,
    maxAgeSeconds: options.cacheMaxAgeSeconds ?? 300,
    refetchCooldownSeconds: options.refetchCooldownSeconds ?? 30,
    timeoutMs: options.timeoutMs ?? 5000,
  });

  const replayCacheSize = options.dpopReplayCacheSize ?? 10_000;
  /** jti (with htu) -> until when it must be remembered; in insertion order, so the oldest go first. */
  const seenProofs = new Map<string, number>();

  async function verify(input: string | undefined, opts: VerifyOptions = {}): Promise<VerifyResult> {
    const extracted = extractToken(input);
    if ('status' in extracted) return fail(extracted);
    const token = extracted.token;

    const checked = await checkJwt(token);
    if (!checked.ok) return checked;
    const { claims } = checked;
    const bound = await checkBinding(token, claims, extracted.scheme, opts.dpop);
    if (bound !== true) return fail(bound);

    const scopes = typeof claims.scope === 'string' ? claims.scope.split(' ').filter(Boolean) : [];
    const needed = [...(options.requiredScopes ?? []), ...(opts.requiredScopes ?? [])];
    const missing = needed.filter((s) => !scopes.includes(s));
    if (missing.length > 0) return fail(insufficientScope(`the token lacks scope ${missing.join(' ')}`, [...new Set(needed)].join(' ')));

    if (organizations && !organizationsOf(claims).some((o) => organizations.includes(o))) {
      // A valid token for the wrong tenant: a privilege it lacks rather than a bad token (RFC 6750 3.1).
      return fail(insufficientScope('the token is not for this organization', [...new Set(needed)].join(' ')));
    }

    if (opts.introspect) {
      const active = await introspect(token);
      if (active !== true) return fail(active);
    }
    return { ok: true, claims, scopes };
  }

  /**
   * RFC 9449 7: a DPoP-bound token (cnf.jkt) only under the DPoP scheme with a valid proof of its key for
   * this request (htm, htu, ath, a jti not seen before by this process); as Bearer it is refused (7.1).
   */
  async function checkBinding(token: string, claims: AccessTokenClaims, scheme: 'Bearer' | 'DPoP', dpop: VerifyOptions['dpop']): Promise<true | BearerError> {
    const cnf = claims.cnf as { jkt?: unknown } | undefined;
    const jkt = typeof cnf?.jkt === 'string' ? cnf.jkt : undefined;
    if (scheme === 'Bearer') return jkt === undefined ? true : invalidDpop('invalid_token', 'the token is DPoP-bound: send it with the DPoP scheme and a proof');
    if (jkt === undefined) return invalidDpop('invalid_token', 'the token is not DPoP-bound: send it as a Bearer token');
    if (!dpop?.proof) return invalidDpop('invalid_dpop_proof', 'DPoP proof is missing');
    const nowSeconds = Math.floor(clock.nowMs() / 1000);
    let proof;
    try {
      proof = await checkDpopProof(dpop.proof, { method: dpop.method, url: dpop.url, nowSeconds, accessToken: token });
    } catch (err) {
      if (err instanceof DpopProofError) return invalidDpop('invalid_dpop_proof', err.message);
      throw err;
    }
    if (proof.jkt !== jkt) return invalidDpop('invalid_dpop_proof', "the DPoP proof's key is not the one the token is bound to");
    // RFC 9449 11.1: a proof is used once (within this process; run one instance, or accept that a proof
    // could be replayed once at each instance within its minute).
    const id = `${proof.htu}\0${proof.jti}`;
    const until = seenProofs.get(id);
    if (until !== undefined && until >= nowSeconds) return invalidDpop('invalid_dpop_proof', 'the DPoP proof was used already');
    if (seenProofs.size >= replayCacheSize) {
      for (const [k, exp] of seenProofs) if (exp < nowSeconds) seenProofs.delete(k);
      while (seenProofs.size >= replayCacheSize) seenProofs.delete(seenProofs.keys().next().value as string);
    }
    seenProofs.delete(id);
    seenProofs.set(id, dpopReplayExpiry(proof));
    return true;
  }

  function verifyRequest(req: RequestLike, opts: VerifyOptions = {}): Promise<VerifyResult> {
    const authorization = one(req.headers.authorization);
    if (opts.dpop || !/^dpop\s/i.test(authorization ?? '')) return verify(authorization, opts);
    if (!options.publicUrl) return Promise.resolve(fail(invalidDpop('invalid_dpop_proof', 'this API does not accept DPoP (no publicUrl configured)')));
    const url = options.publicUrl.replace(/\/+$/, '') + (req.url ?? '/');
    return verify(authorization, { ...opts, dpop: { proof: one(req.headers.dpop), method: req.method ?? 'GET', url } });
  }

  async function checkJwt(token: string): Promise<VerifyResult> {
    let kid: string | undefined;
    let typ: string | undefined;
    try {
      const header = decodeProtectedHeader(token);
      kid = header.kid;
      typ = header.typ;
    } catch {
      return fail(invalidToken('the token is not a JWT'));
    }
    let payload: JWTPayload;
    try {
      const keys = await metadata.getKeySet(kid);
      ({ payload } = await jwtVerify(token, keys, {
        issuer,
        audience: audiences,
        algorithms: options.algorithms ?? DEFAULT_ALGORITHMS,
        currentDate: new Date(clock.nowMs()),
        clockTolerance: options.clockTolerance ?? 0,
        requiredClaims: ['exp', 'iat', 'sub'],
      }));
    } catch (err) {
      return fail(jwtError(err));
    }
    // Only access tokens: Keycloak marks them typ "Bearer", RFC 9068 ones carry the header typ at+jwt.
    // An ID token or a refresh token sent as a bearer token is refused even when its audience fits.
    const isAccessToken = payload.typ === 'Bearer' || /^(application\/)?at\+jwt$/i.test(typ ?? '');
    if (!isAccessToken) return fail(invalidToken('the token is not an access token'));
    try {
      const notBefore = await metadata.getNotBefore();
      if ((payload.iat ?? 0) < notBefore) return fail(invalidToken('the token was revoked by the issuer'));
    } catch {
      return fail(unavailable('the issuer could not be reached'));
    }
    return { ok: true, claims: payload as AccessTokenClaims, scopes: [] };
  }

  async function introspect(token: string): Promise<true | BearerError> {
    const creds = options.introspection;
    if (!creds) throw new TypeError('verify({ introspect: true }) needs the introspection option of createVerifier');
    try {
      const { introspectionEndpoint } = await metadata.getDiscovery();
      if (!introspectionEndpoint) return unavailable('the issuer has no introspection endpoint');
      const res = await fetchFn(introspectionEndpoint, {
        method: 'POST',
        headers: {
          // RFC 6749 2.3.1: id and secret are form-urlencoded before base64.
          authorization: `Basic ${Buffer.from(`${formEncode(creds.clientId)}:${formEncode(creds.clientSecret)}`).toString('base64')}`,
          'content-type': 'application/x-www-form-urlencoded',
          accept: 'application/json',
        },
        body: new URLSearchParams({ token, token_type_hint: 'access_token' }).toString(),
        signal: AbortSignal.timeout(options.timeoutMs ?? 5000),
        redirect: 'error',
      });
      if (!res.ok) {
        await res.body?.cancel();
        return unavailable(`introspection failed (HTTP ${res.status})`);
      }
      const body = (await res.json()) as { active?: unknown };
      // RFC 7662 2.2: anything but active true means the token must not be accepted.
      return body.active === true ? true : invalidToken('the token is not active');
    } catch {
      return unavailable('the issuer could not be reached');
    }
  }

  return { verify, verifyRequest, realm: options.realm };
}

function fail(error: BearerError): { ok: false; error: BearerError } {
  return { ok: false, error };
}

/** A header's one value: a repeated header (an array) counts as none. */
function one(v: string | string[] | undefined): string | undefined {
  return typeof v === 'string' ? v : undefined;
}

function extractToken(input: string | undefined): { token: string; scheme: 'Bearer' | 'DPoP' } | BearerError {
  const value = (input ?? '').trim();
  if (value === '') return noToken();
  let token = value;
  let scheme: 'Bearer' | 'DPoP' = 'Bearer';
  const space = value.indexOf(' ');
  if (space >= 0) {
    const name = value.slice(0, space).toLowerCase();
    // RFC 6750 3.1: a request with another scheme carries no bearer token: a bare challenge, no error code.
    if (name !== 'bearer' && name !== 'dpop') return noToken();
    // RFC 9449 7.1: DPoP <token>.
    if (name === 'dpop') scheme = 'DPoP';
    token = value.slice(space + 1).trim();
    if (token === '') return invalidRequest(`the ${scheme} credentials are empty`);
  }
  if (token.length > MAX_TOKEN_LENGTH || !B64TOKEN.test(token)) return invalidRequest(`the ${scheme} credentials are malformed`);
  return { token, scheme };
}

function jwtError(err: unknown): BearerError {
  if (err instanceof errors.JWTExpired) return invalidToken('the token has expired');
  if (err instanceof errors.JWTClaimValidationFailed) {
    if (err.claim === 'aud') return invalidToken('the token is not for this API');
    if (err.claim === 'iss') return invalidToken('the token is from another issuer');
    if (err.claim === 'nbf' || err.claim === 'iat') return invalidToken('the token is not valid yet');
    return invalidToken(`the token's ${err.claim} claim is invalid`);
  }
  if (err instanceof errors.JWKSNoMatchingKey) return invalidToken('the token is not signed by a key of the issuer');
  if (err instanceof errors.JWSSignatureVerificationFailed) return invalidToken('the token signature is invalid');
  if (err instanceof errors.JOSEError) return invalidToken('the token is invalid');
  // Discovery or JWKS could not be fetched and nothing is cached.
  return unavailable('the issuer could not be reached');
}

/** Keycloak's organization claim: a list of aliases, or (with attributes) an object keyed by alias. */
function organizationsOf(claims: AccessTokenClaims): string[] {
  const o = claims.organization;
  if (Array.isArray(o)) return o.filter((x): x is string => typeof x === 'string');
  if (o && typeof o === 'object') return Object.keys(o);
  return [];
}

function formEncode(s: string): string {
  return encodeURIComponent(s).replace(/%20/g, '+');
}
