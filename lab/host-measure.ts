// dnscost-host's `measure` in the lab's client namespace against the lab's server (named dns.test): the command line
// the timing tests and benchmarks share, and its JSON lines parsed and counted.
import type { ExchangeRecord } from '../common/record.js';
import type { LabNet } from './netns.js';
import { HOST_BIN } from './paths.js';

export interface LabMeasure {
  /** An endpoint URL; `dns.test` in it reaches the lab's server side. */
  endpoint: string;
  caFile: string;
  mode: 'cold' | 'warm';
  /** Exchanges (records) the process must print. */
  repeat: number;
  name: string;
  /** The bound on the whole process. */
  timeoutMs: number;
  /** Further options of `measure` (--resume, --get, --http1.1, --timeout MS). */
  extra?: readonly string[];
  hostBin?: string;
}

/** Runs one `measure` process and returns its records; throws unless it printed exactly `repeat` of them. */
export async function measureInLab(lab: LabNet, m: LabMeasure): Promise<ExchangeRecord[]> {
  const args = [
    m.hostBin ?? HOST_BIN, 'measure', '--endpoint', m.endpoint, '--connect', `dns.test=${lab.server.addr4}`, '--ca', m.caFile,
    '--mode', m.mode, '--repeat', String(m.repeat), '--json', '--quiet', ...(m.extra ?? []), m.name,
  ];
  const { stdout } = await lab.execIn('client', process.execPath, args, { timeoutMs: m.timeoutMs });
  const records = stdout.split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as ExchangeRecord);
  if (records.length !== m.repeat) throw new Error(`dnscost-host measure ${m.endpoint} (${m.mode}) printed ${records.length} records, expected ${m.repeat}`);
  return records;
}
