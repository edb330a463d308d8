// realmgate/resource-server: verifies Realmgate's (and Keycloak's) access tokens in an API.
// Depends only on jose and Node built-ins, so it never pulls in the server.
export { createVerifier, type AccessTokenClaims, type RequestLike, type Verifier, type VerifierOptions, type VerifyOptions, type VerifyResult } from './verifier.js';
export { DPOP_ALGS, DPOP_PROOF_LIFETIME, DPOP_CLOCK_SKEW } from './dpop-proof.js';
export { bearerChallenge, errorBody, type BearerError } from './errors.js';
export { resourceServer, type ResourceServerPluginOptions, type RouteTokenConfig } from './fastify-plugin.js';
export { bearerMiddleware, type RequestWithToken } from './middleware.js';
export type { KitClock } from './issuer-metadata.js';
