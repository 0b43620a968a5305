import assert from 'node:assert/strict';
import { describe, it, type TestContext } from 'node:test';
import { MemorySchedule, type ScheduleOptions, type TickFn } from './memory-schedule.ts';

const T0 = 1_700_000_000_000;

/** Lets promise callbacks run (`setImmediate` is not mocked: only `setTimeout` and `Date` are). */
const flush = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

interface Deferred<T> {
  promise: Promise<T>;
  resolve: (value: T) => void;
  reject: (err: unknown) => void;
}

function deferred<T>(): Deferred<T> {
  let resolve!: (value: T) => void;
  let reject!: (err: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

interface Call {
  id: string;
  due: number;
  /** The fake clock when the tick started. */
  at: number;
}

/**
 * A schedule on a fake clock whose ticks follow a script: `script(call)` decides what each
 * tick returns (a value or a promise the test controls). Records every call and the most
 * ticks of one destination that ever ran at once.
 */
function harness(
  t: TestContext,
  script: (call: Call, n: number) => Promise<number | null> | number | null,
  options: Partial<ScheduleOptions> = {},
) {
  t.mock.timers.enable({ apis: ['setTimeout', 'Date'], now: T0 });
  const calls: Call[] = [];
  const errors: { id: string; err: unknown }[] = [];
  const runningNow = new Map<string, number>();
  let maxConcurrentPerId = 0;
  const tick: TickFn = async (id, due) => {
    const call = { id, due, at: Date.now() };
    calls.push(call);
    const running = (runningNow.get(id) ?? 0) + 1;
    runningNow.set(id, running);
    maxConcurrentPerId = Math.max(maxConcurrentPerId, running);
    try {
      return await script(call, calls.length);
    } finally {
      runningNow.set(id, (runningNow.get(id) ?? 1) - 1);
    }
  };
  const schedule = new MemorySchedule({
    clock: () => Date.now(),
    tick,
    onTickError: (id, err) => errors.push({ id, err }),
    ...options,
  });
  /**
   * Moves the fake clock forward one millisecond at a time, letting promises settle after
   * each step, so every timer fires at its own time (a single mocked `tick(ms)` jumps the
   * clock to the end first).
   */
  const advance = async (ms: number): Promise<void> => {
    await flush();
    for (let i = 0; i < ms; i++) {
      t.mock.timers.tick(1);
      await flush();
    }
  };
  t.after(() => schedule.stop());
  return {
    schedule,
    calls,
    errors,
    advance,
    maxConcurrentPerId: () => maxConcurrentPerId,
  };
}

describe('MemorySchedule', () => {
  it('a wake schedules a tick at that time', async (t) => {
    const h = harness(t, () => null);
    h.schedule.wake('dst_a', T0 + 100);
    assert.equal(h.schedule.isScheduled('dst_a'), true);
    assert.equal(h.schedule.dueOf('dst_a'), T0 + 100);
    await h.advance(99);
    assert.deepEqual(h.calls, []);
    await h.advance(1);
    assert.deepEqual(h.calls, [{ id: 'dst_a', due: T0 + 100, at: T0 + 100 }]);
  });

  it('a wake in the past ticks at once', async (t) => {
    const h = harness(t, () => null);
    h.schedule.wake('dst_a', T0 - 500);
    await h.advance(1);
    assert.deepEqual(h.calls, [{ id: 'dst_a', due: T0 - 500, at: T0 + 1 }]);
  });

  it('a later wake never moves the tick later', async (t) => {
    const h = harness(t, () => null);
    h.schedule.wake('dst_a', T0 + 100);
    h.schedule.wake('dst_a', T0 + 500);
    h.schedule.wake('dst_a', T0 + 100);
    assert.equal(h.schedule.dueOf('dst_a'), T0 + 100);
    await h.advance(600);
    assert.deepEqual(h.calls, [{ id: 'dst_a', due: T0 + 100, at: T0 + 100 }]);
  });

  it('a sooner wake moves the tick sooner, and the superseded time does not tick again', async (t) => {
    const h = harness(t, () => null);
    h.schedule.wake('dst_a', T0 + 100);
    h.schedule.wake('dst_a', T0 + 40);
    assert.equal(h.schedule.dueOf('dst_a'), T0 + 40);
    await h.advance(200);
    assert.deepEqual(h.calls, [{ id: 'dst_a', due: T0 + 40, at: T0 + 40 }]);
    assert.equal(h.schedule.isScheduled('dst_a'), false);
  });

  it('a tick that returns a time is scheduled again at that time', async (t) => {
    const h = harness(t, (call, n) => (n < 3 ? call.due + 50 : null));
    h.schedule.wake('dst_a', T0 + 10);
    await h.advance(10);
    assert.equal(h.schedule.dueOf('dst_a'), T0 + 60);
    await h.advance(200);
    assert.deepEqual(h.calls, [
      { id: 'dst_a', due: T0 + 10, at: T0 + 10 },
      { id: 'dst_a', due: T0 + 60, at: T0 + 60 },
      { id: 'dst_a', due: T0 + 110, at: T0 + 110 },
    ]);
  });

  it('a tick that returns null removes the entry', async (t) => {
    const h = harness(t, () => null);
    h.schedule.wake('dst_a', T0 + 10);
    await h.advance(10);
    assert.equal(h.calls.length, 1);
    assert.equal(h.schedule.isScheduled('dst_a'), false);
    assert.equal(h.schedule.dueOf('dst_a'), undefined);
    assert.equal(h.schedule.size, 0);
    assert.equal(h.schedule.runningCount, 0);
    await h.advance(1_000);
    assert.equal(h.calls.length, 1);
  });

  it('no lost wake-up: a wake during the tick wins over the tick returning null', async (t) => {
    const gate = deferred<number | null>();
    const h = harness(t, (_call, n) => (n === 1 ? gate.promise : null));
    h.schedule.wake('dst_a', T0 + 10);
    await h.advance(10);
    assert.equal(h.calls.length, 1);
    assert.equal(h.schedule.runningCount, 1);
    assert.equal(h.schedule.isScheduled('dst_a'), true);
    assert.equal(h.schedule.dueOf('dst_a'), undefined, 'a running tick has no due time');

    h.schedule.wake('dst_a', T0 + 30);
    gate.resolve(null);
    await flush();
    assert.equal(h.schedule.isScheduled('dst_a'), true);
    assert.equal(h.schedule.dueOf('dst_a'), T0 + 30);
    await h.advance(100);
    assert.deepEqual(h.calls, [
      { id: 'dst_a', due: T0 + 10, at: T0 + 10 },
      { id: 'dst_a', due: T0 + 30, at: T0 + 30 },
    ]);
    assert.equal(h.schedule.isScheduled('dst_a'), false);
  });

  it('a wake during the tick and the time the tick returns: the sooner wins', async (t) => {
    const gates = [deferred<number | null>(), deferred<number | null>()];
    const h = harness(t, (_call, n) => gates[n - 1]?.promise ?? null);
    h.schedule.wake('dst_a', T0 + 10);
    await h.advance(10);
    h.schedule.wake('dst_a', T0 + 50);
    gates[0]?.resolve(T0 + 500);
    await flush();
    assert.equal(h.schedule.dueOf('dst_a'), T0 + 50, 'the wake is sooner than the returned time');

    await h.advance(40);
    assert.equal(h.calls.length, 2);
    h.schedule.wake('dst_a', T0 + 900);
    gates[1]?.resolve(T0 + 70);
    await flush();
    assert.equal(h.schedule.dueOf('dst_a'), T0 + 70, 'the returned time is sooner than the wake');
  });

  it("one destination's tick never runs twice at once, however often it is woken", async (t) => {
    const gate = deferred<number | null>();
    const h = harness(t, (_call, n) => (n === 1 ? gate.promise : null));
    h.schedule.wake('dst_a', T0 + 10);
    await h.advance(10);
    let soonest = Number.POSITIVE_INFINITY;
    for (let i = 0; i < 20; i++) {
      const at = Date.now() - 2 * i;
      soonest = Math.min(soonest, at);
      h.schedule.wake('dst_a', at);
      h.schedule.wake('dst_a', Date.now() + i);
      await h.advance(5);
    }
    assert.equal(h.calls.length, 1, 'no second tick while the first runs');
    assert.equal(h.schedule.size, 1);

    gate.resolve(null);
    await h.advance(1);
    assert.equal(h.calls.length, 2, 'exactly one tick follows for all those wakes');
    assert.deepEqual(h.calls[1], { id: 'dst_a', due: soonest, at: Date.now() });
    await h.advance(200);
    assert.equal(h.calls.length, 2);
    assert.equal(h.maxConcurrentPerId(), 1);
  });

  it('many destinations fire in due order, each at its time', async (t) => {
    const h = harness(t, () => null);
    const dues: [string, number][] = [
      ['dst_e', 90],
      ['dst_b', 20],
      ['dst_g', 20],
      ['dst_a', 5],
      ['dst_d', 60],
      ['dst_c', 40],
      ['dst_f', 75],
    ];
    for (const [id, offset] of dues) h.schedule.wake(id, T0 + offset);
    h.schedule.wake('dst_e', T0 + 30);
    assert.equal(h.schedule.size, 7);
    await h.advance(100);
    const expected = [
      ['dst_a', 5],
      ['dst_b', 20],
      ['dst_g', 20],
      ['dst_e', 30],
      ['dst_c', 40],
      ['dst_d', 60],
      ['dst_f', 75],
    ] as const;
    assert.deepEqual(
      h.calls.map((c) => [c.id, c.due - T0, c.at - T0]),
      expected.map(([id, offset]) => [id, offset, offset]),
    );
    assert.equal(h.schedule.size, 0);
  });

  it('a tick that throws is reported to onTickError and retried after errorBackoffMs', async (t) => {
    const boom = new Error('store unavailable');
    const h = harness(
      t,
      (_call, n) => {
        if (n === 1) throw boom;
        return null;
      },
      { errorBackoffMs: 250 },
    );
    h.schedule.wake('dst_a', T0 + 10);
    await h.advance(10);
    assert.deepEqual(h.errors, [{ id: 'dst_a', err: boom }]);
    assert.equal(h.schedule.dueOf('dst_a'), T0 + 260);
    await h.advance(249);
    assert.equal(h.calls.length, 1);
    await h.advance(1);
    assert.deepEqual(h.calls[1], { id: 'dst_a', due: T0 + 260, at: T0 + 260 });
    assert.equal(h.errors.length, 1);
    assert.equal(h.schedule.isScheduled('dst_a'), false);
  });

  it('a tick that throws is retried after 1 s by default', async (t) => {
    const h = harness(t, (_call, n) => {
      if (n === 1) throw new Error('boom');
      return null;
    });
    h.schedule.wake('dst_a', T0 + 10);
    await h.advance(10);
    assert.equal(h.errors.length, 1);
    assert.equal(h.schedule.dueOf('dst_a'), T0 + 1_010);
  });

  it('stop() waits for a running tick, and no tick runs after', async (t) => {
    const gate = deferred<number | null>();
    const h = harness(t, (call) => (call.id === 'dst_a' ? gate.promise : null));
    h.schedule.wake('dst_a', T0 + 10);
    h.schedule.wake('dst_b', T0 + 50);
    await h.advance(10);
    assert.equal(h.schedule.runningCount, 1);

    let stopped = false;
    const stopping = h.schedule.stop().then(() => {
      stopped = true;
    });
    await h.advance(100);
    assert.equal(stopped, false, 'stop() resolves only once the running tick is done');
    assert.deepEqual(
      h.calls.map((c) => c.id),
      ['dst_a'],
      'dst_b, due during the wait, does not tick',
    );

    gate.resolve(T0 + 120);
    await stopping;
    assert.equal(stopped, true);
    assert.equal(h.schedule.isScheduled('dst_a'), false, 'the time the last tick returned is dropped');
    h.schedule.wake('dst_c', T0);
    await h.advance(1_000);
    assert.deepEqual(
      h.calls.map((c) => c.id),
      ['dst_a'],
    );
    assert.equal(h.schedule.isScheduled('dst_c'), false, 'a wake after stop() is ignored');
  });

  it('stop() with nothing running resolves at once and disarms the timer', async (t) => {
    const h = harness(t, () => null);
    h.schedule.wake('dst_a', T0 + 10);
    await h.schedule.stop();
    await h.advance(100);
    assert.deepEqual(h.calls, []);
  });
});
