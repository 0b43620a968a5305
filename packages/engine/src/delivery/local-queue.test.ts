import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import type { ClaimedDelivery } from '@sluice/store';
import { claimedDelivery } from '@sluice/store/conformance';
import { LocalQueue } from './local-queue.ts';
import type { DeliveryRunner } from './runner.ts';

function delivery(id: string, notBefore?: number): ClaimedDelivery {
  return claimedDelivery(id, notBefore === undefined ? {} : { notBefore });
}

/** A runner that records when each delivery started and holds it until `release(id)`. */
function recordingRunner() {
  const started: { id: string; at: number }[] = [];
  const holds = new Map<string, () => void>();
  const runner = {
    run: (d: ClaimedDelivery) =>
      new Promise<object>((resolve) => {
        started.push({ id: d.id, at: Date.now() });
        holds.set(d.id, () => resolve({}));
      }),
  } as unknown as DeliveryRunner;
  return { runner, started, release: (id: string) => holds.get(id)?.() };
}

describe('LocalQueue and deliveries published ahead (notBefore)', () => {
  it('one waiting for its slot holds none of the concurrency, and starts no sooner', async () => {
    const r = recordingRunner();
    const queue = new LocalQueue(r.runner, 1, () => undefined);
    const notBefore = Date.now() + 60;
    await queue.publish('dst_1', [delivery('ahead', notBefore), delivery('now')]);
    assert.deepEqual(
      r.started.map((s) => s.id),
      ['now'],
      'the one without notBefore takes the only slot',
    );
    assert.equal(queue.depth, 1, 'the waiting one is in the depth');
    r.release('now');
    await sleep(100);
    const ahead = r.started.find((s) => s.id === 'ahead');
    assert.ok(ahead && ahead.at >= notBefore, 'it started at its notBefore, not before');
    r.release('ahead');
    await queue.stop();
  });

  it('once due, it starts before the deliveries waiting in the FIFO', async () => {
    const r = recordingRunner();
    const queue = new LocalQueue(r.runner, 1, () => undefined);
    await queue.publish('dst_1', [delivery('busy'), delivery('fifo-1'), delivery('fifo-2')]);
    await queue.publish('dst_2', [delivery('ahead', Date.now() + 20)]);
    await sleep(50); // `ahead` is due; the slot is still busy
    r.release('busy');
    await sleep(5);
    assert.deepEqual(
      r.started.map((s) => s.id),
      ['busy', 'ahead'],
    );
    r.release('ahead');
    await sleep(5);
    r.release('fifo-1');
    await sleep(5);
    r.release('fifo-2');
    assert.deepEqual(
      r.started.map((s) => s.id),
      ['busy', 'ahead', 'fifo-1', 'fifo-2'],
    );
    await queue.stop();
  });
});
