import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FAIR_FLOOR, fairRecheckAt, inFlightBound, nextLatency } from './fair.ts';
import { ratePlan } from './rate-plan.ts';
import { decideTick } from './tick.ts';

const perSecond = (limit: number) => ratePlan({ limit, period: 'second' });
const base = { stalledMs: 0, inFlight: 0, maxConcurrency: null, ceiling: 32 };

describe('inFlightBound', () => {
  it('never slows a destination that answers within half its interval: its whole run, at any rate', () => {
    assert.deepEqual(inFlightBound({ ...base, plan: perSecond(1_000), latencyMs: 7 }), {
      bound: 1_000,
      fair: true,
      latencyMs: 7,
    });
    assert.equal(inFlightBound({ ...base, plan: perSecond(50), latencyMs: 500 }).bound, 50);
    // Little's law when it is more than the run: 1,000/s × 0.4 s × 2.
    assert.equal(inFlightBound({ ...base, plan: perSecond(1_000), latencyMs: 400, ceiling: 2 }).bound, 1_000);
  });

  it('holds a slow destination to Little’s law with headroom, within the ceiling', () => {
    // 50/s × 20 s × 2 = 2,000: the ceiling.
    assert.equal(inFlightBound({ ...base, plan: perSecond(50), latencyMs: 20_000 }).bound, 32);
    // 60/minute × 2 s × 2 = 4.
    const perMinute = ratePlan({ limit: 60, period: 'minute' });
    assert.equal(inFlightBound({ ...base, plan: perMinute, latencyMs: 2_000 }).bound, 4);
    // 10/minute (one per 6 s) × 4 s × 2 ≈ 1.3: the floor.
    const rare = ratePlan({ limit: 10, period: 'minute' });
    assert.equal(inFlightBound({ ...base, plan: rare, latencyMs: 4_000 }).bound, FAIR_FLOOR);
    // 1/minute × 20 s: answered within half its interval, its run of 1.
    const once = ratePlan({ limit: 1, period: 'minute' });
    assert.equal(inFlightBound({ ...base, plan: once, latencyMs: 20_000 }).bound, 1);
  });

  it('counts the time without an answer: a receiver that stops answering is seen before its timeout', () => {
    const fast = { ...base, plan: perSecond(50), latencyMs: 7 };
    assert.equal(inFlightBound(fast).bound, 50);
    const hanging = inFlightBound({ ...fast, stalledMs: 3_000, inFlight: 50 });
    assert.deepEqual(hanging, { bound: 32, fair: true, latencyMs: 3_000 });
    // One or two slow requests among quick answers are not a stall.
    assert.equal(inFlightBound({ ...fast, stalledMs: 3_000, inFlight: 2 }).bound, 50);
  });

  it('holds a destination that has not answered yet to the ceiling', () => {
    assert.equal(inFlightBound({ ...base, plan: perSecond(1_000), latencyMs: null }).bound, 32);
    assert.equal(inFlightBound({ ...base, plan: perSecond(10), latencyMs: null }).bound, 32);
  });

  it('leaves maxConcurrency the tighter cap (fifo: 1)', () => {
    assert.deepEqual(inFlightBound({ ...base, plan: perSecond(50), latencyMs: 20_000, maxConcurrency: 1 }), {
      bound: 1,
      fair: false,
      latencyMs: 20_000,
    });
    assert.equal(
      inFlightBound({ ...base, plan: perSecond(50), latencyMs: 20_000, maxConcurrency: 100 }).bound,
      32,
    );
  });
});

describe('decideTick with a fair bound', () => {
  it('is a concurrency term that counts queued and in-flight requests', () => {
    const input = {
      plan: perSecond(50),
      stillInQueue: 2,
      sentInWindow: 0,
      inFlight: 28,
      maxConcurrency: null,
    };
    assert.deepEqual(decideTick({ ...input, fairBound: 32 }), { allow: 2, limitedBy: 'fair' });
    assert.deepEqual(decideTick({ ...input, fairBound: 20 }), { allow: 0, limitedBy: 'fair' });
    assert.deepEqual(decideTick({ ...input, maxConcurrency: 31, fairBound: 32 }), {
      allow: 1,
      limitedBy: 'concurrency',
    });
  });
});

describe('nextLatency and fairRecheckAt', () => {
  it('moves the average toward each answer', () => {
    assert.equal(nextLatency(null, 40), 40);
    assert.equal(nextLatency(10, 20_010), 6_010);
  });

  it('looks again after as long as its requests have waited, never after the next tick', () => {
    assert.equal(fairRecheckAt(1_000, 0, 10, 2_000), 1_010);
    assert.equal(fairRecheckAt(1_000, 300, 10, 2_000), 1_300);
    assert.equal(fairRecheckAt(1_000, 5_000, 10, 2_000), 2_000);
  });

  it("a receiver answering one request in four, the others hanging, is not fast: Little's law of its pile", () => {
    // 50/s, its answers quick (average 5 ms) and recent (no stall), but 40 requests in flight:
    // they have taken 40 ÷ 0.05 = 800 ms on average at least.
    const flaky = { ...base, plan: perSecond(50), latencyMs: 5, stalledMs: 0 };
    assert.equal(inFlightBound({ ...flaky, inFlight: 2 }).bound, 50, 'two in flight: not a pile');
    const piled = inFlightBound({ ...flaky, inFlight: 40 });
    assert.equal(piled.fair, true);
    assert.equal(piled.latencyMs, 800);
    assert.equal(piled.bound, 32, 'the ceiling');
  });
});
