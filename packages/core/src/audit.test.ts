import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { maxInAnyWindow, perSecond } from './audit.ts';
import { mulberry32 } from './random.ts';

/** O(n²) reference: the most times in [tᵢ, tᵢ + windowMs) over every i. */
function bruteForce(times: readonly number[], windowMs: number): number {
  let worst = 0;
  for (const a of times) worst = Math.max(worst, times.filter((t) => t >= a && t < a + windowMs).length);
  return worst;
}

describe('maxInAnyWindow', () => {
  it('is 0 with no requests, 1 with one', () => {
    assert.equal(maxInAnyWindow([], 1_000), 0);
    assert.equal(maxInAnyWindow([123], 1_000), 1);
  });

  it('a request exactly windowMs after another is in a new window', () => {
    assert.equal(maxInAnyWindow([0, 1_000], 1_000), 1);
    assert.equal(maxInAnyWindow([0, 999], 1_000), 2);
    assert.equal(maxInAnyWindow([0, 999.999], 1_000), 2);
    assert.equal(maxInAnyWindow([0, 1_000, 2_000, 3_000], 1_000), 1);
  });

  it('hand cases', () => {
    assert.equal(maxInAnyWindow([0, 0, 0], 1_000), 3);
    assert.equal(maxInAnyWindow([0, 500, 1_000, 1_500], 1_000), 2);
    assert.equal(maxInAnyWindow([0, 999, 1_000], 1_000), 2);
    // Four per clock second, but five in the sliding window [900, 1900).
    assert.equal(maxInAnyWindow([100, 200, 900, 950, 1_050, 1_100, 1_899, 1_900], 1_000), 5);
    assert.equal(maxInAnyWindow([0, 10, 20, 1_015, 1_016], 1_000), 3);
    assert.equal(maxInAnyWindow([0, 59_999, 60_000, 60_001], 60_000), 3);
  });

  it('matches the O(n²) reference on random data', () => {
    for (let seed = 1; seed <= 300; seed++) {
      const random = mulberry32(seed);
      const windowMs = [1, 100, 1_000, 60_000][seed % 4] as number;
      const n = Math.floor(random() * 200);
      const spread = windowMs * (1 + random() * 10);
      const integers = seed % 2 === 0; // integer times make ties and exact boundaries likely
      const times = Array.from({ length: n }, () =>
        integers ? Math.floor(random() * spread) : random() * spread,
      );
      times.sort((a, b) => a - b);
      assert.equal(maxInAnyWindow(times, windowMs), bruteForce(times, windowMs), `seed ${seed}`);
    }
  });
});

describe('perSecond', () => {
  it('counts requests per whole second from fromMs', () => {
    assert.deepEqual(perSecond([0, 1, 999, 1_000, 2_500, 2_999], 0, 3), [3, 1, 2]);
  });

  it('fromMs is inclusive; before it and past the last bucket are left out', () => {
    assert.deepEqual(perSecond([499, 500, 1_499, 1_500, 2_499, 2_500, 9_000], 500, 2), [2, 2]);
  });

  it('empty input or zero seconds', () => {
    assert.deepEqual(perSecond([], 0, 3), [0, 0, 0]);
    assert.deepEqual(perSecond([1, 2, 3], 0, 0), []);
  });

  it('sums to the number of requests in range (random data)', () => {
    const random = mulberry32(9);
    const times = Array.from({ length: 1_000 }, () => Math.floor(random() * 20_000)).sort((a, b) => a - b);
    const buckets = perSecond(times, 5_000, 10);
    assert.equal(buckets.length, 10);
    assert.equal(
      buckets.reduce((a, b) => a + b, 0),
      times.filter((t) => t >= 5_000 && t < 15_000).length,
    );
    for (let i = 0; i < 10; i++) {
      const lo = 5_000 + i * 1_000;
      assert.equal(buckets[i], times.filter((t) => t >= lo && t < lo + 1_000).length);
    }
  });
});
