// Tests of the host's loop (native.ts) in-process: every reply frame the host writes to `output`, decoded, in order.
import type { Readable } from 'node:stream';
import { FrameDecoder } from './framing.js';

/** The replies written to `output` so far (the array grows as frames arrive); frames up to `maxFrame` bytes. */
export function collectReplies(output: Readable, maxFrame = 64 * 1024 * 1024): Array<Record<string, unknown>> {
  const replies: Array<Record<string, unknown>> = [];
  const decoder = new FrameDecoder(maxFrame);
  output.on('data', (chunk: Buffer) => {
    for (const e of decoder.push(chunk)) if (e.kind === 'frame') replies.push(JSON.parse(e.body.toString('utf8')) as Record<string, unknown>);
  });
  return replies;
}
