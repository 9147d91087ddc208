/**
 * A TCP proxy on loopback between kloop and PostgreSQL, for outage tests:
 * `cut(ms)` resets every open connection and refuses new ones for `ms`
 * milliseconds (a short database outage, deterministic, no server restart).
 */
import { createServer, connect, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';

export interface TcpProxy {
  /** The proxy's port on 127.0.0.1. */
  port: number;
  /** Resets every connection and refuses new ones for `ms` milliseconds; resolves when it accepts again. */
  cut(ms: number): Promise<void>;
  /** Connections made through the proxy so far. */
  readonly connections: number;
  close(): Promise<void>;
}

export async function startTcpProxy(targetHost: string, targetPort: number): Promise<TcpProxy> {
  const open = new Set<Socket>();
  let down = false;
  let connections = 0;
  const server: Server = createServer((client) => {
    if (down) {
      client.resetAndDestroy();
      return;
    }
    connections += 1;
    const upstream = connect(targetPort, targetHost);
    open.add(client);
    open.add(upstream);
    const end = (): void => {
      open.delete(client);
      open.delete(upstream);
      client.destroy();
      upstream.destroy();
    };
    client.on('error', end).on('close', end);
    upstream.on('error', end).on('close', end);
    client.pipe(upstream);
    upstream.pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    get connections() {
      return connections;
    },
    async cut(ms) {
      down = true;
      for (const socket of [...open]) socket.resetAndDestroy();
      open.clear();
      await new Promise((resolve) => setTimeout(resolve, ms));
      down = false;
    },
    close: () =>
      new Promise<void>((resolve) => {
        down = true;
        for (const socket of [...open]) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
