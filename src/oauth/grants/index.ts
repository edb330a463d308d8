import type { Grant } from './types.js';
import { authorizationCodeGrant } from './authorization-code.js';
import { refreshTokenGrant } from './refresh-token.js';
import { deviceCodeGrant } from './device-code.js';
import { passwordGrant } from './password.js';
import { clientCredentialsGrant } from './client-credentials.js';
import { tokenExchangeGrant } from './token-exchange.js';

/** Every grant the token endpoint serves, keyed by grant_type. */
export const GRANTS: ReadonlyMap<string, Grant> = new Map([authorizationCodeGrant, refreshTokenGrant, deviceCodeGrant, passwordGrant, clientCredentialsGrant, tokenExchangeGrant].map((g) => [g.grantType, g]));
