// The kit's Express/Connect-style middleware on a plain node:http server (the same call works as
// app.use(...) or as a route handler in Express).
import http from 'node:http';
import { createVerifier, bearerMiddleware } from 'realmgate/resource-server';

export function createPlainServer({ issuer, audience }) {
  const verifier = createVerifier({ issuer, audience });
  const requireCoreData = bearerMiddleware(verifier, { requiredScopes: ['core_data'] });

  return http.createServer((req, res) => {
    requireCoreData(req, res, (err) => {
      if (err) {
        res.statusCode = 500;
        res.end();
        return;
      }
      // The middleware answered 400/401/403 itself; here the token is valid and has core_data.
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ hello: req.accessToken.sub }));
    });
  });
}
