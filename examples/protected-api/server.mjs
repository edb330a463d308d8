#!/usr/bin/env node
// Starts the example API: ISSUER=http://localhost:8080/auth/realms/demo AUDIENCE=protected-api node server.mjs
import { buildApi } from './api.mjs';

const { ISSUER, AUDIENCE, PORT = '3000', INTROSPECTION_CLIENT_ID, INTROSPECTION_CLIENT_SECRET } = process.env;
if (!ISSUER || !AUDIENCE) {
  process.stderr.write('set ISSUER (the realm URL) and AUDIENCE (this API\'s name in the tokens)\n');
  process.exit(1);
}
const introspection = INTROSPECTION_CLIENT_ID && INTROSPECTION_CLIENT_SECRET ? { clientId: INTROSPECTION_CLIENT_ID, clientSecret: INTROSPECTION_CLIENT_SECRET } : undefined;
const app = await buildApi({ issuer: ISSUER, audience: AUDIENCE, introspection });
const address = await app.listen({ port: Number(PORT), host: '127.0.0.1' });
process.stdout.write(`protected API listening on ${address}\n`);
