#!/usr/bin/env node
// ISSUER=http://localhost:8080/auth/realms/demo CLIENT_ID=web-portal CLIENT_SECRET=... BASE_URL=http://localhost:3001 node server.mjs
import { createWebApp } from './app.mjs';

const { ISSUER, CLIENT_ID, CLIENT_SECRET, BASE_URL = 'http://localhost:3001' } = process.env;
if (!ISSUER || !CLIENT_ID || !CLIENT_SECRET) {
  process.stderr.write('set ISSUER, CLIENT_ID and CLIENT_SECRET (and BASE_URL)\n');
  process.exit(1);
}
const server = createWebApp({ issuer: ISSUER, clientId: CLIENT_ID, clientSecret: CLIENT_SECRET, baseUrl: BASE_URL });
server.listen(Number(new URL(BASE_URL).port || 80), () => process.stdout.write(`web app on ${BASE_URL}\n`));
