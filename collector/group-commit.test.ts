import { test } from 'vitest';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { GroupCommitter, QueueFull } from './group-commit.js';

test('GroupCommitter: groups while busy, caps group size and concurrency, settles each item', async () => {
  const groups: number[][] = [];
  let running = 0;
  let maxRunning = 0;
  const gc = new GroupCommitter<number, string>(async (items) => {
    groups.push(items);
    maxRunning = Math.max(maxRunning, ++running);
    await sleep(20);
    running--;
    return items.map((i) => `ok ${i}`);
  }, { maxItems: 4, windowMs: 2, concurrency: 2 });
  const results = await Promise.all(Array.from({ length: 10 }, (_, i) => gc.submit(i)));
  assert.deepEqual(results, Array.from({ length: 10 }, (_, i) => `ok ${i}`));
  assert.deepEqual(groups.flat(), Array.from({ length: 10 }, (_, i) => i), 'every item once, in order');
  assert.ok(groups.every((g) => g.length <= 4));
  assert.ok(groups.length <= 4, `${groups.length} groups for 10 items`);
  assert.equal(maxRunning, 2);
  await gc.drain();
});

test('GroupCommitter: a failed write rejects its whole group and later groups still run', async () => {
  let fail = true;
  const gc = new GroupCommitter<number, number>(async (items) => {
    if (fail) throw new Error('store down');
    return items;
  }, { maxItems: 10, windowMs: 1, concurrency: 1 });
  const first = await Promise.allSettled([gc.submit(1), gc.submit(2)]);
  assert.deepEqual(first.map((r) => r.status), ['rejected', 'rejected']);
  fail = false;
  assert.equal(await gc.submit(3), 3);
});

test('GroupCommitter: a full queue refuses at once (QueueFull); what was queued still commits', async () => {
  let release: () => void = () => undefined;
  const gate = new Promise<void>((r) => (release = r));
  const gc = new GroupCommitter<number, number>(async (items) => {
    await gate;
    return items;
  }, { maxItems: 2, windowMs: 1, concurrency: 1, maxQueued: 3 });
  const accepted = [gc.submit(1), gc.submit(2)]; // the first group, committing (held by the gate)
  await sleep(5);
  accepted.push(gc.submit(3), gc.submit(4), gc.submit(5)); // waiting: 3 of 3
  await assert.rejects(gc.submit(6), QueueFull);
  release();
  assert.deepEqual(await Promise.all(accepted), [1, 2, 3, 4, 5]);
  await gc.drain();
});
