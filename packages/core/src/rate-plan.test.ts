import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { lowersCap, PERIOD_MS, PERIODS, type Period, ratePlan } from './rate-plan.ts';

describe('ratePlan with a burst', () => {
  it('takes up to the burst in one run; a burst equal to the limit is no burst', () => {
    assert.deepEqual(ratePlan({ limit: 2, period: 'second', burst: 10 }), {
      limit: 2,
      burst: 10,
      periodMs: 1_000,
      perRun: 10,
      intervalMs: 1_000,
    });
    assert.equal(ratePlan({ limit: 2, period: 'second', burst: 2 }).burst, null);
    assert.equal(ratePlan({ limit: 20, period: 'minute', burst: 30 }).perRun, 30);
  });

  it('refuses a burst under the limit or not an integer', () => {
    assert.throws(() => ratePlan({ limit: 5, period: 'second', burst: 4 }), RangeError);
    assert.throws(() => ratePlan({ limit: 5, period: 'second', burst: 5.5 }), RangeError);
  });
});

describe('ratePlan (Hookdeck formula)', () => {
  it('per second: perRun = limit, interval 1 s', () => {
    for (const limit of [1, 3, 10, 50, 2000]) {
      assert.deepEqual(ratePlan({ limit, period: 'second' }), {
        limit,
        burst: null,
        periodMs: 1_000,
        perRun: limit,
        intervalMs: 1_000,
      });
    }
  });

  it('120/minute → 2 per run every second', () => {
    assert.deepEqual(ratePlan({ limit: 120, period: 'minute' }), {
      limit: 120,
      burst: null,
      periodMs: 60_000,
      perRun: 2,
      intervalMs: 1_000,
    });
  });

  it('30/minute → 1 per run every 2 s', () => {
    const plan = ratePlan({ limit: 30, period: 'minute' });
    assert.equal(plan.perRun, 1);
    assert.equal(plan.intervalMs, 2_000);
  });

  it('60/minute → 1 per run every second; 61/minute → 2 per run', () => {
    assert.equal(ratePlan({ limit: 60, period: 'minute' }).perRun, 1);
    assert.equal(ratePlan({ limit: 60, period: 'minute' }).intervalMs, 1_000);
    assert.equal(ratePlan({ limit: 61, period: 'minute' }).perRun, 2);
  });

  it('100/hour → 1 per run every 36 s', () => {
    const plan = ratePlan({ limit: 100, period: 'hour' });
    assert.equal(plan.periodMs, 3_600_000);
    assert.equal(plan.perRun, 1);
    assert.equal(plan.intervalMs, 36_000);
  });

  it('7000/hour → 2 per run, 3500 runs an hour', () => {
    const plan = ratePlan({ limit: 7000, period: 'hour' });
    assert.equal(plan.perRun, 2);
    assert.ok(Math.abs(plan.periodMs / plan.intervalMs - 3500) < 1e-9);
  });

  it('1/hour → 1 per run every hour', () => {
    assert.deepEqual(ratePlan({ limit: 1, period: 'hour' }), {
      limit: 1,
      burst: null,
      periodMs: 3_600_000,
      perRun: 1,
      intervalMs: 3_600_000,
    });
  });

  it('runs spread the limit evenly: perRun × runs per period = limit, at most one run a second', () => {
    for (const period of ['minute', 'hour'] as const) {
      for (let limit = 1; limit <= 20_000; limit += limit < 200 ? 1 : 97) {
        const plan = ratePlan({ limit, period });
        const seconds = PERIOD_MS[period] / 1_000;
        assert.equal(plan.perRun, Math.ceil(limit / seconds), `${limit}/${period}`);
        assert.ok(plan.perRun >= 1);
        assert.ok(plan.intervalMs >= 1_000 - 1e-9, `${limit}/${period} interval ${plan.intervalMs}`);
        const perPeriod = (plan.perRun * plan.periodMs) / plan.intervalMs;
        assert.ok(Math.abs(perPeriod - limit) < 1e-6, `${limit}/${period}: ${perPeriod}`);
      }
    }
  });

  it('PERIODS and PERIOD_MS agree', () => {
    assert.deepEqual([...PERIODS], ['second', 'minute', 'hour']);
    assert.deepEqual(
      PERIODS.map((p: Period) => PERIOD_MS[p]),
      [1_000, 60_000, 3_600_000],
    );
  });

  it('invalid limits throw RangeError', () => {
    for (const limit of [0, -1, 1.5, Number.NaN, Number.POSITIVE_INFINITY, -0.5]) {
      for (const period of PERIODS) {
        assert.throws(() => ratePlan({ limit, period }), RangeError, `${limit}/${period}`);
      }
    }
  });
});

describe('lowersCap', () => {
  it('compares the most a window may hold, whatever the period; an unknown old limit counts as lowered', () => {
    assert.equal(lowersCap({ limit: 20, period: 'second' }, { limit: 5, period: 'second' }), true);
    assert.equal(lowersCap({ limit: 5, period: 'second' }, { limit: 20, period: 'second' }), false);
    assert.equal(lowersCap({ limit: 5, period: 'second' }, { limit: 5, period: 'second' }), false);
    assert.equal(
      lowersCap({ limit: 10, period: 'second', burst: 20 }, { limit: 10, period: 'second' }),
      true,
    );
    assert.equal(lowersCap({ limit: 10, period: 'second' }, { limit: 20, period: 'minute' }), false);
    assert.equal(lowersCap({ limit: 100, period: 'minute' }, { limit: 10, period: 'second' }), true);
    assert.equal(lowersCap(undefined, { limit: 1_000, period: 'second' }), true);
  });
});
