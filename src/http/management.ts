import Fastify, { type FastifyInstance } from 'fastify';

export interface ManagementOptions {
  host: string;
  port: number;
  /** The Prometheus text of this process, or of every worker when clustered. */
  metrics: () => Promise<{ contentType: string; body: string }>;
  /** Database reachable and migrations applied. */
  ready: () => Promise<boolean>;
}

/**
 * The management port (REALMGATE_METRICS_PORT): /metrics and the health checks, apart from the public
 * port so that a firewall or the orchestrator's network keeps them internal.
 */
export async function startManagementServer(opts: ManagementOptions): Promise<{ app: FastifyInstance; url: string; close(): Promise<void> }> {
  const app = Fastify({ logger: false });
  app.get('/metrics', async (_req, reply) => {
    const m = await opts.metrics();
    return reply.header('cache-control', 'no-store').type(m.contentType).send(m.body);
  });
  app.get('/health/live', async () => ({ status: 'UP' }));
  app.get('/health/ready', async (_req, reply) => ((await opts.ready()) ? { status: 'UP' } : reply.code(503).send({ status: 'DOWN' })));
  app.setNotFoundHandler((_req, reply) => reply.code(404).send({ error: 'not found' }));
  await app.listen({ port: opts.port, host: opts.host });
  const addr = app.server.address();
  const port = typeof addr === 'object' && addr ? addr.port : opts.port;
  return { app, url: `http://${opts.host.includes(':') ? `[${opts.host}]` : opts.host}:${port}`, close: () => app.close() };
}
