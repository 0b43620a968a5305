import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  ADAPTIVE,
  type AdaptiveFeedback,
  type AdaptiveState,
  adapt,
  effectiveLimit,
  scaledRateLimit,
} from './adaptive.ts';

const L = 50;
const P = 1_000;
const ok = (at: number, latencyMs = 5): AdaptiveFeedback => ({
  at,
  limit: L,
  periodMs: P,
  status: 200,
  retryAfterMs: undefined,
  latencyMs,
});
const refused = (at: number, retryAfterMs?: number): AdaptiveFeedback => ({
  ...ok(at),
  status: 429,
  retryAfterMs,
});

function run(state: AdaptiveState | null, feedback: AdaptiveFeedback[]): AdaptiveState {
  let s = state;
  for (const f of feedback) s = adapt(s, f);
  return s as AdaptiveState;
}

describe('adaptive pacing (AIMD)', () => {
  it('starts at the configured limit and stays there while all is well', () => {
    const s = run(null, [ok(0), ok(100), ok(2_000)]);
    assert.equal(s.effective, L);
    assert.deepEqual(effectiveLimit(s, L, P, 2_000), { limit: L, holdUntil: 0, backingOff: false });
  });

  it('halves on a 429, at most once per period', () => {
    const s = run(null, [ok(0), refused(10), refused(20), refused(900)]);
    assert.equal(s.effective, L * ADAPTIVE.decrease);
    const t = run(s, [refused(1_010)]);
    assert.equal(t.effective, L * ADAPTIVE.decrease ** 2);
  });

  it('503 and a Retry-After on any status are push-back too; never below 1', () => {
    let s: AdaptiveState | null = null;
    for (let i = 0; i < 20; i++) s = adapt(s, { ...ok(i * 1_000), status: 503 });
    assert.equal(s?.effective, 1);
    assert.equal(effectiveLimit(s, L, P, 20_000).limit, 1);
  });

  it('a Retry-After holds the destination until it passes', () => {
    const s = run(null, [refused(1_000, 2_000)]);
    assert.equal(s.holdUntil, 3_000);
    assert.deepEqual(effectiveLimit(s, L, P, 2_000), { limit: 25, holdUntil: 3_000, backingOff: true });
    assert.equal(effectiveLimit(s, L, P, 3_000).holdUntil, 0);
  });

  it('recovers additively, one step per clean period, never above the limit', () => {
    let s = run(null, [refused(0), refused(1_000), refused(2_000)]); // 6.25
    assert.equal(s.effective, 6.25);
    s = run(s, [ok(2_500)]);
    assert.equal(s.effective, 6.25, 'no step before a whole clean period');
    s = run(s, [ok(3_000)]);
    assert.equal(s.effective, 6.25 + L * ADAPTIVE.increase);
    s = run(s, [ok(3_500)]);
    assert.equal(s.effective, 6.25 + L * ADAPTIVE.increase, 'at most one step per period');
    for (let t = 4_000; t < 40_000; t += 1_000) s = adapt(s, ok(t));
    assert.equal(s.effective, L);
  });

  it('rising latency is push-back; a fast receiver jitter is not', () => {
    let s = run(
      null,
      Array.from({ length: 20 }, (_, i) => ok(i * 100, 2 + (i % 3))),
    );
    assert.equal(s.effective, L);
    for (let i = 0; i < 10; i++) s = adapt(s, ok(2_000 + i * 100, 600));
    assert.ok(s.effective < L, `latency should have cut E, got ${s.effective}`);
  });

  it('a new configured limit starts again at it', () => {
    const s = run(null, [refused(0)]);
    assert.deepEqual(effectiveLimit(s, 80, P, 10), { limit: 80, holdUntil: 0, backingOff: false });
    const t = adapt(s, { ...ok(20), limit: 80 });
    assert.equal(t.effective, 80);
  });

  it('scales the burst with the effective limit', () => {
    assert.deepEqual(scaledRateLimit({ limit: 10, period: 'second', burst: 40 }, 5), {
      limit: 5,
      period: 'second',
      burst: 20,
    });
    const same = { limit: 10, period: 'second' as const };
    assert.equal(scaledRateLimit(same, 10), same);
    assert.deepEqual(scaledRateLimit(same, 3), { limit: 3, period: 'second', burst: undefined });
  });
});
