import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { mulberry32 } from './random.ts';
import {
  BACKOFF_MULTIPLIER,
  backoffCeilingMs,
  DEFAULT_RETRY_POLICY,
  MAX_RETRY_AFTER_MS,
  parseRetryAfter,
  type RetryPolicy,
  retryDelayMs,
} from './retry.ts';

const MIN = 60_000;
const HOUR = 3_600_000;
const ALMOST_ONE = 1 - 2 ** -53;

describe('backoffCeilingMs', () => {
  it('is 30 s, 2 min, 8 min, 32 min, 2 h 8 min, 8 h 32 min, then 12 h (the cap)', () => {
    const ceilings = [1, 2, 3, 4, 5, 6, 7, 8, 20].map((n) => backoffCeilingMs(DEFAULT_RETRY_POLICY, n));
    assert.deepEqual(ceilings, [
      30_000,
      2 * MIN,
      8 * MIN,
      32 * MIN,
      128 * MIN,
      512 * MIN,
      12 * HOUR,
      12 * HOUR,
      12 * HOUR,
    ]);
    assert.equal(BACKOFF_MULTIPLIER, 4);
  });

  it('the last of the default 8 attempts comes at most ~23.4 h after the first', () => {
    let worst = 0;
    for (let n = 1; n < DEFAULT_RETRY_POLICY.maxAttempts; n++)
      worst += backoffCeilingMs(DEFAULT_RETRY_POLICY, n);
    assert.equal(worst, 23 * HOUR + 22.5 * MIN);
  });

  it('treats 0 failed attempts like the first, and honours a custom policy', () => {
    assert.equal(backoffCeilingMs(DEFAULT_RETRY_POLICY, 0), 30_000);
    const policy: RetryPolicy = { maxAttempts: 5, initialDelayMs: 1_000, maxDelayMs: 10_000 };
    assert.deepEqual(
      [1, 2, 3].map((n) => backoffCeilingMs(policy, n)),
      [1_000, 4_000, 10_000],
    );
  });
});

describe('retryDelayMs', () => {
  it('full jitter: an integer in [0, ceiling)', () => {
    for (const n of [1, 2, 3, 7]) {
      const ceiling = backoffCeilingMs(DEFAULT_RETRY_POLICY, n);
      assert.equal(
        retryDelayMs(DEFAULT_RETRY_POLICY, n, () => 0),
        0,
      );
      const top = retryDelayMs(DEFAULT_RETRY_POLICY, n, () => ALMOST_ONE);
      assert.ok(top < ceiling && top >= ceiling - 1, `n=${n}: ${top}`);
    }
  });

  it('spreads over the whole range (seeded)', () => {
    const random = mulberry32(3);
    const ceiling = backoffCeilingMs(DEFAULT_RETRY_POLICY, 2);
    const samples = Array.from({ length: 5_000 }, () => retryDelayMs(DEFAULT_RETRY_POLICY, 2, random));
    for (const d of samples) assert.ok(Number.isInteger(d) && d >= 0 && d < ceiling);
    const mean = samples.reduce((a, b) => a + b, 0) / samples.length;
    assert.ok(Math.abs(mean / ceiling - 0.5) < 0.03, `mean ${mean}`);
    assert.ok(Math.min(...samples) < 0.01 * ceiling && Math.max(...samples) > 0.99 * ceiling);
  });

  it('Retry-After is a floor', () => {
    assert.equal(
      retryDelayMs(DEFAULT_RETRY_POLICY, 1, () => 0, 5_000),
      5_000,
    );
    assert.equal(
      retryDelayMs(DEFAULT_RETRY_POLICY, 3, () => 0.5, 5_000),
      4 * MIN,
      'a longer jitter stands',
    );
    assert.equal(
      retryDelayMs(DEFAULT_RETRY_POLICY, 1, () => 0.5, 0),
      15_000,
    );
  });

  it('Retry-After is capped at MAX_RETRY_AFTER_MS', () => {
    assert.equal(MAX_RETRY_AFTER_MS, HOUR);
    assert.equal(
      retryDelayMs(DEFAULT_RETRY_POLICY, 1, () => 0, 10 * HOUR),
      HOUR,
    );
    assert.equal(
      retryDelayMs(DEFAULT_RETRY_POLICY, 1, () => ALMOST_ONE, Number.MAX_SAFE_INTEGER),
      HOUR,
    );
    // The cap limits the floor, not the backoff itself.
    assert.equal(
      retryDelayMs(DEFAULT_RETRY_POLICY, 7, () => 0.5, 10 * HOUR),
      6 * HOUR,
    );
  });
});

describe('parseRetryAfter', () => {
  const now = Date.UTC(2025, 0, 1, 12, 0, 0);

  it('delay-seconds', () => {
    assert.equal(parseRetryAfter('2', now), 2_000);
    assert.equal(parseRetryAfter('0', now), 0);
    assert.equal(parseRetryAfter(' 120 ', now), 120_000);
  });

  it('HTTP-date: milliseconds from now, 0 when already past', () => {
    assert.equal(parseRetryAfter('Wed, 01 Jan 2025 12:00:30 GMT', now), 30_000);
    assert.equal(parseRetryAfter('Wed, 01 Jan 2025 11:00:00 GMT', now), 0);
    // The obsolete formats a recipient must accept (RFC 9110 §5.6.7).
    assert.equal(parseRetryAfter('Wednesday, 01-Jan-25 12:01:00 GMT', now), 60_000);
    assert.equal(parseRetryAfter('Wed Jan  1 12:00:05 2025', now), 5_000);
  });

  it('absent or garbage → undefined', () => {
    for (const value of [undefined, '', '  ', 'soon', '12abc', '0x10', '1e3', '2 minutes']) {
      assert.equal(parseRetryAfter(value, now), undefined, JSON.stringify(value));
    }
  });

  it('numbers that are not delay-seconds, and words with a year, are garbage too', () => {
    // Neither delay-seconds (1*DIGIT) nor an HTTP-date; Date.parse's legacy fallback reads
    // '1.5' as 2001-01-05 and 'retry in 2099' as 2099-01-01.
    for (const value of ['1.5', '-1', '+5', 'Foo 12', 'retry in 2099']) {
      assert.equal(parseRetryAfter(value, now), undefined, JSON.stringify(value));
    }
  });
});
