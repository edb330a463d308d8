import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Services } from '../../services.js';
import { originAllowed } from '../../oauth/web-origins.js';
import { scriptOnlyPage } from '../../views/session-status-pages.js';
import { STATUS_IFRAME_SCRIPT_PATH, THIRD_PARTY_STEP1_SCRIPT_PATH, THIRD_PARTY_STEP2_SCRIPT_PATH } from '../../views/scripts.js';
import { realmOrigins } from '../plugins/cors.js';

type Req = FastifyRequest<{ Params: { realm: string }; Querystring: Record<string, unknown> }>;

const OIDC = '/auth/realms/:realm/protocol/openid-connect';
// Only plain origins go into the CSP header (validated at registration; checked again here).
const CSP_ORIGIN = /^https?:\/\/[A-Za-z0-9.\-[\]:]+$/;

/**
 * These pages must be framed by the applications, and by nobody else: frame-ancestors lists the web
 * origins of the realm's clients (the frame's URL names no client, so the union is the narrowest set
 * the browser can enforce); with none registered they cannot be framed at all.
 */
async function sendFramablePage(services: Services, reply: FastifyReply, realmId: string, body: string): Promise<FastifyReply> {
  const origins = [...(await realmOrigins(services, realmId))].filter((o) => CSP_ORIGIN.test(o));
  const ancestors = origins.length > 0 ? origins.join(' ') : "'none'";
  reply.header('content-type', 'text/html; charset=utf-8');
  reply.header('cache-control', 'no-store');
  reply.header('content-security-policy', `default-src 'none'; script-src 'self'; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors ${ancestors}`);
  reply.header('referrer-policy', 'no-referrer');
  reply.header('x-content-type-options', 'nosniff');
  return reply.code(200).send(body);
}

function single(q: Record<string, unknown>, name: string): string | undefined {
  const v = q[name];
  return typeof v === 'string' && v.length > 0 && v.length <= 256 ? v : undefined;
}

/** keycloak-js's default session-status iframe and third-party-cookie check (its checkLoginIframe). */
export async function sessionStatusRoutes(app: FastifyInstance, opts: { services: Services }): Promise<void> {
  const { services } = opts;

  async function page(req: Req, reply: FastifyReply, title: string, script: string): Promise<FastifyReply> {
    const realm = await services.cache.realm(req.params.realm);
    if (!realm) return reply.code(404).header('cache-control', 'no-store').send({ error: 'invalid_request', error_description: 'realm not found' });
    return sendFramablePage(services, reply, realm.id, scriptOnlyPage(title, script));
  }

  app.get(`${OIDC}/login-status-iframe.html`, (req: Req, reply) => page(req, reply, 'Session status', STATUS_IFRAME_SCRIPT_PATH));
  app.get(`${OIDC}/3p-cookies/step1.html`, (req: Req, reply) => page(req, reply, 'Cookie check', THIRD_PARTY_STEP1_SCRIPT_PATH));
  app.get(`${OIDC}/3p-cookies/step2.html`, (req: Req, reply) => page(req, reply, 'Cookie check', THIRD_PARTY_STEP2_SCRIPT_PATH));

  // 204 when the client exists, is enabled and allows the origin of the page asking; 403 otherwise.
  app.get(`${OIDC}/login-status-iframe.html/init`, async (req: Req, reply) => {
    reply.header('cache-control', 'no-store');
    const clientId = single(req.query, 'client_id');
    const origin = single(req.query, 'origin');
    const realm = await services.cache.realm(req.params.realm);
    const client = realm && clientId ? await services.cache.client(realm.id, clientId) : undefined;
    const ok = client !== undefined && client.enabled && origin !== undefined && originAllowed(client, origin);
    return reply.code(ok ? 204 : 403).send();
  });
}
