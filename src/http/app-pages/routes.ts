import type { FastifyInstance } from 'fastify';
import type { Services } from '../../services.js';
import { nowSeconds } from '../../clock.js';
import { tokenHash } from '../../crypto/random.js';
import { CODE_SCRIPT, CODE_SCRIPT_PATH, codeDisplayPage, codeErrorPage } from '../../views/code-page.js';
import { sendPage } from '../interaction/render.js';

function param(q: Record<string, unknown>, name: string): string | undefined {
  const v = q[name];
  return typeof v === 'string' && v.length > 0 && v.length <= 2048 ? v : undefined;
}

/**
 * `{APP_URL}/authentication_code`: where clients with limited web server access send the user, who
 * copies the code by hand (specification, E1). Served here when APP_URL is this server. It names the
 * application and counts down the code's remaining seconds; it never lets the code leak (no-store,
 * no-referrer, nothing loaded from another origin).
 */
export async function appPageRoutes(app: FastifyInstance, opts: { services: Services }): Promise<void> {
  const { services } = opts;
  const appPath = new URL(services.config.appUrl).pathname.replace(/\/$/, '');

  app.get<{ Querystring: Record<string, unknown> }>(`${appPath}/authentication_code`, async (req, reply) => {
    reply.header('referrer-policy', 'no-referrer');
    const code = param(req.query, 'code');
    if (!code) return sendPage(reply, 400, codeErrorPage({ error: param(req.query, 'error'), description: param(req.query, 'error_description') }));
    const info = await services.store.codes.peek(tokenHash(code));
    const client = info ? await services.cache.client(info.realmId, info.clientId) : undefined;
    const realm = info ? await services.cache.realm(info.realmId) : undefined;
    const secondsLeft = info && !info.used ? Math.max(0, info.expiresAt - nowSeconds(services.clock)) : 0;
    return sendPage(
      reply,
      200,
      codeDisplayPage({
        code,
        clientName: client?.name ?? client?.clientId ?? 'the application',
        realmName: realm?.displayName ?? realm?.id ?? 'Realmgate',
        secondsLeft,
      }),
    );
  });

  app.get(CODE_SCRIPT_PATH, async (_req, reply) => {
    reply.header('cache-control', 'public, max-age=3600');
    reply.header('x-content-type-options', 'nosniff');
    return reply.type('text/javascript; charset=utf-8').send(CODE_SCRIPT);
  });
}
