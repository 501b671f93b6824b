// Wire accounting, pure: a session's cumulative counters as disjoint parts that add up to the IP-level bytes (DNS,
// HTTP framing, TLS, headers), the difference between two snapshots, and integer splits of a shared connection's
// counts over the exchanges that used it, so no byte is lost or counted twice.
import type { Pair } from '../../../common/record.js';
import { zeroTotals, type WireTotals } from '../dial.js';

/** Counters of a session that sent and received nothing. */
export const ZERO: WireTotals = zeroTotals();

/** `a - b`, each direction. */
export const minus = (a: Pair, b: Pair): Pair => ({ sent: a.sent - b.sent, received: a.received - b.received });

/** `a + b`, each direction. */
export const plus = (a: Pair, b: Pair): Pair => ({ sent: a.sent + b.sent, received: a.received + b.received });

/** Wire totals as disjoint parts that add up to the IP-level bytes: DNS, HTTP framing (app), TLS, headers. */
export interface Parts {
  dns: Pair;
  /** TLS plaintext (or TCP payload) beyond the DNS messages: HTTP framing for DoH, normally 0 otherwise. */
  app: Pair;
  tls: Pair;
  headers: Pair;
  packets: Pair;
}

/** The parts of cumulative wire totals. */
export function partsOf(w: WireTotals): Parts {
  const inner = w.plain ?? w.payload;
  return {
    dns: w.dns,
    app: minus(inner, w.dns),
    tls: w.plain ? minus(w.payload, w.plain) : { sent: 0, received: 0 },
    headers: minus(w.bytes, w.payload),
    packets: w.packets,
  };
}

/** `a - b`, part by part. */
export function minusParts(a: Parts, b: Parts): Parts {
  return { dns: minus(a.dns, b.dns), app: minus(a.app, b.app), tls: minus(a.tls, b.tls), headers: minus(a.headers, b.headers), packets: minus(a.packets, b.packets) };
}

/** `a + b`, part by part. */
export function plusParts(a: Parts, b: Parts): Parts {
  return { dns: plus(a.dns, b.dns), app: plus(a.app, b.app), tls: plus(a.tls, b.tls), headers: plus(a.headers, b.headers), packets: plus(a.packets, b.packets) };
}

/** The IP-level bytes the parts add up to. */
export function sumParts(p: Parts): Pair {
  return plus(plus(p.dns, p.app), plus(p.tls, p.headers));
}

/** What a session's counters grew by between two snapshots (`before` is ZERO for a new session). */
export function deltaOf(after: WireTotals, before: WireTotals): WireTotals {
  return {
    bytes: minus(after.bytes, before.bytes),
    packets: minus(after.packets, before.packets),
    payload: minus(after.payload, before.payload),
    plain: after.plain ? minus(after.plain, before.plain ?? ZERO.payload) : null,
    dns: minus(after.dns, before.dns),
    provenance: after.provenance,
  };
}

/** Splits an integer `total` into `n` integer shares that add up to it exactly (the first ones get the remainder). */
export function splitEvenly(total: number, n: number): number[] {
  if (n <= 0) return [];
  const base = Math.floor(total / n);
  const extra = total - base * n;
  return Array.from({ length: n }, (_, i) => base + (i < extra ? 1 : 0));
}

/** Splits both directions of `total` into `n` exact integer shares. */
export function splitPair(total: Pair, n: number): Pair[] {
  const sent = splitEvenly(total.sent, n);
  const received = splitEvenly(total.received, n);
  return sent.map((s, i) => ({ sent: s, received: received[i]! }));
}
