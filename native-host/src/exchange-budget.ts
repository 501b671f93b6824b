// How much the host asks one resolver in an hour (issue 26 item 4): a page decides which names are measured, so
// however many pages a person visits, the host sends at most EXCHANGES_PER_RESOLVER_HOUR exchanges to one resolver
// address on the internet in any hour, and refuses a measurement that would go past it before it sends anything
// (over-budget). Resolvers on the person's own network (and the lab's) are theirs to load: not counted. One
// page of 150 names over a public resolver's five endpoints, cold and warm, three repeats, is about 14,000; the
// extension's sampler measures a few pages an hour. In memory: the host lives as long as the browser's connection.
import { CODES, DnscostError } from '../../common/errors.js';
import { isGlobalAddress } from '../../common/name-privacy.js';
import type { MeasureRequest } from '../../common/schema.js';
import { requestPlan } from './engine/measure.js';

/** Exchanges the host sends to one resolver address in any hour, at most. */
export const EXCHANGES_PER_RESOLVER_HOUR = 40_000;
const HOUR_MS = 3_600_000;

/** The exchanges a request would send to each global resolver address: questions × modes × repeats (+ priming, warm-up) per endpoint. */
export function plannedExchanges(req: MeasureRequest): Map<string, number> {
  const questions = requestPlan(req).reduce((n, h) => n + h.qtypes.length, 0);
  const perEndpoint = questions * (req.modes ?? ['cold']).length * (req.repeat ?? 1) + (req.prime ? questions : 0) + (req.warmup === false ? 0 : 1);
  const out = new Map<string, number>();
  for (const r of req.resolvers) {
    for (const e of r.endpoints) {
      if ((req.transports && !req.transports.includes(e.transport)) || !isGlobalAddress(e.address)) continue;
      out.set(e.address, (out.get(e.address) ?? 0) + perEndpoint);
    }
  }
  return out;
}

/** A sliding hour of exchanges per resolver address. */
export class ExchangeBudget {
  private spent = new Map<string, Array<{ at: number; n: number }>>();

  constructor(
    private readonly limit = EXCHANGES_PER_RESOLVER_HOUR,
    private readonly now: () => number = Date.now,
  ) {}

  /** Exchanges sent to `address` in the last hour. */
  used(address: string): number {
    const since = this.now() - HOUR_MS;
    const list = (this.spent.get(address) ?? []).filter((x) => x.at > since);
    this.spent.set(address, list);
    return list.reduce((n, x) => n + x.n, 0);
  }

  /** Takes `req`'s exchanges from every address it asks, or throws over-budget (taking nothing) when one would go past. */
  spend(req: MeasureRequest): void {
    const planned = plannedExchanges(req);
    for (const [address, n] of planned) {
      const used = this.used(address);
      if (used + n > this.limit) {
        throw new DnscostError(CODES.OVER_BUDGET, `the measurement would send ${n} exchanges to ${address}, which had ${used} in the last hour; the host sends at most ${this.limit} to one resolver in an hour`);
      }
    }
    const at = this.now();
    for (const [address, n] of planned) this.spent.get(address)!.push({ at, n });
  }
}
