// A forward HTTP proxy for the lab, as a person's office or privacy proxy is to their browser: plain requests in the
// absolute form (`GET http://host/path`) are forwarded, CONNECT tunnels opened, and every name is resolved by the
// proxy, never by the browser. Like a remote proxy, it resolves in its own network: here every name goes to one
// upstream address (the lab site), so the proxy asks no DNS of the machine's either.
import { once } from 'node:events';
import { createServer, request, type Server } from 'node:http';
import net, { type AddressInfo } from 'node:net';

/** A running proxy: where it listens, what it forwarded, how to stop it. */
export interface LabProxy {
  address: string;
  port: number;
  /** `METHOD host` of every request or tunnel it was asked for, in order. */
  seen: string[];
  close(): Promise<void>;
}

/** Starts the proxy on `address` (port 0: a free one); every name it is asked for is reached at `upstream`. */
export async function startHttpProxy(o: { address: string; upstream: string; port?: number }): Promise<LabProxy> {
  const seen: string[] = [];
  const sockets = new Set<net.Socket>();
  const server: Server = createServer((req, res) => {
    let target: URL;
    try {
      target = new URL(req.url ?? '');
    } catch {
      res.writeHead(400).end('absolute URL expected');
      return;
    }
    seen.push(`${req.method} ${target.hostname}`);
    const upstream = request({ host: o.upstream, port: Number(target.port) || 80, method: req.method, path: target.pathname + target.search, headers: { ...req.headers, host: target.host } }, (up) => {
      res.writeHead(up.statusCode ?? 502, up.headers);
      up.pipe(res);
    });
    upstream.on('error', () => res.writeHead(502).end('upstream unreachable'));
    req.pipe(upstream);
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.once('close', () => sockets.delete(s));
  });
  server.on('connect', (req, client: net.Socket) => {
    const [host = '', port = '443'] = (req.url ?? '').split(':');
    seen.push(`CONNECT ${host}`);
    const up = net.connect(Number(port), o.upstream, () => {
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      up.pipe(client).pipe(up);
    });
    up.on('error', () => client.end('HTTP/1.1 502 Bad Gateway\r\n\r\n'));
    client.on('error', () => up.destroy());
  });
  server.listen(o.port ?? 0, o.address);
  await once(server, 'listening');
  return {
    address: o.address,
    port: (server.address() as AddressInfo).port,
    seen,
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}
