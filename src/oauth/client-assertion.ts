import { decodeJwt, decodeProtectedHeader, errors, jwtVerify, type JWTPayload } from 'jose';
import type { Client } from '../storage/types.js';
import type { Services } from '../services.js';
import { realmBase } from '../services.js';
import { OAuthError } from './errors.js';
import { ClientKeysUnavailable, keySource } from './client-keys.js';

/** RFC 7523 2.2: the client_assertion_type of a JWT client assertion. */
export const JWT_BEARER_ASSERTION = 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer';

/**
 * The signature algorithms an assertion may use: asymmetric only. Never 'none', never HMAC: client
 * secrets are stored only as hashes, so client_secret_jwt (an HMAC keyed with the secret) cannot be
 * verified and is not offered.
 */
export const ASSERTION_ALGS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA', 'Ed25519'] as const;

export function isAssertionAlg(alg: string): boolean {
  return (ASSERTION_ALGS as readonly string[]).includes(alg);
}

/** Clock skew allowed on exp, nbf and iat (Keycloak's is 15 s too). */
export const ASSERTION_LEEWAY = 15;
/**
 * Keycloak's token.endpoint.auth.signing.max.exp default: an assertion is accepted for at most this many
 * seconds after its iat; without iat, its exp may be at most this far ahead.
 */
export const DEFAULT_ASSERTION_MAX_EXP = 60;

const fail = (description: string, detail?: string): OAuthError => new OAuthError('invalid_client', description, { detail: detail ?? description });

/** The client the assertion names (iss = sub, RFC 7523 3 items 1 and 2, OIDC Core 9), before any check of it. */
export function assertedClientId(assertion: string, bodyClientId: string | undefined): string {
  let claims: JWTPayload;
  try {
    decodeProtectedHeader(assertion);
    claims = decodeJwt(assertion);
  } catch {
    throw fail('client_assertion is not a JWT');
  }
  const { iss, sub } = claims;
  if (typeof sub !== 'string' || sub === '') throw fail('the client assertion has no sub (the client id)');
  if (typeof iss !== 'string' || iss !== sub) throw fail('the client assertion\'s iss must be its sub, the client id');
  // RFC 7521 4.2: client_id, when sent, identifies the same client.
  if (bodyClientId !== undefined && bodyClientId !== sub) throw fail('client_id is not the client the assertion names');
  return sub;
}

/**
 * The checks of RFC 7523 3 on a client's assertion, the client found: its keys, the algorithm, iss/sub,
 * aud, exp/nbf/iat and the lifetime, then jti's single use (recorded in the database, so a replay fails
 * on any node). Throws invalid_client saying why.
 */
export async function verifyAssertion(services: Services, realmId: string, client: Client, assertion: string): Promise<void> {
  if (!client.authMethods.includes('private_key_jwt')) {
    throw fail('this client does not authenticate with a signed JWT', `client restricted to ${client.authMethods.join(', ')}`);
  }
  const source = keySource(client.jwtKeys);
  if (!source) throw fail('the client has no keys to verify its assertion with', 'no jwks.url, jwks.string or certificate');
  const allowed = client.jwtKeys?.signingAlg ? [client.jwtKeys.signingAlg].filter(isAssertionAlg) : [...ASSERTION_ALGS];
  const issuer = realmBase(services.config, realmId);
  // Audience: the realm's issuer identifier (what openid-client and the 2025 updates to RFC 7523 send), or
  // the token endpoint's URL (RFC 7523 3 item 3; Authlib's default), as one value. Several values are
  // refused, as Keycloak refuses them: a JWT meant for several parties is one the others could replay here.
  const audiences = [issuer, `${issuer}/protocol/openid-connect/token`];
  const now = Math.floor(services.clock.nowMs() / 1000);
  let payload: JWTPayload;
  try {
    const key = services.clientKeys.resolver(source);
    ({ payload } = await jwtVerify(assertion, key as Parameters<typeof jwtVerify>[1], {
      algorithms: allowed,
      issuer: client.clientId,
      subject: client.clientId,
      requiredClaims: ['exp', 'jti', 'aud'],
      clockTolerance: ASSERTION_LEEWAY,
      currentDate: new Date(now * 1000),
    }));
  } catch (err) {
    if (err instanceof ClientKeysUnavailable) throw fail('the client\'s keys could not be read', err.message);
    if (err instanceof errors.JWTExpired) throw fail('the client assertion has expired');
    if (err instanceof errors.JWTClaimValidationFailed) throw fail(`the client assertion is not valid: ${err.claim} ${err.reason === 'check_failed' ? 'check failed' : err.reason}`, err.message);
    if (err instanceof errors.JOSEAlgNotAllowed) throw fail(`the client assertion's algorithm is not allowed (${allowed.join(', ')})`);
    if (err instanceof errors.JWKSNoMatchingKey || err instanceof errors.JWKSMultipleMatchingKeys) throw fail('no key of the client matches the client assertion', err.message);
    if (err instanceof errors.JWSSignatureVerificationFailed) throw fail('the client assertion\'s signature is not valid');
    if (err instanceof errors.JOSEError || err instanceof TypeError) throw fail('the client assertion could not be verified', `${(err as Error).name}: ${(err as Error).message}`);
    throw err;
  }
  const aud = Array.isArray(payload.aud) && payload.aud.length === 1 ? payload.aud[0] : payload.aud;
  if (typeof aud !== 'string') throw fail('the client assertion\'s aud must be one value: the issuer');
  if (!audiences.includes(aud)) throw fail(`the client assertion's aud must be ${issuer}`, `aud ${aud}`);
  if (typeof payload.jti !== 'string' || payload.jti === '') throw fail('the client assertion has no jti');
  const exp = payload.exp!;
  const maxExp = client.jwtKeys?.maxExp ?? DEFAULT_ASSERTION_MAX_EXP;
  // Keycloak's rule (its Max expiration): an assertion is used within maxExp of its iat; one without iat
  // may not expire later than maxExp from now.
  let usableUntil: number;
  if (payload.iat !== undefined) {
    if (payload.iat > now + ASSERTION_LEEWAY) throw fail('the client assertion was issued in the future');
    if (now > payload.iat + maxExp + ASSERTION_LEEWAY) throw fail(`the client assertion was issued more than ${maxExp} s ago`);
    usableUntil = Math.min(exp, payload.iat + maxExp);
  } else {
    if (exp - now > maxExp + ASSERTION_LEEWAY) throw fail(`the client assertion lives too long: without iat, its exp may be at most ${maxExp} s ahead`);
    usableUntil = exp;
  }
  // RFC 7523 3 item 7: a jti is used once, as long as the assertion could be accepted.
  if (!(await services.store.clientAssertions.use(realmId, client.clientId, payload.jti, usableUntil + ASSERTION_LEEWAY + 1, now))) {
    throw fail('the client assertion was used already (its jti is single-use)');
  }
}
