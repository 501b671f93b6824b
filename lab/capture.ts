// Packet capture for tests: tshark on loopback, read back frame by frame, plus "markers" — tiny TCP segments the
// test writes to a port of its own at moments it wants to find in the capture (e.g. just before and just after
// the engine reads a connection's counters). A marker write on an idle loopback socket with Nagle off reaches the
// capture tap inside the write() syscall, so frames before a marker's frame were on the wire before that moment.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import net from 'node:net';
import type { WireTotals } from '../native-host/src/dial.js';
import type { Session, Transport } from '../native-host/src/transports/transport.js';
import type { TransportId } from '../common/transports.js';

const START_TIMEOUT_MS = 15_000;
const STOP_TIMEOUT_MS = 10_000;
const READ_TIMEOUT_MS = 60_000;

/** One captured frame, with the fields the comparisons need. */
export interface Frame {
  /** Capture order (tshark frame.number), 1-based. */
  n: number;
  proto: 'tcp' | 'udp';
  /** tcp.stream or udp.stream index. */
  stream: number;
  srcPort: number;
  dstPort: number;
  /** Bytes at IP level: ip.len, or ipv6.plen + 40 (frame.len on lo adds a 14-byte fake Ethernet header). */
  ipBytes: number;
  /** TCP segment payload length (0 for UDP). */
  tcpLen: number;
  syn: boolean;
  fin: boolean;
  rst: boolean;
  /** TCP relative sequence number (0 for UDP). */
  seq: number;
  /** TCP header length, options included. */
  hdrLen: number;
  /** Carries SACK blocks (sent after out-of-order or duplicate data arrived). */
  sack: boolean;
  /** Option bytes beyond the side's usual header (the SACK option), set by frames(). */
  sackBytes: number;
  /**
   * Carries data (or a SYN) its sender had sent before: a retransmission, spurious or not. Set by frames() from
   * sequence numbers, per stream and direction; `dupBytes` is how much of its payload had been sent before.
   */
  retransmission: boolean;
  dupBytes: number;
  /** Hex of the TCP payload, kept only for frames to the marker port. */
  payload: string;
  /** First DNS message in the frame, where tshark dissects DNS (Do53 ports): id, query name, response flag. */
  dns: { id: number; name: string; response: boolean } | null;
}

/** Runs a command with a time limit; resolves with stdout, rejects with stderr on failure. */
export function run(cmd: string, args: string[], timeoutMs: number): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(cmd, args, { timeout: timeoutMs, maxBuffer: 256 * 1024 * 1024 }, (err, stdout, stderr) => {
      if (err) reject(new Error(`${cmd} ${args.join(' ')}: ${err.message}\n${stderr}`));
      else resolve(stdout);
    });
  });
}

/** True when tshark exists and this process may capture (root or CAP_NET_RAW through dumpcap). */
export async function canCapture(): Promise<string | null> {
  try {
    await run('tshark', ['--version'], 10_000);
  } catch {
    return 'tshark is not installed';
  }
  if (process.getuid?.() !== 0) return 'capturing on lo needs root';
  return null;
}

/** A tshark capture on an interface, filtered to some ports, with a marker connection of its own. */
export class Capture {
  private child: ChildProcess | null = null;
  private stdout = '';
  private stderr = '';
  private markerServer: net.Server | null = null;
  private markerSocket: net.Socket | null = null;
  private readonly accepted: net.Socket[] = [];
  private seq = 0;
  markerPort = 0;

  constructor(
    readonly file: string,
    private readonly ports: number[],
    private readonly iface = 'lo',
  ) {}

  /** Starts tshark and returns once it demonstrably captures (a marker written now shows up in its output). */
  async start(): Promise<void> {
    this.markerServer = net.createServer((s) => {
      this.accepted.push(s);
      s.on('data', () => {});
      s.on('error', () => {});
    });
    await new Promise<void>((resolve, reject) => {
      this.markerServer!.once('error', reject);
      this.markerServer!.listen({ host: '127.0.0.1', port: 0 }, () => resolve());
    });
    this.markerPort = (this.markerServer.address() as net.AddressInfo).port;
    const filter = [...new Set([...this.ports, this.markerPort])].map((p) => `port ${p}`).join(' or ');
    // -P -l: print a summary line per packet even while writing the file, flushed, so readiness and the last
    // packet can be seen without reading a file tshark is still writing.
    const child = spawn('tshark', ['-i', this.iface, '-w', this.file, '-f', filter, '-P', '-l', '-n'], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    this.child = child;
    child.stdout!.on('data', (d: Buffer) => (this.stdout += d.toString()));
    child.stderr!.on('data', (d: Buffer) => (this.stderr += d.toString()));
    child.once('error', (e) => (this.stderr += `spawn error: ${e.message}\n`));
    const deadline = Date.now() + START_TIMEOUT_MS;
    while (!this.stderr.includes('Capturing on')) {
      if (child.exitCode !== null || Date.now() > deadline) throw new Error(`tshark did not start:\n${this.stderr}`);
      await sleep(20);
    }
    this.markerSocket = net.connect({ host: '127.0.0.1', port: this.markerPort, noDelay: true });
    await new Promise<void>((resolve, reject) => {
      this.markerSocket!.once('connect', resolve);
      this.markerSocket!.once('error', reject);
    });
    // "Capturing on" can come before the kernel filter is attached: probe until a marker shows up in the output.
    // tshark prints with a lag of up to ~1 s, so any marker seen will do (earlier ones may have been missed).
    for (;;) {
      this.mark();
      if (await this.waitFor(4, 300)) break;
      if (child.exitCode !== null || Date.now() > deadline) throw new Error(`tshark captures nothing:\n${this.stderr}`);
    }
  }

  /** Writes a marker segment now and returns its number (found again with markerFrames()). */
  mark(): number {
    const seq = ++this.seq;
    this.write(seq, 4);
    return seq;
  }

  /** Writes one marker segment of `length` bytes (its number first, big-endian). */
  private write(seq: number, length: number): void {
    const buf = Buffer.alloc(length);
    buf.writeUInt32BE(seq);
    this.markerSocket!.write(buf);
  }

  // Summary lines show only a segment's length: waits for a segment of `length` bytes to the marker port.
  private async waitFor(length: number, timeoutMs: number): Promise<boolean> {
    const deadline = Date.now() + timeoutMs;
    const re = new RegExp(`→ ${this.markerPort} .*Len=${length}\\b`);
    while (Date.now() < deadline) {
      if (re.test(this.stdout)) return true;
      await sleep(10);
    }
    return false;
  }

  /** Writes a last marker, waits until tshark has it (so every earlier packet is in the file), then stops tshark. */
  async stop(): Promise<void> {
    const child = this.child;
    if (!child) return;
    this.child = null;
    try {
      if (this.markerSocket && child.exitCode === null) {
        // The last marker is 5 bytes long, so its summary line tells it from the others.
        this.write(++this.seq, 5);
        if (!(await this.waitFor(5, STOP_TIMEOUT_MS))) throw new Error(`tshark did not see the final marker:\n${this.stderr}`);
      }
    } finally {
      this.markerSocket?.destroy();
      for (const s of this.accepted) s.destroy();
      await new Promise<void>((r) => (this.markerServer ? this.markerServer.close(() => r()) : r()));
      if (child.exitCode === null && child.signalCode === null) {
        const exited = new Promise<void>((r) => child.once('exit', () => r()));
        child.kill('SIGINT');
        const timer = setTimeout(() => child.kill('SIGKILL'), STOP_TIMEOUT_MS);
        await exited;
        clearTimeout(timer);
      }
    }
  }

  /** Reads the capture back; `dnsPorts` are dissected as DNS over UDP and TCP. */
  async frames(dnsPorts: number[]): Promise<Frame[]> {
    const fields = [
      'frame.number', 'tcp.stream', 'udp.stream', 'tcp.srcport', 'tcp.dstport', 'udp.srcport', 'udp.dstport',
      'ip.len', 'ipv6.plen', 'tcp.len', 'tcp.flags', 'tcp.payload', 'dns.id', 'dns.qry.name', 'dns.flags.response',
      'tcp.seq', 'tcp.options.sack_le', 'tcp.hdr_len',
    ];
    const args = ['-r', this.file, '-n', '-o', 'tcp.desegment_tcp_streams:FALSE', '-T', 'fields', '-E', 'separator=\t', '-E', 'occurrence=f'];
    for (const p of dnsPorts) args.push('-d', `udp.port==${p},dns`, '-d', `tcp.port==${p},dns`);
    for (const f of fields) args.push('-e', f);
    const out = await run('tshark', args, READ_TIMEOUT_MS);
    const frames: Frame[] = [];
    for (const line of out.split('\n')) {
      if (!line.trim()) continue;
      const [n, tcpStream, udpStream, tsp, tdp, usp, udp, ipLen, ip6Plen, tcpLen, flags, payload, dnsId, dnsName, dnsResp, seq, sackLe, hdrLen] =
        line.split('\t');
      const isTcp = tcpStream !== '';
      if (!isTcp && udpStream === '') continue;
      const flagBits = parseInt(flags || '0', 16);
      const srcPort = Number(isTcp ? tsp : usp);
      const dstPort = Number(isTcp ? tdp : udp);
      frames.push({
        n: Number(n),
        proto: isTcp ? 'tcp' : 'udp',
        stream: Number(isTcp ? tcpStream : udpStream),
        srcPort,
        dstPort,
        ipBytes: ipLen ? Number(ipLen) : Number(ip6Plen) + 40,
        tcpLen: Number(tcpLen || 0),
        syn: (flagBits & 0x02) !== 0,
        fin: (flagBits & 0x01) !== 0,
        rst: (flagBits & 0x04) !== 0,
        seq: Number(seq || 0),
        hdrLen: Number(hdrLen || 0),
        sack: Boolean(sackLe),
        sackBytes: 0,
        retransmission: false,
        dupBytes: 0,
        payload: dstPort === this.markerPort ? (payload ?? '') : '',
        dns: dnsId ? { id: parseInt(dnsId, dnsId.startsWith('0x') ? 16 : 10), name: dnsName ?? '', response: dnsResp === '1' || dnsResp === 'True' } : null,
      });
    }
    // Sequence space each side has sent so far: data starting below it was sent before. A side's usual header is
    // its smallest after the SYN; a SACK option makes a header longer than that.
    const sentUpTo = new Map<string, number>();
    const usualHeader = new Map<string, number>();
    for (const f of frames) {
      if (f.proto !== 'tcp') continue;
      const side = `${f.stream} ${f.srcPort}`;
      const high = sentUpTo.get(side);
      if (f.syn) f.retransmission = high !== undefined;
      else if (f.tcpLen > 0 && high !== undefined && f.seq < high) {
        f.retransmission = true;
        f.dupBytes = Math.min(high, f.seq + f.tcpLen) - f.seq;
      }
      sentUpTo.set(side, Math.max(high ?? 0, f.seq + f.tcpLen + (f.syn ? 1 : 0)));
      if (!f.syn && !f.sack) usualHeader.set(side, Math.min(usualHeader.get(side) ?? Infinity, f.hdrLen));
    }
    for (const f of frames) {
      if (f.proto === 'tcp' && f.sack) f.sackBytes = Math.max(0, f.hdrLen - (usualHeader.get(`${f.stream} ${f.srcPort}`) ?? f.hdrLen));
    }
    return frames;
  }

  /** Marker number → capture frame number, from the frames of the marker connection. */
  markerFrames(frames: Frame[]): Map<number, number> {
    const out = new Map<number, number>();
    for (const f of frames) {
      if (f.dstPort !== this.markerPort || f.tcpLen === 0) continue;
      // Markers are written one at a time on an idle socket, so each is its own segment. A marker the receiver
      // was slow to acknowledge is sent again (tail loss probe): its first transmission is the one that counts.
      for (let i = 0; i + 8 <= f.payload.length; i += 8) {
        const seq = parseInt(f.payload.slice(i, i + 8), 16);
        if (!out.has(seq)) out.set(seq, f.n);
      }
    }
    return out;
  }

  /** Kills tshark if still running (for cleanup after a failure). */
  kill(): void {
    this.markerSocket?.destroy();
    for (const s of this.accepted) s.destroy();
    this.markerServer?.close();
    if (this.child && this.child.exitCode === null) this.child.kill('SIGKILL');
    this.child = null;
  }
}

/** One read of a session's counters by the engine, bracketed by markers. */
export interface WireRead {
  /** Session number in open order (1-based), UDP sessions included. */
  session: number;
  transport: TransportId;
  /** Marker written just before and just after the read. */
  pre: number;
  post: number;
  totals: WireTotals;
  /** Index of the record this read belongs to (number of records the engine had emitted before it). */
  record: number;
}

/** One session opened by the engine, in open order. */
export interface OpenedSession {
  session: number;
  transport: TransportId;
}

/**
 * Wraps transports so every Session.wire() call — the moment the engine snapshots a connection's counters for a
 * record — is bracketed by two markers in the capture. Everything else is passed through untouched.
 */
export function traceTransports(
  transports: Record<TransportId, Transport>,
  capture: Pick<Capture, 'mark'>,
  recordIndex: () => number,
): { transports: Record<TransportId, Transport>; reads: WireRead[]; sessions: OpenedSession[] } {
  const reads: WireRead[] = [];
  const sessions: OpenedSession[] = [];
  const wrapped = {} as Record<TransportId, Transport>;
  for (const [id, inner] of Object.entries(transports) as [TransportId, Transport][]) {
    wrapped[id] = {
      id: inner.id,
      zeroId: inner.zeroId,
      pad: inner.pad,
      lengthPrefix: inner.lengthPrefix,
      idleMs: inner.idleMs,
      socketPerQuery: inner.socketPerQuery,
      splits: inner.splits,
      async open(endpoint, options) {
        const s = await inner.open(endpoint, options);
        const number = sessions.length + 1;
        sessions.push({ session: number, transport: id });
        const traced: Session = {
          get setup() { return s.setup; },
          get tls() { return s.tls; },
          get usable() { return s.usable; },
          exchange: (q, qid, ms) => s.exchange(q, qid, ms),
          wire() {
            const pre = capture.mark();
            const totals = s.wire();
            const post = capture.mark();
            reads.push({ session: number, transport: id, pre, post, totals, record: recordIndex() });
            return totals;
          },
          drainEvents: () => s.drainEvents(),
          resumable: () => s.resumable(),
          close: () => s.close(),
        };
        return traced;
      },
    };
  }
  return { transports: wrapped, reads, sessions };
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}
