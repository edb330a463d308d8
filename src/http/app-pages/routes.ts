import type { FastifyInstance } from 'fastify';
import type { Services } from '../../services.js';
import { nowSeconds } from '../../clock.js';
import { tokenHash } from '../../crypto/random.js';
import { CODE_SCRIPT, CODE_SCRIPT_PATH, codeDisplayPage, codeErrorPage } from '../../views/code-page.js';
import { sendPage } from '../interaction/render.js';
import { useTranslator } from '../i18n.js';
import { msg } from '../../i18n/translator.js';
import type { Realm } from '../../storage/types.js';

function param(q: Record<string, unknown>, name: string): string | undefined {
  const v = q[name];
  return typeof v === 'string' && v.length > 0 && v.length <= 2048 ? v : undefined;
}

/** The realm an authorization response's iss names (RFC 9207), when it is one of this server's realms. */
async function issuerRealm(services: Services, iss: string | undefined): Promise<Realm | undefined> {
  const prefix = `${services.config.authUrl}/auth/realms/`;
  if (iss === undefined || !iss.startsWith(prefix)) return undefined;
  const id = iss.slice(prefix.length);
  if (id === '' || id.includes('/')) return undefined;
  try {
    return await services.cache.realm(decodeURIComponent(id));
  } catch {
    // Not a percent-encoded name (decodeURIComponent's URIError).
    return undefined;
  }
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
    // The page speaks the language of the realm the code is from (or that the response's iss names),
    // as the realm's other pages do.
    if (!code) {
      const from = await issuerRealm(services, param(req.query, 'iss'));
      if (from) await useTranslator(services, req, reply, from);
      const error = { error: param(req.query, 'error'), description: param(req.query, 'error_description') };
      return sendPage(reply, 400, () => codeErrorPage(error));
    }
    const info = await services.store.codes.peek(tokenHash(code));
    const client = info ? await services.cache.client(info.realmId, info.clientId) : undefined;
    const realm = info ? await services.cache.realm(info.realmId) : undefined;
    const speaking = realm ?? (await issuerRealm(services, param(req.query, 'iss')));
    if (speaking) await useTranslator(services, req, reply, speaking);
    const secondsLeft = info && !info.used ? Math.max(0, info.expiresAt - nowSeconds(services.clock)) : 0;
    return sendPage(reply, 200, () =>
      codeDisplayPage({
        code,
        clientName: client?.name ?? client?.clientId ?? msg('codeTheApplication'),
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
