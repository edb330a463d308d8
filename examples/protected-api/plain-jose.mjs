// Verifying Realmgate's access tokens without the kit, with jose alone.
import { createRemoteJWKSet, jwtVerify } from 'jose';

export async function createJoseVerifier({ issuer, audience }) {
  // OpenID Connect Discovery: the realm's metadata names its key set.
  const metadata = await (await fetch(`${issuer}/.well-known/openid-configuration`)).json();
  if (metadata.issuer !== issuer) throw new Error('discovery document of another issuer');
  // jose caches the keys and refetches them when a token names an unknown key id (a rotation).
  const keys = createRemoteJWKSet(new URL(metadata.jwks_uri));

  /** Returns the claims, or throws when the token is not a valid access token with `scope`. */
  return async function verify(authorization, scope) {
    const match = /^Bearer ([A-Za-z0-9\-._~+/]+=*)$/.exec(authorization ?? '');
    if (!match) throw new Error('no bearer token');
    const { payload } = await jwtVerify(match[1], keys, {
      issuer,
      audience, // the realm's access token audience (realm create|update --audience)
      algorithms: ['RS256', 'ES256', 'EdDSA'],
    });
    // Access tokens carry typ "Bearer"; ID tokens ("ID") must not open an API.
    if (payload.typ !== 'Bearer') throw new Error('not an access token');
    if (scope && !payload.scope.split(' ').includes(scope)) throw new Error(`scope ${scope} missing`);
    return payload;
  };
}
