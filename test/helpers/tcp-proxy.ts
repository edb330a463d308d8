import net from 'node:net';

/**
 * A real TCP proxy in front of a real server (PostgreSQL here), standing for the network, a connection
 * pooler or a failover address between Realmgate and its database: the test can cut every open
 * connection (a reset, a pooler restart), stop accepting new ones (the database down: connections are
 * refused) and accept them again (the database back), without touching the database other tests share.
 */
export interface TcpProxy {
  /** The port the proxy listens on (the same one after `up()`). */
  port: number;
  /** Ends every open connection at once, both ways, as a reset does. */
  cut(): void;
  /** Stops listening and cuts every connection: new connections are refused. */
  down(): Promise<void>;
  /** Listens again on the same port. */
  up(): Promise<void>;
  /** Connections open through the proxy now. */
  open(): number;
  close(): Promise<void>;
}

export async function startTcpProxy(target: { host: string; port: number }): Promise<TcpProxy> {
  const sockets = new Set<net.Socket>();
  const server = net.createServer((inbound) => {
    const outbound = net.connect(target.port, target.host);
    sockets.add(inbound);
    sockets.add(outbound);
    const end = (): void => {
      inbound.destroy();
      outbound.destroy();
      sockets.delete(inbound);
      sockets.delete(outbound);
    };
    inbound.on('error', end).on('close', end);
    outbound.on('error', end).on('close', end);
    inbound.pipe(outbound);
    outbound.pipe(inbound);
  });
  const listen = (port: number): Promise<number> =>
    new Promise((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => {
        server.off('error', reject);
        resolve((server.address() as net.AddressInfo).port);
      });
    });
  const port = await listen(0);
  const cut = (): void => {
    for (const s of sockets) s.resetAndDestroy();
    sockets.clear();
  };
  const down = async (): Promise<void> => {
    const closed = server.listening ? new Promise<void>((r) => server.close(() => r())) : Promise.resolve();
    cut();
    await closed;
  };
  return {
    port,
    cut,
    down,
    up: async () => {
      await listen(port);
    },
    open: () => sockets.size / 2,
    close: down,
  };
}

/** `url` (a PostgreSQL URL) with its host and port replaced by the proxy's. */
export function throughProxy(url: string, proxy: TcpProxy): string {
  const u = new URL(url);
  u.hostname = '127.0.0.1';
  u.port = String(proxy.port);
  return u.href;
}
