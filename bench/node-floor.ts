// The least a Node.js process can do per exchange, for host-vs-kdig.ts's floor column (not a benchmark of its own):
// the same query bytes as dnscost sends, over udp (a fresh socket each), a warm DoT connection or a warm HTTP/2 DoH
// session, answered and nothing else done with the answer: no parsing, no records, no timing, no byte counts.
// What dnscost-host costs beyond this is its own; what this costs beyond kdig is Node's. With `spans` it also times each
// exchange (the query written to the whole answer read) and prints the median in ms: the least a Node.js client can
// report for the exchange.
//   node dist/bench/node-floor.js udp|dot|doh ADDRESS PORT SNI CA_FILE N [spans]
import dgram from 'node:dgram';
import { readFileSync } from 'node:fs';
import http2 from 'node:http2';
import tls from 'node:tls';
import { median } from '../common/stats.js';
import { encodeQuery } from '../native-host/src/dns-wire.js';

const [transport, address, port, sni, caFile, count, spans] = process.argv.slice(2) as [string, string, string, string, string, string, string?];
const n = Number(count);
const timed: number[] = [];

/** Runs `once` n times, one after another (timing each only with `spans`). */
async function repeat(once: () => Promise<void>): Promise<void> {
  for (let i = 0; i < n; i++) {
    if (!spans) {
      await once();
      continue;
    }
    const start = performance.now();
    await once();
    timed.push(performance.now() - start);
  }
}
const ca = caFile ? readFileSync(caFile, 'utf8') : undefined;
const query = encodeQuery({ name: 'h1.test', qtype: 'A' }, transport === 'doh' ? 0 : 0x1234, transport !== 'udp');

async function udp(): Promise<void> {
  await repeat(() => new Promise<void>((resolve, reject) => {
    const s = dgram.createSocket('udp4');
    s.once('error', reject);
    s.once('message', () => {
      s.close();
      resolve();
    });
    s.send(query, Number(port), address);
  }));
}

async function dot(): Promise<void> {
  const socket = tls.connect({ host: address, port: Number(port), servername: sni, ca, ALPNProtocols: ['dot'] });
  await new Promise<void>((resolve, reject) => socket.once('secureConnect', resolve).once('error', reject));
  const framed = Buffer.concat([Buffer.from([query.length >> 8, query.length & 0xff]), query]);
  let pending: Buffer = Buffer.alloc(0);
  let waiting: (() => void) | null = null;
  socket.on('data', (chunk: Buffer) => {
    pending = pending.length ? Buffer.concat([pending, chunk]) : chunk;
    if (pending.length >= 2 && pending.length >= 2 + pending.readUInt16BE(0)) {
      pending = pending.subarray(2 + pending.readUInt16BE(0));
      waiting?.();
    }
  });
  await repeat(() => new Promise<void>((resolve) => {
    waiting = resolve;
    socket.write(framed);
  }));
  socket.destroy();
}

async function doh(): Promise<void> {
  const session = http2.connect(`https://${sni}:${port}`, {
    createConnection: () => tls.connect({ host: address, port: Number(port), servername: sni, ca, ALPNProtocols: ['h2'] }),
  });
  await new Promise<void>((resolve, reject) => session.once('connect', () => resolve()).once('error', reject));
  const path = `/dns-query?dns=${query.toString('base64url')}`;
  await repeat(() => new Promise<void>((resolve, reject) => {
    const stream = session.request({ ':method': 'GET', ':path': path, accept: 'application/dns-message' });
    stream.on('data', () => {});
    stream.once('end', resolve).once('error', reject);
  }));
  session.close();
}

await ({ udp, dot, doh } as Record<string, () => Promise<void>>)[transport]!();
if (spans) process.stdout.write(`${median(timed) ?? NaN}\n`);
