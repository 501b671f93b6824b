import assert from 'node:assert/strict';
import { test } from 'vitest';
import { DnscostError } from '../../common/errors.js';
import type { MeasureRequest } from '../../common/schema.js';
import { ExchangeBudget, plannedExchanges } from './exchange-budget.js';

const req = (hosts: number, addresses: string[], extra: Partial<MeasureRequest> = {}): MeasureRequest => ({
  id: 'r', type: 'measure', hosts: Array.from({ length: hosts }, (_, i) => `h${i}.example.com`),
  resolvers: addresses.map((address) => ({ id: address, name: address, endpoints: [{ transport: 'udp' as const, address, port: 53 }, { transport: 'dot' as const, address, port: 853 }] })),
  ...extra,
});

test('planned exchanges per public resolver address: questions × modes × repeats, priming and the warm-up, per endpoint; own-network resolvers not counted', () => {
  const r = req(10, ['9.9.9.9', '192.168.1.1', '127.0.0.1'], { qtypes: ['A', 'AAAA'], modes: ['cold', 'warm'], repeat: 3, prime: true });
  // 20 questions × 2 modes × 3 repeats + 20 primed + 1 warm-up = 141 per endpoint, two endpoints.
  assert.deepEqual(Object.fromEntries(plannedExchanges(r)), { '9.9.9.9': 282 });
  assert.deepEqual(Object.fromEntries(plannedExchanges({ ...r, transports: ['udp'] })), { '9.9.9.9': 141 });
});

test('a sliding hour per address: a measurement that would go past the budget is refused whole, and the hour frees it again', () => {
  let now = 0;
  const budget = new ExchangeBudget(1000, () => now);
  const page = req(100, ['9.9.9.9'], { warmup: false }); // 200 exchanges
  for (let i = 0; i < 5; i++) budget.spend(page);
  assert.equal(budget.used('9.9.9.9'), 1000);
  assert.throws(() => budget.spend(page), (e: unknown) => e instanceof DnscostError && e.code === 'over-budget' && /9\.9\.9\.9/.test(e.message));
  assert.equal(budget.used('9.9.9.9'), 1000, 'a refused measurement takes nothing');
  budget.spend(req(100, ['1.1.1.1'], { warmup: false }));
  assert.throws(() => budget.spend(req(100, ['1.1.1.1', '9.9.9.9'], { warmup: false })), /9\.9\.9\.9/, 'one address over refuses the whole request');
  assert.equal(budget.used('1.1.1.1'), 200);
  now = 3_600_001;
  assert.equal(budget.used('9.9.9.9'), 0);
  budget.spend(page);
  for (let i = 0; i < 20; i++) budget.spend(req(100, ['10.0.0.53'], { warmup: false }));
});
