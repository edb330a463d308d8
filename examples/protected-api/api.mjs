// The service's API: every route needs an access token from the realm, and each route names the scope
// it needs. Tokens are verified by the resource-server kit shipped with Realmgate.
import Fastify from 'fastify';
import { createVerifier, resourceServer } from 'realmgate/resource-server';

/**
 * @param {object} options
 * @param {string} options.issuer       the realm, e.g. http://localhost:8080/auth/realms/demo
 * @param {string} options.audience     this API's name in the tokens' aud claim
 * @param {{ clientId: string, clientSecret: string }} [options.introspection]  for /exports, which must see a revocation at once
 * @param {{ nowMs(): number }} [options.clock]  tests move time with it
 */
export async function buildApi({ issuer, audience, introspection, clock }) {
  const verifier = createVerifier({ issuer, audience, introspection, clock, realm: 'protected-api' });
  const app = Fastify();

  app.get('/health', async () => ({ status: 'ok' }));

  await app.register(async (api) => {
    await api.register(resourceServer, { verifier });

    // Any valid token of the realm meant for this API.
    api.get('/me', async (req) => ({ sub: req.accessToken.sub, client: req.accessToken.azp, scope: req.accessToken.scope }));

    api.get('/core-data', { config: { requiredScopes: ['core_data'] } }, async (req) => ({
      organization: req.accessToken.organization ?? [],
      records: [{ id: 1, name: 'Example record' }],
    }));

    // Exports leave the building: ask the realm whether the token is still active (RFC 7662).
    api.get('/exports', { config: { requiredScopes: ['exports'], introspect: introspection !== undefined } }, async () => ({
      exports: [{ id: 'export-1', format: 'csv' }],
    }));
  });
  return app;
}
