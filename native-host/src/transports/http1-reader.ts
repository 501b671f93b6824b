// Reads HTTP/1.1 responses (RFC 9112) from a byte stream, for DoH over HTTP/1.1: the status line, the header fields
// and the body, delimited by Content-Length, chunked transfer coding or the connection's close. Pure and incremental:
// `push` the bytes as the socket hands them over and the response is complete the moment its last byte is in, so
// the lookup is timed where its bytes are (node:http hands a response over in three event-loop steps). Interim 1xx
// responses are skipped. Anything it cannot read is a `malformed-answer`, never a guess.
import { CODES, DnscostError } from '../../../common/errors.js';

/** One complete response. */
export interface Http1Response {
  status: number;
  /** Header fields by lower-case name; repeated fields joined with ", " (RFC 9110 §5.3). */
  headers: Map<string, string>;
  body: Buffer;
  /** The server will close the connection after it (`Connection: close`, HTTP/1.0, or a close-delimited body). */
  close: boolean;
}

/** Longest status line and header block accepted. */
export const MAX_HEAD_BYTES = 16 * 1024;

const CRLF = Buffer.from('\r\n');
const HEAD_END = Buffer.from('\r\n\r\n');
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

function malformed(why: string): DnscostError {
  return new DnscostError(CODES.MALFORMED_ANSWER, `HTTP/1.1 response: ${why}`);
}

type Body =
  | { kind: 'length'; remaining: number }
  | { kind: 'chunked'; state: 'size' | 'data' | 'data-end' | 'trailers'; remaining: number }
  | { kind: 'close' };

/** Reads one response after another off a connection; one reader per connection. */
export class Http1Reader {
  private buffer: Buffer = Buffer.alloc(0);
  private head: { status: number; headers: Map<string, string>; close: boolean } | null = null;
  private body: Body | null = null;
  private parts: Buffer[] = [];
  private size = 0;

  /** @param maxBody the longest body accepted (a longer one is `malformed-answer`) */
  constructor(private readonly maxBody: number) {}

  /** True while part of a response has arrived but not all of it. */
  get partial(): boolean {
    return this.head !== null || this.buffer.length > 0;
  }

  /** Takes the next bytes; returns the response they complete, or null while more are needed. Throws when malformed. */
  push(chunk: Buffer): Http1Response | null {
    this.buffer = this.buffer.length ? Buffer.concat([this.buffer, chunk]) : chunk;
    for (;;) {
      if (!this.head) {
        const at = this.buffer.indexOf(HEAD_END);
        if (at < 0) {
          if (this.buffer.length > MAX_HEAD_BYTES) throw malformed(`no end of the header block within ${MAX_HEAD_BYTES} bytes`);
          return null;
        }
        if (at > MAX_HEAD_BYTES) throw malformed(`header block longer than ${MAX_HEAD_BYTES} bytes`);
        const head = parseHead(this.buffer.subarray(0, at).toString('latin1'));
        this.buffer = this.buffer.subarray(at + HEAD_END.length);
        // Interim responses (100 Continue, 103 Early Hints) precede the final one; 101 would switch protocols.
        if (head.status >= 100 && head.status < 200) {
          if (head.status === 101) throw malformed('101 Switching Protocols');
          continue;
        }
        this.head = head;
        this.body = bodyOf(head);
      }
      const done = this.readBody();
      if (!done) return null;
      const response: Http1Response = { ...this.head, body: this.parts.length === 1 ? this.parts[0]! : Buffer.concat(this.parts) };
      this.head = null;
      this.body = null;
      this.parts = [];
      this.size = 0;
      return response;
    }
  }

  /** The connection ended: the close-delimited response it completes, or null when none was under way; throws when one was cut. */
  end(): Http1Response | null {
    if (this.head && this.body?.kind === 'close') {
      const response: Http1Response = { ...this.head, body: Buffer.concat(this.parts), close: true };
      this.head = null;
      return response;
    }
    if (this.partial) throw new DnscostError(CODES.CONNECTION_CLOSED, `connection closed mid-answer (${this.size + this.buffer.length} bytes of a response received)`);
    return null;
  }

  private take(n: number): void {
    if (n === 0) return;
    this.size += n;
    if (this.size > this.maxBody) throw malformed(`body longer than ${this.maxBody} bytes`);
    this.parts.push(this.buffer.subarray(0, n));
    this.buffer = this.buffer.subarray(n);
  }

  /** Moves body bytes out of the buffer; true when the body is complete. */
  private readBody(): boolean {
    const b = this.body!;
    if (b.kind === 'close') {
      this.take(this.buffer.length);
      return false;
    }
    if (b.kind === 'length') {
      const n = Math.min(b.remaining, this.buffer.length);
      this.take(n);
      b.remaining -= n;
      return b.remaining === 0;
    }
    for (;;) {
      if (b.state === 'data') {
        const n = Math.min(b.remaining, this.buffer.length);
        this.take(n);
        b.remaining -= n;
        if (b.remaining > 0) return false;
        b.state = 'data-end';
      }
      if (b.state === 'data-end') {
        if (this.buffer.length < CRLF.length) return false;
        if (!this.buffer.subarray(0, CRLF.length).equals(CRLF)) throw malformed('chunk data not followed by CRLF');
        this.buffer = this.buffer.subarray(CRLF.length);
        b.state = 'size';
        continue;
      }
      const eol = this.buffer.indexOf(CRLF);
      if (eol < 0) {
        if (this.buffer.length > MAX_HEAD_BYTES) throw malformed('chunk line too long');
        return false;
      }
      const line = this.buffer.subarray(0, eol).toString('latin1');
      this.buffer = this.buffer.subarray(eol + CRLF.length);
      if (b.state === 'size') {
        const m = /^([0-9A-Fa-f]{1,8})[ \t]*(;.*)?$/.exec(line);
        if (!m) throw malformed(`bad chunk size ${JSON.stringify(line.slice(0, 40))}`);
        const size = parseInt(m[1]!, 16);
        if (size === 0) b.state = 'trailers';
        else {
          b.state = 'data';
          b.remaining = size;
        }
      } else if (line === '') return true; // the empty line after the trailer fields ends the message
    }
  }
}

function parseHead(text: string): { status: number; headers: Map<string, string>; close: boolean } {
  const lines = text.split('\r\n');
  const m = /^HTTP\/1\.([01]) ([1-9][0-9]{2})(?: .*)?$/.exec(lines[0]!);
  if (!m) throw malformed(`bad status line ${JSON.stringify(lines[0]!.slice(0, 60))}`);
  const headers = new Map<string, string>();
  for (const line of lines.slice(1)) {
    const colon = line.indexOf(':');
    const name = colon > 0 ? line.slice(0, colon) : '';
    // RFC 9112 §5.1: no whitespace between the name and the colon; obsolete line folding is refused (§5.2).
    if (!TOKEN.test(name)) throw malformed(`bad header line ${JSON.stringify(line.slice(0, 60))}`);
    const key = name.toLowerCase();
    const value = line.slice(colon + 1).trim();
    const had = headers.get(key);
    headers.set(key, had === undefined ? value : `${had}, ${value}`);
  }
  const connection = (headers.get('connection') ?? '').toLowerCase().split(',').map((s) => s.trim());
  const close = connection.includes('close') || (m[1] === '0' && !connection.includes('keep-alive'));
  return { status: Number(m[2]), headers, close };
}

function bodyOf(head: { status: number; headers: Map<string, string> }): Body {
  // RFC 9112 §6.3: 204 and 304 have no body whatever the headers say.
  if (head.status === 204 || head.status === 304) return { kind: 'length', remaining: 0 };
  const coding = head.headers.get('transfer-encoding');
  if (coding !== undefined) {
    // A length beside a transfer coding is how requests are smuggled: refuse rather than choose (RFC 9112 §6.3).
    if (head.headers.has('content-length')) throw malformed('both Transfer-Encoding and Content-Length');
    if (coding.toLowerCase().split(',').map((s) => s.trim()).at(-1) !== 'chunked') throw malformed(`transfer coding ${JSON.stringify(coding)} does not end in chunked`);
    return { kind: 'chunked', state: 'size', remaining: 0 };
  }
  const length = head.headers.get('content-length');
  if (length === undefined) return { kind: 'close' };
  // Repeated identical values are allowed (RFC 9110 §8.6); differing ones are not.
  const values = [...new Set(length.split(',').map((s) => s.trim()))];
  if (values.length !== 1 || !/^\d{1,9}$/.test(values[0]!)) throw malformed(`bad Content-Length ${JSON.stringify(length)}`);
  return { kind: 'length', remaining: Number(values[0]) };
}
