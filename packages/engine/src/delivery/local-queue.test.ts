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
    const queue = new LocalQueue(r.runner, { concurrency: 1, onError: () => undefined });
    const notBefore = Date.now() + 60;
    await queue.publish('dst_1', [delivery('ahead', notBefore), delivery('now')]);
    assert.deepEqual(
      r.started.map((s) => s.id),
      ['now'],
      'the one without notBefore takes the only slot',
    );
    assert.equal(queue.depth, 1, 'the waiting one is in the depth');
    r.release('now');
    // Its timer may fire late on a loaded machine: wait for its start, not a fixed time.
    const until = Date.now() + 5_000;
    while (!r.started.some((s) => s.id === 'ahead') && Date.now() < until) await sleep(10);
    const ahead = r.started.find((s) => s.id === 'ahead');
    assert.ok(ahead, 'it started once due');
    // A timer may fire a millisecond early by the wall clock (the runner checks `notBefore`
    // again and waits for it): the queue hands it over no sooner than that.
    assert.ok(ahead.at >= notBefore - 1, `it started ${notBefore - ahead.at} ms before its notBefore`);
    r.release('ahead');
    await queue.stop();
  });

  it('once due, it starts before the deliveries waiting in the FIFO', async () => {
    const r = recordingRunner();
    const queue = new LocalQueue(r.runner, { concurrency: 1, onError: () => undefined });
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

describe('LocalQueue is fair across tenants, then destinations', () => {
  it('takes the next tenant with work, then its next destination, round robin', async () => {
    const r = recordingRunner();
    const tenants: Record<string, string> = { dst_a: 'ten_1', dst_b: 'ten_1', dst_c: 'ten_2' };
    const queue = new LocalQueue(r.runner, {
      concurrency: 1,
      onError: () => undefined,
      tenantOf: (id) => tenants[id],
    });
    // One slot, held: everything published meanwhile waits.
    await queue.publish('dst_a', [delivery('a0')]);
    await queue.publish(
      'dst_a',
      ['a1', 'a2', 'a3', 'a4'].map((id) => delivery(id)),
    );
    await queue.publish(
      'dst_b',
      ['b1', 'b2'].map((id) => delivery(id)),
    );
    await queue.publish(
      'dst_c',
      ['c1', 'c2'].map((id) => delivery(id)),
    );
    assert.equal(queue.depth, 8);
    for (let i = 0; i < 9; i++) {
      r.release(r.started.at(-1)?.id as string);
      await sleep(1);
    }
    assert.deepEqual(
      r.started.map((s) => s.id),
      // ten_1 (a, then b), ten_2 (c), ten_1 (a: b's turn after it), ten_2, …
      ['a0', 'a1', 'c1', 'b1', 'c2', 'a2', 'b2', 'a3', 'a4'],
    );
    assert.equal(queue.depth, 0);
  });
});
