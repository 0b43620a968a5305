import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { HEALTHY } from '@sluice/core';
import { Registry } from 'prom-client';
import type { CompletionWriter } from './completion-writer.ts';
import type { AttemptTransport } from './delivery-threads.ts';
import type { DestinationCache } from './destinations.ts';
import { EngineMetrics } from './metrics.ts';
import { Pacer } from './pacer.ts';
import { MemoryPacing } from './pacing.ts';
import { DeliveryRunner } from './runner.ts';
import type { Destination } from './store.ts';
import { claimedDelivery, newDestination } from './store-conformance.ts';

const destination: Destination = {
  ...newDestination('ten_1', { id: 'dst_1' }),
  state: 'active',
  disabledReason: null,
  createdAt: 0,
  updatedAt: 0,
  health: { ...HEALTHY },
};

describe('DeliveryRunner and a delivery published ahead (notBefore)', () => {
  it('waits for notBefore: the start is recorded, and the request sent, no sooner', async () => {
    const pacing = new MemoryPacing(new Pacer({ marginMs: 5, arrivalBoundMs: 250 }));
    const starts: number[] = [];
    const sentAt: number[] = [];
    const recorded: number[] = [];
    const original = pacing.start.bind(pacing);
    pacing.start = async (...args) => {
      starts.push(Date.now());
      return original(...args);
    };
    const runner = new DeliveryRunner({
      destinations: { get: async () => destination } as unknown as DestinationCache,
      pacing,
      deliverer: {
        attempt: async () => {
          sentAt.push(Date.now());
          return { result: { kind: 'response', statusCode: 200 }, responseExcerpt: null };
        },
        close: async () => undefined,
      } as unknown as AttemptTransport,
      completions: {
        add: (c: { completed: { attempt: { startedAt: number } } }) => {
          recorded.push(c.completed.attempt.startedAt);
          return Promise.resolve();
        },
      } as unknown as CompletionWriter,
      metrics: new EngineMetrics(
        new Registry(),
        () => ({ queued: 0, inFlight: 0, scheduled: 0 }),
        async () => null,
      ),
      clock: Date.now,
      random: Math.random,
    });
    await pacing.published('dst_1', ['dlv_1'], { limit: 10, periodMs: 1_000, burst: null }, Date.now());
    const notBefore = Date.now() + 80;
    await runner.run(claimedDelivery('dlv_1', { notBefore }));
    assert.ok((starts[0] as number) >= notBefore, 'the start is recorded once the slot has freed');
    assert.equal(pacing.pacer.peek('dst_1')?.window.size, 1, 'the send is in the window');
    assert.ok((sentAt[0] as number) >= notBefore, `sent ${notBefore - (sentAt[0] as number)} ms early`);
    assert.ok((recorded[0] as number) >= notBefore, "the attempt's start is no sooner either");
  });
});
