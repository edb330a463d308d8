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
  /**
   * The connections open now stop carrying bytes, both ways, without being closed: a peer that died
   * without a reset (a host powered off, a network partition). New connections are carried as usual
   * (a failover's new address). Stalled connections stay so until `close()`.
   */
  stallOpen(): void;
  /** Connections open through the proxy now (stalled ones included). */
  open(): number;
  close(): Promise<void>;
}

export async function startTcpProxy(target: { host: string; port: number }): Promise<TcpProxy> {
  const sockets = new Set<net.Socket>();
  /** Connections still carrying bytes (not stalled), as (from the client, to the server). */
  const pairs = new Set<[net.Socket, net.Socket]>();
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
    const pair: [net.Socket, net.Socket] = [inbound, outbound];
    pairs.add(pair);
    inbound.once('close', () => pairs.delete(pair));
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
  const stallOpen = (): void => {
    for (const [inbound, outbound] of pairs) {
      inbound.unpipe(outbound);
      outbound.unpipe(inbound);
      // Whatever arrives from now on is read and dropped, as a network that lost the peer does.
      inbound.removeAllListeners('data');
      outbound.removeAllListeners('data');
      inbound.on('data', () => undefined);
      outbound.on('data', () => undefined);
    }
    pairs.clear();
  };
  return {
    port,
    cut,
    stallOpen,
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
