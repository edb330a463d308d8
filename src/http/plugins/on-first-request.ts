import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { closeConnectionsWhileDraining } from './draining.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Every request of this route is handed to another app (serveOnFirstRequest), which records its own metrics. */
    forwarded?: boolean;
  }
}

/**
 * Serves `prefix` and everything under it with a second Fastify app that `build` makes on the first such
 * request (and again after a build that failed). Fastify takes no routes once it is ready, so a part that
 * few processes ever serve (the admin API and console: ~half of the routes, several MB of memory) gets an
 * app of its own instead of being registered at every start. The request is handed over in its first
 * hook, before its body is read; everything after that (hooks, parsing, errors, the response) is the
 * second app's, which `build` makes with the same options and root hooks as the first. It is closed with
 * the first.
 */
export function serveOnFirstRequest(app: FastifyInstance, prefix: string, build: () => Promise<FastifyInstance>): void {
  let target: Promise<FastifyInstance> | undefined;
  let closing = false;
  app.addHook('preClose', async () => {
    closing = true;
  });
  const load = (): Promise<FastifyInstance> =>
    (target ??= build().then(async (built) => {
      // As src/server.ts does for the main app.
      closeConnectionsWhileDraining(built, () => closing);
      await built.ready();
      return built;
    }));

  async function forward(req: FastifyRequest, reply: FastifyReply): Promise<void> {
    reply.hijack();
    let built: FastifyInstance;
    try {
      built = await load();
    } catch (err) {
      target = undefined;
      req.log.error({ err }, `could not build the app serving ${prefix}`);
      if (!reply.raw.headersSent) reply.raw.writeHead(500, { 'content-type': 'application/json', 'cache-control': 'no-store' });
      reply.raw.end(JSON.stringify({ error: 'server_error', error_description: 'the server could not complete the request' }));
      return;
    }
    built.routing(req.raw, reply.raw);
  }

  const options = { config: { forwarded: true }, onRequest: forward };
  // Never reached: every request was handed over in onRequest.
  const unreachable = async (): Promise<void> => undefined;
  app.all(prefix, options, unreachable);
  app.all(`${prefix}/*`, options, unreachable);
  app.addHook('onClose', async () => {
    const built = await target?.catch(() => undefined);
    await built?.close();
  });
}
