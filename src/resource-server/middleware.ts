import type { IncomingMessage, ServerResponse } from 'node:http';
import { bearerChallenge, errorBody } from './errors.js';
import type { AccessTokenClaims, Verifier, VerifyOptions } from './verifier.js';

export type RequestWithToken = IncomingMessage & { accessToken?: AccessTokenClaims };

/**
 * Express/Connect-style middleware `(req, res, next)`: calls next() with `req.accessToken` set, or
 * answers the RFC 6750 error itself. Works under Express, Connect and plain node:http.
 */
export function bearerMiddleware(verifier: Verifier, opts: VerifyOptions = {}): (req: IncomingMessage, res: ServerResponse, next: (err?: unknown) => void) => void {
  return function requireAccessToken(req, res, next) {
    verifier.verifyRequest(req, opts).then(
      (result) => {
        if (result.ok) {
          (req as RequestWithToken).accessToken = result.claims;
          next();
          return;
        }
        const body = JSON.stringify(errorBody(result.error));
        res.statusCode = result.error.status;
        res.setHeader('www-authenticate', bearerChallenge(result.error, verifier.realm));
        res.setHeader('cache-control', 'no-store');
        res.setHeader('content-type', 'application/json');
        res.end(body);
      },
      (err: unknown) => next(err),
    );
  };
}
