// A TCP proxy in front of a dependency (PostgreSQL, Redis) that a test can cut and restore,
// without touching the real server other tests share:
// - refuse(): every connection is closed and the port stops listening (connection refused), as
//   when the server is down;
// - blackhole(): nothing is forwarded any more, on open connections or on new ones (which are
//   accepted and then hang), as when a network silently drops packets. Connections frozen this
//   way stay frozen for good: only new connections work again after restore();
// - restore(): new connections are forwarded again;
// - cut(): the open connections are closed, as by a network reset; new ones are still forwarded.
// open() and accepted() count the connections open now and accepted since the start.
import { once } from "node:events";
import net from "node:net";

export interface TcpProxy {
  readonly port: number;
  /** The target URL with its host and port replaced by the proxy's. */
  url(target: string): string;
  refuse(): Promise<void>;
  blackhole(): void;
  restore(): Promise<void>;
  cut(): void;
  /** Connections open now. */
  open(): number;
  /** Connections accepted since the start. */
  accepted(): number;
  close(): Promise<void>;
}

export async function startTcpProxy(target: { host: string; port: number }): Promise<TcpProxy> {
  let mode: "up" | "refused" | "blackhole" = "up";
  const pairs = new Set<{ client: net.Socket; upstream: net.Socket | null }>();
  let accepted = 0;
  const closeAll = () => {
    for (const { client, upstream } of pairs) {
      client.destroy();
      upstream?.destroy();
    }
    pairs.clear();
  };

  const onConnection = (client: net.Socket) => {
    accepted++;
    const pair: { client: net.Socket; upstream: net.Socket | null } = { client, upstream: null };
    pairs.add(pair);
    const drop = () => {
      client.destroy();
      pair.upstream?.destroy();
      pairs.delete(pair);
    };
    client.on("error", drop);
    client.on("close", drop);
    if (mode !== "up") {
      client.pause(); // accepted, never answered
      return;
    }
    const upstream = net.connect(target.port, target.host);
    pair.upstream = upstream;
    upstream.on("error", drop);
    upstream.on("close", drop);
    client.pipe(upstream);
    upstream.pipe(client);
  };

  let server = net.createServer({ pauseOnConnect: false }, onConnection);
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const port = (server.address() as net.AddressInfo).port;

  const closeServer = (s: net.Server) =>
    new Promise<void>((resolve) => (s.listening ? s.close(() => resolve()) : resolve()));

  return {
    port,
    url(targetUrl) {
      const url = new URL(targetUrl);
      url.hostname = "127.0.0.1";
      url.port = String(port);
      return url.toString();
    },
    async refuse() {
      mode = "refused";
      const closing = closeServer(server);
      closeAll();
      await closing;
    },
    blackhole() {
      mode = "blackhole";
      for (const { client, upstream } of pairs) {
        if (!upstream) continue;
        client.unpipe(upstream);
        upstream.unpipe(client);
        client.pause();
        upstream.pause();
      }
    },
    async restore() {
      const wasRefused = mode === "refused";
      mode = "up";
      if (wasRefused) {
        server = net.createServer(onConnection);
        server.listen(port, "127.0.0.1");
        await once(server, "listening");
      }
    },
    cut: closeAll,
    open: () => pairs.size,
    accepted: () => accepted,
    async close() {
      mode = "refused";
      closeAll();
      await closeServer(server);
    },
  };
}
