import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  effectiveQuota,
  fitsPending,
  NO_QUOTA,
  type RateDecision,
  retryAfterSeconds,
  takeRate,
} from './quota.ts';

/** Takes `n` at `now`, keeping the state in `bucket` as a counter store would. */
function take(bucket: { tat: number }, n: number, perSecond: number, now: number): RateDecision {
  const decision = takeRate(bucket.tat, n, perSecond, now);
  if (decision.ok) bucket.tat = decision.tat;
  return decision;
}

describe('the rate quota (a token bucket with a second of room)', () => {
  it('takes a second of events at once, then refuses whole batches past it', () => {
    const bucket = { tat: 0 };
    assert.equal(take(bucket, 60, 100, 1_000).ok, true);
    assert.equal(take(bucket, 40, 100, 1_000).ok, true);
    const refused = take(bucket, 1, 100, 1_000);
    assert.equal(refused.ok, false);
    assert.equal(bucket.tat, 2_000, 'a refusal takes nothing');
  });

  it('refills at the quota: the refusal says when the request fits', () => {
    const bucket = { tat: 0 };
    take(bucket, 100, 100, 0);
    const refused = take(bucket, 30, 100, 100);
    assert.equal(refused.ok, false);
    assert.ok(!refused.ok && refused.retryAfterMs !== null);
    const wait = (refused as { retryAfterMs: number }).retryAfterMs;
    assert.ok(Math.abs(wait - 200) < 1e-6, `30 events at 10 ms each, 10 back already: ${wait}`);
    assert.equal(take(bucket, 30, 100, 100 + wait - 1).ok, false);
    assert.equal(take(bucket, 30, 100, 100 + wait).ok, true);
  });

  it('never holds more than a second of events, however long the tenant was quiet', () => {
    const bucket = { tat: 0 };
    assert.equal(take(bucket, 10, 10, 1e9).ok, true);
    assert.equal(take(bucket, 1, 10, 1e9).ok, false);
  });

  it('accepts at most B + rate·t over any span t', () => {
    const bucket = { tat: 0 };
    let accepted = 0;
    for (let now = 0; now <= 10_000; now += 7) if (take(bucket, 3, 50, now).ok) accepted += 3;
    assert.ok(accepted <= 50 + 50 * 10, `${accepted}`);
    assert.ok(accepted >= 50 * 10 - 3, `${accepted}`);
  });

  it('never fits a batch larger than the quota (no time to wait for)', () => {
    const refused = takeRate(0, 11, 10, 5_000);
    assert.deepEqual(refused, { ok: false, retryAfterMs: null });
  });
});

describe('the pending quota', () => {
  it('fits up to the quota, all or nothing', () => {
    assert.equal(fitsPending(90, 10, 100), true);
    assert.equal(fitsPending(90, 11, 100), false);
    assert.equal(fitsPending(0, 101, 100), false);
  });
});

describe('Retry-After', () => {
  it('is whole seconds, at least 1, rounded up', () => {
    assert.equal(retryAfterSeconds(1), 1);
    assert.equal(retryAfterSeconds(0), 1);
    assert.equal(retryAfterSeconds(1_000), 1);
    assert.equal(retryAfterSeconds(1_001), 2);
    assert.equal(retryAfterSeconds(null), 1);
  });
});

describe('the effective quota', () => {
  it('is the tenant’s own setting where it has one, else the operator default', () => {
    const defaults = { eventsPerSecond: 100, pendingEvents: 5_000 };
    assert.deepEqual(effectiveQuota({ eventsPerSecond: 5, pendingEvents: null }, defaults), {
      eventsPerSecond: 5,
      pendingEvents: 5_000,
    });
    assert.deepEqual(effectiveQuota(NO_QUOTA, NO_QUOTA), NO_QUOTA);
  });
});
