// The fault server over DoH (RFC 8484): the HTTP/2 server behind the doh listener and the HTTP/1.1 server behind
// doh1, turning fault plans into responses, HTTP errors, GOAWAY, RST_STREAM or a cut connection.
import http2 from 'node:http2';
import https from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { planFor, TTL } from './faults.js';
import { connKey, debug, type Runtime } from './runtime.js';
import type { KeyPair } from './tls.js';

// RFC 8484 §4.1: GET carries the query as base64url `dns=`, POST as an application/dns-message body.
function withDohQuery(
  method: string,
  pathAndQuery: string,
  contentType: string,
  body: NodeJS.ReadableStream,
  fail: (status: number, text: string) => void,
  handle: (msg: Buffer) => void,
): void {
  let url: URL;
  try {
    url = new URL(pathAndQuery, 'https://dns.test');
  } catch {
    return fail(400, 'bad path\n');
  }
  if (url.pathname !== '/dns-query') return fail(404, 'not found\n');
  if (method === 'GET') {
    const dns = url.searchParams.get('dns');
    if (!dns) return fail(400, 'missing dns parameter\n');
    return handle(Buffer.from(dns, 'base64url'));
  }
  if (method !== 'POST') return fail(405, 'method not allowed\n');
  if (contentType.split(';')[0]?.trim().toLowerCase() !== 'application/dns-message') return fail(415, 'want application/dns-message\n');
  const chunks: Buffer[] = [];
  let size = 0;
  let done = false;
  body.on('data', (c: Buffer) => {
    if (done) return;
    size += c.length;
    if (size > 65_535) {
      done = true;
      return fail(413, 'too large\n');
    }
    chunks.push(c);
  });
  body.on('end', () => {
    if (done) return;
    done = true;
    try {
      handle(Buffer.concat(chunks));
    } catch (err) {
      debug('doh handler', err);
      fail(500, 'internal error\n');
    }
  });
}

// ---- DoH over HTTP/2 (RFC 8484) ------------------------------------------------------------------------------

function h2Text(stream: http2.ServerHttp2Stream, status: number, text: string): void {
  if (stream.destroyed || stream.closed || stream.headersSent) return;
  // RFC 9110 §15.3.5, §15.4.5: 204/205/304 carry no content.
  if (status === 204 || status === 205 || status === 304) {
    stream.respond({ ':status': status }, { endStream: true });
    return;
  }
  stream.respond({ ':status': status, 'content-type': 'text/plain; charset=utf-8' });
  stream.end(text);
}

function serveH2(stream: http2.ServerHttp2Stream, headers: http2.IncomingHttpHeaders, rt: Runtime): void {
  withDohQuery(
    String(headers[':method'] ?? ''),
    String(headers[':path'] ?? ''),
    String(headers['content-type'] ?? ''),
    stream,
    (status, text) => h2Text(stream, status, text),
    (msg) => {
      const { plan } = planFor(msg, 'doh', rt.seen);
      const session = stream.session;
      switch (plan.kind) {
        case 'reply': {
          const { bytes, contentType } = plan;
          rt.later(plan.delayMs, () => {
            if (stream.destroyed || stream.closed || stream.headersSent) return;
            stream.respond({ ':status': 200, 'content-type': contentType ?? 'application/dns-message', 'content-length': bytes.length, 'cache-control': `max-age=${TTL}` });
            stream.end(bytes);
          });
          return;
        }
        case 'close-mid': {
          stream.respond({ ':status': 200, 'content-type': 'application/dns-message', 'content-length': plan.bytes.length });
          const peer = session?.socket;
          stream.write(plan.bytes.subarray(0, Math.floor(plan.bytes.length / 2)), () => {
            // The write callback means nghttp2 took the DATA frame; give the socket a moment to flush it.
            rt.later(30, () => {
              const tlsSock = peer ? rt.tlsByPeer.get(connKey(peer)) : undefined;
              if (tlsSock) tlsSock.destroy();
              else session?.destroy();
            });
          });
          return;
        }
        case 'reset':
          rt.resetUnder(session?.socket);
          return;
        case 'goaway': {
          // RFC 9113 §6.8: streams above last-stream-id were not processed and may be retried elsewhere.
          // node turns a last-stream-id of 0 into "last processed" (stream 1 itself), so the first stream
          // of a connection is refused explicitly with RST_STREAM REFUSED_STREAM (RFC 9113 §8.7), which
          // the client sees exactly as it sees a stream cut off by GOAWAY.
          const id = stream.id ?? 1;
          session?.goaway(http2.constants.NGHTTP2_NO_ERROR, id - 2);
          if (id - 2 <= 0 && !stream.closed && !stream.destroyed) stream.close(http2.constants.NGHTTP2_REFUSED_STREAM);
          return;
        }
        case 'rst-stream':
          stream.close(http2.constants.NGHTTP2_INTERNAL_ERROR); // RFC 9113 §6.4
          return;
        case 'http':
          h2Text(stream, plan.status, `http-${plan.status}\n`);
          return;
        case 'unparseable':
          h2Text(stream, 400, 'not a DNS message\n');
          return;
        case 'drop':
          return; // the stream stays open until the client gives up or stop()
      }
    },
  );
}

/** The HTTP/2 TLS server behind the doh listener (handed connections by tlsFront, never listens itself). */
export function createDohServer(leaf: KeyPair, rt: Runtime): http2.Http2SecureServer {
  const h2 = http2.createSecureServer({ key: leaf.keyPem, cert: leaf.certPem, allowHTTP1: false });
  h2.on('session', (session) => {
    rt.sessions.add(session);
    session.on('error', (err) => debug('h2 session error', err.message));
    session.on('close', () => rt.sessions.delete(session));
  });
  h2.on('sessionError', (err) => debug('h2 sessionError', err.message));
  h2.on('tlsClientError', (err) => debug('doh tls error', err.message));
  h2.on('stream', (stream, headers) => {
    stream.on('error', (err) => debug('h2 stream error', err.message));
    try {
      serveH2(stream, headers, rt);
    } catch (err) {
      debug('h2 handler', err);
      if (!stream.destroyed) stream.close(http2.constants.NGHTTP2_INTERNAL_ERROR);
    }
  });
  return h2;
}

// ---- DoH over HTTP/1.1 ---------------------------------------------------------------------------------------

function h1Text(res: ServerResponse, status: number, text: string): void {
  if (res.headersSent || res.destroyed) return;
  if (status === 204 || status === 205 || status === 304) {
    res.writeHead(status).end();
    return;
  }
  res.writeHead(status, { 'content-type': 'text/plain; charset=utf-8', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

function serveH1(req: IncomingMessage, res: ServerResponse, rt: Runtime): void {
  withDohQuery(
    req.method ?? '',
    req.url ?? '',
    String(req.headers['content-type'] ?? ''),
    req,
    (status, text) => h1Text(res, status, text),
    (msg) => {
      const { plan } = planFor(msg, 'doh1', rt.seen);
      switch (plan.kind) {
        case 'reply': {
          const { bytes, contentType } = plan;
          rt.later(plan.delayMs, () => {
            if (res.headersSent || res.destroyed) return;
            res.writeHead(200, { 'content-type': contentType ?? 'application/dns-message', 'content-length': bytes.length, 'cache-control': `max-age=${TTL}` });
            res.end(bytes);
          });
          return;
        }
        case 'close-mid': {
          res.writeHead(200, { 'content-type': 'application/dns-message', 'content-length': plan.bytes.length });
          const sock = req.socket;
          res.write(plan.bytes.subarray(0, Math.floor(plan.bytes.length / 2)), () => rt.later(30, () => sock.destroy()));
          return;
        }
        case 'reset':
          rt.resetUnder(req.socket);
          return;
        case 'http':
          h1Text(res, plan.status, `http-${plan.status}\n`);
          return;
        case 'unparseable':
          h1Text(res, 400, 'not a DNS message\n');
          return;
        default:
          return; // drop, goaway, rst-stream: the request hangs, which also blocks this keep-alive connection
      }
    },
  );
}

/** The HTTP/1.1 TLS server behind the doh1 listener (handed connections by tlsFront, never listens itself). */
export function createDoh1Server(leaf: KeyPair, rt: Runtime): https.Server {
  const h1 = https.createServer({ key: leaf.keyPem, cert: leaf.certPem, ALPNProtocols: ['http/1.1'] });
  // Keep idle connections long enough for warm measurements; stop() destroys them regardless.
  h1.keepAliveTimeout = 60_000;
  h1.on('tlsClientError', (err) => debug('doh1 tls error', err.message));
  h1.on('request', (req: IncomingMessage, res: ServerResponse) => {
    req.on('error', (err) => debug('h1 req error', err.message));
    res.on('error', (err) => debug('h1 res error', err.message));
    try {
      serveH1(req, res, rt);
    } catch (err) {
      debug('h1 handler', err);
      req.socket.destroy();
    }
  });
  return h1;
}
