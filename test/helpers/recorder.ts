import { createServer, type Socket } from 'node:net';

/**
 * A TCP listener on 127.0.0.1 that answers nothing (or a greeting, `greeting`) and records who connected
 * and what they sent: a host an attacker would point a stored secret at. A test asserts that nothing
 * reached it.
 */
export interface Recorder {
  port: number;
  /** Connections accepted so far. */
  connections(): number;
  /** Every byte received, as latin1 text. */
  received(): string;
  close(): Promise<void>;
}

export async function startRecorder(o: { greeting?: string } = {}): Promise<Recorder> {
  let count = 0;
  const chunks: Buffer[] = [];
  const sockets = new Set<Socket>();
  const server = createServer((socket) => {
    count++;
    sockets.add(socket);
    socket.on('data', (d) => chunks.push(d));
    socket.on('error', () => undefined);
    socket.on('close', () => sockets.delete(socket));
    if (o.greeting !== undefined) socket.write(o.greeting);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (typeof address !== 'object' || address === null) throw new Error('the recorder has no port');
  return {
    port: address.port,
    connections: () => count,
    received: () => Buffer.concat(chunks).toString('latin1'),
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
