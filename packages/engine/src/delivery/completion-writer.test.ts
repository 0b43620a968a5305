import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { CompletedAttempt, Destination, Store } from '@sluice/store';
import { pino } from 'pino';
import { Registry } from 'prom-client';
import { EngineMetrics } from '../ops/metrics.ts';
import { type Completion, CompletionWriter } from './completion-writer.ts';

/** A completion as the writer reads it: the attempt, a delivered outcome, a healthy destination. */
function completion(n: number): Completion {
  return {
    completed: {
      attempt: {
        id: `att_${n}`,
        deliveryId: `dlv_${n}`,
        destinationId: 'dst_a',
        statusCode: 200,
        errorCode: null,
      },
      status: 'delivered',
    } as unknown as CompletedAttempt,
    destination: { id: 'dst_a', health: { state: 'healthy' } } as unknown as Destination,
    outcome: {
      transition: 'succeed',
      nextAttemptAt: null,
      disableDestination: false,
    } as Completion['outcome'],
  };
}

function writer(completeAttempts: Store['completeAttempts']): CompletionWriter {
  return new CompletionWriter({
    store: { completeAttempts } as unknown as Store,
    metrics: new EngineMetrics(
      new Registry(),
      () => ({ queued: 0, inFlight: 0, scheduled: 0 }),
      async () => null,
    ),
    logger: pino({ level: 'silent' }),
    clock: Date.now,
    flushMs: 1,
    onSettled: () => {},
  });
}

describe('CompletionWriter', () => {
  it("add's promise resolves once the completion's batch committed, and only then", async () => {
    let commit = (): void => {};
    const writes: number[] = [];
    const w = writer(async (batch) => {
      writes.push(batch.length);
      await new Promise<void>((resolve) => {
        commit = resolve;
      });
      return [];
    });
    let written = 0;
    for (const n of [1, 2]) void w.add(completion(n)).then(() => written++);
    await new Promise((r) => setTimeout(r, 50));
    assert.deepEqual(writes, [2], 'one batch, being written');
    assert.equal(written, 0, 'not before the commit');
    commit();
    await w.flush();
    assert.equal(written, 2);
  });

  it('a failed write is tried again: the promise resolves after the write that commits', async () => {
    let tries = 0;
    const w = writer(async () => {
      if (++tries === 1) throw new Error('the store blinked');
      return [];
    });
    await w.add(completion(1));
    assert.equal(tries, 2);
  });
});
