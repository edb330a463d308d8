import type { FastifyInstance } from 'fastify';

/**
 * While a server drains (graceful shutdown), each answer closes its connection: a kept-alive one would
 * hold the exit back until its keep-alive timeout, and a client must reconnect (to another node) anyway.
 */
export function closeConnectionsWhileDraining(app: FastifyInstance, draining: () => boolean): void {
  app.addHook('onSend', (_req, reply, payload, done) => {
    if (draining()) reply.header('connection', 'close');
    done(null, payload);
  });
}
