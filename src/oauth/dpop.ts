import { nowSeconds } from '../clock.js';
import { realmBase, type Services } from '../services.js';
import { checkDpopProof, dpopReplayExpiry, DpopProofError, type DpopProof } from '../resource-server/dpop-proof.js';
import { OAuthError } from './errors.js';

export { DPOP_ALGS, type DpopProof } from '../resource-server/dpop-proof.js';

/** RFC 9449 5: the answer to a proof that is not valid. */
export function invalidProof(description: string, detail?: string): OAuthError {
  return new OAuthError('invalid_dpop_proof', description, detail === undefined ? {} : { detail });
}

/** The URL of one of the realm's OpenID Connect endpoints as discovery advertises it (the htu a proof must name). */
export function endpointUrl(services: Services, realmId: string, endpoint: 'token' | 'userinfo'): string {
  return `${realmBase(services.config, realmId)}/protocol/openid-connect/${endpoint}`;
}

/**
 * The DPoP header of a request (RFC 9449 4.1): undefined when there is none, refused when there are
 * several (4.3 item 1: exactly one). `rawHeaders` are Node's name/value pairs, so a repeated header is
 * seen even when Node joined the values.
 */
export function dpopHeader(rawHeaders: readonly string[]): string | undefined {
  let value: string | undefined;
  for (let i = 0; i < rawHeaders.length; i += 2) {
    if (rawHeaders[i]!.length !== 4 || rawHeaders[i]!.toLowerCase() !== 'dpop') continue;
    if (value !== undefined) throw invalidProof('send exactly one DPoP header');
    value = rawHeaders[i + 1]!;
  }
  return value;
}

/**
 * RFC 9449 4.3: the proof checked for this request, then its jti recorded in the database (item 12: a
 * proof is used once, on every node and process sharing it). Throws invalid_dpop_proof saying why.
 */
export async function verifyDpopProof(
  services: Services,
  realmId: string,
  proof: string,
  request: { method: string; endpoint: 'token' | 'userinfo'; accessToken?: string },
): Promise<DpopProof> {
  const now = nowSeconds(services.clock);
  let checked: DpopProof;
  try {
    checked = await checkDpopProof(proof, { method: request.method, url: endpointUrl(services, realmId, request.endpoint), nowSeconds: now, ...(request.accessToken !== undefined ? { accessToken: request.accessToken } : {}) });
  } catch (err) {
    if (err instanceof DpopProofError) throw invalidProof(err.message);
    throw err;
  }
  if (!(await services.store.dpopProofs.use([realmId, checked.htu, checked.jti], dpopReplayExpiry(checked), now))) {
    throw invalidProof('the DPoP proof was used already (its jti is single-use)');
  }
  return checked;
}
