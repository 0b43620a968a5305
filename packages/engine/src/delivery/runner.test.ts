import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { HEALTHY } from '@sluice/core';
import type { Destination } from '@sluice/store';
import { claimedDelivery, newDestination } from '@sluice/store/conformance';
import { Registry } from 'prom-client';
import type { DestinationCache } from '../destination-cache.ts';
import { EngineMetrics } from '../ops/metrics.ts';
import { MemoryPacing, Pacer } from '../pace/memory-pacing.ts';
import type { CompletionWriter } from './completion-writer.ts';
import type { AttemptTransport } from './deliver.ts';
import { DeliveryRunner } from './runner.ts';

const destinationAt = (limit: number): Destination => ({
  ...newDestination('ten_1', { id: 'dst_1', rateLimit: { limit, period: 'second' } }),
  state: 'active',
  disabledReason: null,
  createdAt: 0,
  updatedAt: 0,
  health: { ...HEALTHY },
});

/** A runner over a memory pace; what it does is recorded in the returned arrays. */
function setup(destination: () => Destination) {
  const pacing = new MemoryPacing(new Pacer({ marginMs: 5, arrivalBoundMs: 250 }));
  const seen = {
    starts: [] as number[],
    sentAt: [] as number[],
    recorded: [] as number[],
    attempts: [] as number[],
    released: [] as string[],
    woken: [] as string[],
  };
  const original = pacing.start.bind(pacing);
  pacing.start = (async (
    d: string,
    id: string,
    periodMs: number,
    timeoutMs: number,
    now: number,
    cap?: number,
  ) => {
    seen.starts.push(Date.now());
    return original(d, id, periodMs, timeoutMs, now, cap);
  }) as typeof pacing.start;
  const metrics = new EngineMetrics(
    new Registry(),
    () => ({ queued: 0, inFlight: 0, scheduled: 0 }),
    async () => null,
  );
  const runner = new DeliveryRunner({
    destinations: { get: async () => destination() } as unknown as DestinationCache,
    pacing,
    deliverer: {
      attempt: async (req: { attempt: number }) => {
        seen.sentAt.push(Date.now());
        seen.attempts.push(req.attempt);
        return { result: { kind: 'response', statusCode: 200 }, responseExcerpt: null };
      },
      close: async () => undefined,
    } as unknown as AttemptTransport,
    completions: {
      add: (c: { completed: { attempt: { startedAt: number } } }) => {
        seen.recorded.push(c.completed.attempt.startedAt);
        return Promise.resolve();
      },
    } as unknown as CompletionWriter,
    metrics,
    clock: Date.now,
    random: Math.random,
    store: {
      releaseClaims: async (ids) => {
        seen.released.push(...ids);
        return ids.length;
      },
    },
    wake: (id) => seen.woken.push(id),
  });
  return { pacing, runner, seen, metrics };
}

describe('DeliveryRunner', () => {
  it('waits for notBefore: the start is recorded, and the request sent, no sooner', async () => {
    const { pacing, runner, seen } = setup(() => destinationAt(10));
    await pacing.published('dst_1', ['dlv_1'], { limit: 10, periodMs: 1_000, burst: null }, Date.now());
    const notBefore = Date.now() + 80;
    await runner.run(claimedDelivery('dlv_1', { notBefore }));
    assert.ok((seen.starts[0] as number) >= notBefore, 'the start is recorded once the slot has freed');
    assert.equal(pacing.pacer.peek('dst_1')?.window.size, 1, 'the send is in the window');
    assert.ok(
      (seen.sentAt[0] as number) >= notBefore,
      `sent ${notBefore - (seen.sentAt[0] as number)} ms early`,
    );
    assert.ok((seen.recorded[0] as number) >= notBefore, "the attempt's start is no sooner either");
  });

  it('a delivery the window has no room for under a limit lowered since its publish goes back to pending', async () => {
    let limit = 3;
    const { pacing, runner, seen, metrics } = setup(() => destinationAt(limit));
    const plan = { limit: 3, periodMs: 1_000, burst: null };
    await pacing.published('dst_1', ['dlv_1', 'dlv_2', 'dlv_3'], plan, Date.now());
    await runner.run(claimedDelivery('dlv_1'));
    await runner.run(claimedDelivery('dlv_2'));
    // The limit falls to 2 before the third starts: the window holds 2 sends already.
    limit = 2;
    const ran = await runner.run(claimedDelivery('dlv_3'));
    assert.deepEqual(ran, {}, 'nothing to write: no attempt was made');
    assert.equal(seen.sentAt.length, 2, 'no request for the third');
    assert.deepEqual(seen.released, ['dlv_3'], 'back to pending in the store');
    assert.deepEqual(seen.woken, ['dst_1'], 'its destination woken for its next tick');
    const pace = pacing.pacer.peek('dst_1');
    assert.equal(pace?.queued, 0, 'no longer counted as queued');
    assert.equal(pace?.window.count(Date.now()), 2, 'nor in the window');
    assert.equal((await metrics.releasedStarts.get()).values[0]?.value, 1);
    // Under the limit in force it starts as before.
    limit = 3;
    await pacing.published('dst_1', ['dlv_3'], plan, Date.now());
    await runner.run(claimedDelivery('dlv_3'));
    assert.equal(seen.sentAt.length, 3);
  });

  it('a job run again numbers a request that started before one higher', async () => {
    const { pacing, runner, seen } = setup(() => destinationAt(10));
    const plan = { limit: 10, periodMs: 1_000, burst: null };
    await pacing.published('dst_1', ['dlv_1', 'dlv_2'], plan, Date.now());
    await runner.run(claimedDelivery('dlv_1'));
    // Its job runs again after its worker died: where the pace is shared, it says whether a
    // request of the claim started before.
    const original = pacing.start.bind(pacing);
    pacing.start = (async (...args: Parameters<typeof pacing.start>) => {
      const pace = await original(...args);
      return pace && { ...pace, startedBefore: args[1] === 'dlv_1' };
    }) as typeof pacing.start;
    await pacing.published('dst_1', ['dlv_1'], plan, Date.now());
    await runner.run(claimedDelivery('dlv_1'), true);
    await runner.run(claimedDelivery('dlv_2'), true);
    assert.deepEqual(
      seen.attempts,
      [1, 2, 1],
      'the repeat one higher; a delivery that never started keeps its number',
    );
  });
});
