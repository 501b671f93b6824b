// Which TCP connections a side's processes hold, and ending them, in the side's network namespace (the lab's client
// side, shared by every side): `ss` lists established connections with their owning process, and `ss -K` (the
// kernel's SOCK_DESTROY) ends one by its ports, as if the peer had reset it. A side only ever counts or ends its own
// processes' connections (the browser's process tree, or its stub), so sides running side by side leave each other alone.
import { sh } from './children.js';

/** A destination: an address and optionally one port. */
export interface Dest {
  address: string;
  port?: number;
}

/** One established connection: its local port, its destination, the processes holding it, how long it has been idle. */
export interface OwnedConnection {
  localPort: number;
  address: string;
  port: number;
  pids: number[];
  /** ms since it last sent or received data (the kernel's lastsnd/lastrcv), when shown. */
  idleMs: number | null;
}

/** Parses `ss -tinpH state established` output (pure): a line per connection, its TCP details on the next, indented. */
export function parseSs(text: string): OwnedConnection[] {
  const out: OwnedConnection[] = [];
  for (const line of text.split('\n')) {
    if (/^\s/.test(line) && out.length) {
      const snd = /lastsnd:(\d+)/.exec(line);
      const rcv = /lastrcv:(\d+)/.exec(line);
      if (snd || rcv) out.at(-1)!.idleMs = Math.min(snd ? Number(snd[1]) : Infinity, rcv ? Number(rcv[1]) : Infinity);
      continue;
    }
    // Recv-Q Send-Q Local:Port Peer:Port users:(("name",pid=N,fd=M),…)
    const m = /^\d+\s+\d+\s+(\S+):(\d+)\s+(\S+):(\d+)\s*(.*)$/.exec(line);
    if (!m) continue;
    const pids = [...m[5]!.matchAll(/pid=(\d+)/g)].map((x) => Number(x[1]));
    out.push({ localPort: Number(m[2]), address: m[3]!.replace(/^\[|\]$/g, ''), port: Number(m[4]), pids, idleMs: null });
  }
  return out;
}

/** The established TCP connections to any of `dests` held by a process in `pids`. */
export async function connectionsOf(pids: ReadonlySet<number>, dests: readonly Dest[]): Promise<OwnedConnection[]> {
  const text = await sh('ss', ['-tinpH', 'state', 'established']);
  return parseSs(text).filter((c) => c.pids.some((p) => pids.has(p)) && dests.some((d) => d.address === c.address && (d.port === undefined || d.port === c.port)));
}

/** Ends each connection (SOCK_DESTROY: the peer gets a reset, the owner an error on its socket). */
export async function endConnections(conns: readonly OwnedConnection[]): Promise<void> {
  for (const c of conns) {
    // ss reports "Invalid argument" for sockets already gone between listing and ending: not a failure.
    await sh('ss', ['-K', 'dst', c.address, 'dport', '=', `:${c.port}`, 'sport', '=', `:${c.localPort}`]).catch(() => '');
  }
}

/**
 * Ends every connection of `pids` to `dests` and checks again until none is left (a browser may open one right away:
 * Chromium's DoH probe); resolves with how many are open at the end (0 unless they kept coming back).
 */
export async function closeAll(pids: () => ReadonlySet<number>, dests: readonly Dest[], settleMs = 150, tries = 8): Promise<number> {
  let open = await connectionsOf(pids(), dests);
  for (let i = 0; i < tries && open.length; i++) {
    await endConnections(open);
    await new Promise((r) => setTimeout(r, settleMs));
    open = await connectionsOf(pids(), dests);
  }
  return open.length;
}
