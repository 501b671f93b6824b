// Native messaging framing: a 32-bit length in native byte order, then that many bytes of UTF-8 JSON.
// The decoder is a pure state machine over chunks: frames over the limit are skipped byte by byte without being
// held in memory, and a frame left incomplete (truncated) is reported rather than allowed to swallow the next one.
import { endianness } from 'node:os';

/** What the decoder yields: a complete frame's bytes, or a frame it refused. */
export type FrameEvent =
  | { kind: 'frame'; body: Buffer }
  | { kind: 'too-large'; length: number }
  | { kind: 'truncated'; expected: number; received: number };

const LITTLE = endianness() === 'LE';

/** Encodes one frame in the host's byte order. */
export function encodeFrame(body: Buffer | string): Buffer {
  const payload = typeof body === 'string' ? Buffer.from(body, 'utf8') : body;
  const header = Buffer.alloc(4);
  if (LITTLE) header.writeUInt32LE(payload.length);
  else header.writeUInt32BE(payload.length);
  return Buffer.concat([header, payload]);
}

/** Incremental frame decoder. */
export class FrameDecoder {
  private header = Buffer.alloc(0);
  private parts: Buffer[] = [];
  private have = 0;
  private expected = -1;
  private skipping = 0;

  constructor(private readonly maxBytes: number) {}

  /** Feeds a chunk; returns the events it completes. */
  push(chunk: Buffer): FrameEvent[] {
    const out: FrameEvent[] = [];
    let data = chunk;
    while (data.length > 0) {
      if (this.skipping > 0) {
        const n = Math.min(this.skipping, data.length);
        this.skipping -= n;
        data = data.subarray(n);
        continue;
      }
      if (this.expected < 0) {
        const need = 4 - this.header.length;
        this.header = Buffer.concat([this.header, data.subarray(0, need)]);
        data = data.subarray(need);
        if (this.header.length < 4) break;
        const length = LITTLE ? this.header.readUInt32LE(0) : this.header.readUInt32BE(0);
        this.header = Buffer.alloc(0);
        if (length > this.maxBytes) {
          this.skipping = length;
          out.push({ kind: 'too-large', length });
          continue;
        }
        this.expected = length;
        if (length === 0) {
          this.expected = -1;
          out.push({ kind: 'frame', body: Buffer.alloc(0) });
        }
        continue;
      }
      const n = Math.min(this.expected - this.have, data.length);
      this.parts.push(data.subarray(0, n));
      this.have += n;
      data = data.subarray(n);
      if (this.have === this.expected) {
        out.push({ kind: 'frame', body: Buffer.concat(this.parts) });
        this.reset();
      }
    }
    return out;
  }

  /** True while a frame (or its header) is partly received. */
  get pending(): boolean {
    return this.header.length > 0 || this.expected >= 0;
  }

  /** True while an oversized frame is being skipped. */
  get skippingBytes(): number {
    return this.skipping;
  }

  /** Gives up on a partly received frame (it stalled, or input ended); returns the event describing it. */
  abandon(): FrameEvent | null {
    if (!this.pending) return null;
    const event: FrameEvent = { kind: 'truncated', expected: this.expected < 0 ? 4 : this.expected, received: this.expected < 0 ? this.header.length : this.have };
    this.reset();
    return event;
  }

  private reset(): void {
    this.header = Buffer.alloc(0);
    this.parts = [];
    this.have = 0;
    this.expected = -1;
  }
}
