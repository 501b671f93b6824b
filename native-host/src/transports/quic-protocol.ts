// The protocol between the host and its QUIC companion (native-host/quic/main.go), declared once: frames are a
// 4-byte big-endian length and UTF-8 JSON, both ways. Requests are typed here; every frame from the companion passes
// `parseCompanionFrame` (valibot) before anything reads it, so a companion of another version cannot feed the
// engine fields it does not understand.
import * as v from 'valibot';
import { type ErrorCode, CODES } from '../../../common/errors.js';

/** Version of this protocol; the companion reports its own in `hello` and a mismatch makes doq/doh3 unavailable. */
export const QUIC_PROTOCOL_VERSION = 1;
/** Largest frame either side sends. */
export const MAX_QUIC_FRAME = 1024 * 1024;

/** The QUIC transports the companion speaks. */
export type QuicTransportId = 'doq' | 'doh3';

/** Every request the host sends; each gets exactly one reply with the same id. */
export type CompanionRequest =
  | { id: number; type: 'hello'; ca?: string }
  | {
      id: number;
      type: 'open';
      transport: QuicTransportId;
      address: string;
      port: number;
      serverName?: string;
      path?: string;
      method?: 'GET' | 'POST';
      ca?: string;
      timeoutMs: number;
      /** Resume with the session ticket a previous connection received (0-RTT where the server allows). */
      resumeFrom?: number;
    }
  | { id: number; type: 'exchange'; conn: number; query: string; timeoutMs: number }
  | { id: number; type: 'close'; conn: number };

const count = v.pipe(v.number(), v.integer(), v.minValue(0));
const pair = v.strictObject({ sent: count, received: count });
const ms = v.pipe(v.number(), v.minValue(0));

/**
 * Cumulative wire figures of one QUIC connection, counted per UDP datagram (IP and UDP headers included), and when
 * they were read (`at`: µs since the Unix epoch, the clock a packet capture stamps frames with) and when the last
 * datagram counted as received was read (`readAt`, same clock, 0 before any).
 */
export const companionWire = v.strictObject({
  bytes: pair,
  packets: pair,
  payload: pair,
  dns: pair,
  at: v.number(),
  readAt: v.number(),
});
export type CompanionWire = v.InferOutput<typeof companionWire>;

const companionTls = v.strictObject({
  version: v.nullable(v.string()),
  alpn: v.nullable(v.string()),
  cipher: v.nullable(v.string()),
  resumed: v.boolean(),
  earlyData: v.boolean(),
  /** False while an early (0-RTT) connection's handshake is still running: the fields above are not final. */
  complete: v.boolean(),
});
export type CompanionTls = v.InferOutput<typeof companionTls>;

const errorCodes = Object.values(CODES) as [ErrorCode, ...ErrorCode[]];
const connId = v.pipe(v.number(), v.integer(), v.minValue(1));
const frameId = v.pipe(v.number(), v.integer(), v.minValue(0));

/** Every frame the companion sends. */
export const companionFrame = v.variant('type', [
  v.strictObject({ id: frameId, type: v.literal('hello'), version: v.string(), protocol: v.number(), quicGo: v.string() }),
  v.strictObject({
    id: frameId,
    type: v.literal('opened'),
    conn: connId,
    handshakeMs: ms,
    /** The connection is usable before its handshake finished (0-RTT keys from a resumed session). */
    early: v.boolean(),
    tls: companionTls,
    wire: companionWire,
  }),
  v.strictObject({
    id: frameId,
    type: v.literal('answer'),
    conn: connId,
    answer: v.pipe(v.string(), v.base64()),
    queryMs: ms,
    tls: companionTls,
    ticket: v.boolean(),
    wire: companionWire,
  }),
  v.strictObject({
    id: frameId,
    type: v.literal('error'),
    code: v.picklist(errorCodes),
    message: v.string(),
    conn: v.optional(connId),
    wire: v.optional(companionWire),
    handshakeMs: v.optional(ms),
    queryMs: v.optional(ms),
    tls: v.optional(companionTls),
  }),
  v.strictObject({ id: frameId, type: v.literal('closed'), conn: connId, wire: v.optional(companionWire) }),
  v.strictObject({ id: v.literal(0), type: v.literal('event'), conn: connId, event: v.literal('connection-closed'), detail: v.string() }),
]);
export type CompanionFrame = v.InferOutput<typeof companionFrame>;

/** Validates one frame's JSON body: the frame, or the problems as `path: message` lines. */
export function parseCompanionFrame(body: Buffer): { ok: true; frame: CompanionFrame } | { ok: false; problem: string } {
  let value: unknown;
  try {
    value = JSON.parse(body.toString('utf8'));
  } catch (err) {
    return { ok: false, problem: `not JSON: ${(err as Error).message}` };
  }
  const result = v.safeParse(companionFrame, value);
  if (result.success) return { ok: true, frame: result.output };
  const issue = result.issues[0];
  return { ok: false, problem: `${(issue.path ?? []).map((p) => String(p.key)).join('.') || '(frame)'}: ${issue.message}` };
}

/** Encodes a request as one frame. */
export function encodeCompanionFrame(message: CompanionRequest): Buffer {
  const body = Buffer.from(JSON.stringify(message), 'utf8');
  const header = Buffer.alloc(4);
  header.writeUInt32BE(body.length);
  return Buffer.concat([header, body]);
}

/** Splits a byte stream into frame bodies; a frame over the limit is an error (the companion never sends one). */
export class CompanionFrameDecoder {
  private buffer: Buffer = Buffer.alloc(0);

  /** Feeds a chunk; returns the complete frame bodies. Throws on a frame over MAX_QUIC_FRAME. */
  push(chunk: Buffer): Buffer[] {
    this.buffer = this.buffer.length ? Buffer.concat([this.buffer, chunk]) : chunk;
    const out: Buffer[] = [];
    while (this.buffer.length >= 4) {
      const length = this.buffer.readUInt32BE(0);
      if (length > MAX_QUIC_FRAME) throw new Error(`companion frame of ${length} bytes is over ${MAX_QUIC_FRAME}`);
      if (this.buffer.length < 4 + length) break;
      out.push(this.buffer.subarray(4, 4 + length));
      this.buffer = this.buffer.subarray(4 + length);
    }
    return out;
  }

  /** Bytes of an incomplete frame still held. */
  get pending(): number {
    return this.buffer.length;
  }
}
