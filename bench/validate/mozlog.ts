// Firefox's own account of each lookup, from its MOZ_LOG (`timestamp,nsHostResolver:5`): per name, when the page's
// request found nothing in the cache, when the lookup left the resolver's queue (the DNS thread's getaddrinfo call,
// or TRR's first DoH request), each DoH request by record type, and when the name resolved, on the browser's clock
// (ms since the epoch). A name whose HTTPS record Firefox asks before its addresses (TRR, an http document) is one
// lookup from the first question to the addresses. Read after the browser has exited; a cut line is skipped.
import { readdirSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { QTYPE_NAMES, type BrowserLookup, type NetLogTransaction } from './netlog.js';

/**
 * The environment that makes Firefox write the log this file reads, to `file` (Firefox appends `.moz_log`);
 * DNSCOST_MOZ_LOG_EXTRA adds modules to look further (e.g. `nsHttp:5`: the TRR request's path to the wire).
 */
export const mozLogEnv = (file: string): Record<string, string> => ({
  MOZ_LOG: ['timestamp', 'nsHostResolver:5', ...(process.env.DNSCOST_MOZ_LOG_EXTRA ? [process.env.DNSCOST_MOZ_LOG_EXTRA] : [])].join(','),
  MOZ_LOG_FILE: file,
});

/** The files Firefox wrote for mozLogEnv(`file`): `<file>.moz_log` for its parent process, `<file>.child-N.moz_log`. */
export function mozLogFiles(file: string): string[] {
  return readdirSync(dirname(file)).filter((f) => f.startsWith(`${basename(file)}.`) && f.endsWith('.moz_log')).map((f) => join(dirname(file), f));
}

/** Firefox writes its log only at exit when fast shutdown is off (with it on, the last buffer is lost). */
export const MOZ_LOG_PREFS = { 'toolkit.shutdown.fastShutdownStage': 0 };

const LINE = /^(\d{4})-(\d\d)-(\d\d) (\d\d):(\d\d):(\d\d)\.(\d+) UTC - \[[^:\]]+ (\d+): [^\]]*\]: \w\/nsHostResolver (.*)$/;

/** Every name Firefox looked up (its addresses, with an HTTPS question asked before them), in the order they began. */
export function mozLogLookups(text: string): BrowserLookup[] {
  const done: BrowserLookup[] = [];
  // Per process and name: the lookup under way, whether its address question has been asked, and its DoH requests not
  // yet answered, by record type.
  const open = new Map<string, { l: BrowserLookup; addresses: boolean; pending: Map<string, NetLogTransaction[]> }>();
  for (const line of text.split('\n')) {
    const m = LINE.exec(line);
    if (!m) continue;
    const [, y, mo, d, h, mi, s, frac, pid, msg] = m as unknown as string[];
    const at = Date.UTC(+y!, +mo! - 1, +d!, +h!, +mi!, +s!) + Number(`0.${frac}`) * 1000;
    const key = (name: string) => `${pid} ${name.toLowerCase()}`;
    let x: RegExpExecArray | null;
    if ((x = /^ {2}No usable record in cache for host \[([^\]]+)\] type (0|65)\./.exec(msg!))) {
      const o = open.get(key(x[1]!));
      // An address question after the name's HTTPS question (still open: its addresses are what it waits for) joins it.
      if (o && !o.addresses) {
        if (x[2] === '0') o.addresses = true;
        continue;
      }
      if (o) continue;
      const l: BrowserLookup = { name: x[1]!.toLowerCase(), askedAt: at, startedAt: null, endedAt: null, secure: null, transactions: [], error: null };
      open.set(key(x[1]!), { l, addresses: x[2] === '0', pending: new Map() });
      done.push(l);
    } else if ((x = /^DNS resolve task - Calling getaddrinfo for host \[([^\]]+)\]/.exec(msg!))) {
      const o = open.get(key(x[1]!));
      if (o) o.l.startedAt ??= at;
    } else if ((x = /^TRR::SendHTTPRequest resolve (\S+) type (\d+)/.exec(msg!))) {
      const o = open.get(key(x[1]!));
      if (!o) continue;
      o.l.startedAt ??= at;
      const t: NetLogTransaction = { qtype: QTYPE_NAMES.get(Number(x[2])) ?? `TYPE${x[2]}`, startedAt: at, endedAt: null };
      o.l.transactions.push(t);
      o.pending.set(x[2]!, [...(o.pending.get(x[2]!) ?? []), t]);
    } else if ((x = /^TRR:OnStopRequest \S+ (\S+) (\d+) failed=/.exec(msg!))) {
      const t = open.get(key(x[1]!))?.pending.get(x[2]!)?.shift();
      if (t) t.endedAt = at;
    } else if ((x = /^nsHostResolver::CompleteLookup (\S+) \S+ ([0-9A-Fa-f]+) resolver=(\d+) stillResolving=(\d+)/.exec(msg!))) {
      const o = open.get(key(x[1]!));
      if (!o || !o.addresses || x[4] !== '0') continue;
      o.l.endedAt = at;
      o.l.secure = x[3] === '0' ? null : true;
      const status = parseInt(x[2]!, 16);
      o.l.error = status === 0 ? null : status;
      open.delete(key(x[1]!));
    }
  }
  return done;
}
