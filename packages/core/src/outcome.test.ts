import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { type AttemptResult, decideOutcome, isSuccess } from './outcome.ts';
import { mulberry32 } from './random.ts';
import { backoffCeilingMs, DEFAULT_RETRY_POLICY, MAX_RETRY_AFTER_MS, type RetryPolicy } from './retry.ts';

const NOW = 1_750_000_000_000;
const POLICY: RetryPolicy = DEFAULT_RETRY_POLICY;
const zero = () => 0;
const status = (statusCode: number, retryAfter?: string): AttemptResult => ({
  kind: 'response',
  statusCode,
  retryAfter,
});
const networkError: AttemptResult = { kind: 'error', code: 'ECONNREFUSED', message: 'connect ECONNREFUSED' };

describe('isSuccess', () => {
  it('is true for 2xx only', () => {
    for (const code of [200, 201, 202, 204, 299]) assert.equal(isSuccess(status(code)), true, `${code}`);
    for (const code of [100, 199, 300, 301, 304, 400, 410, 429, 500, 503]) {
      assert.equal(isSuccess(status(code)), false, `${code}`);
    }
    assert.equal(isSuccess(networkError), false);
  });
});

describe('decideOutcome', () => {
  it('2xx succeeds, even on the last attempt', () => {
    for (const code of [200, 204, 299]) {
      for (const attempts of [1, POLICY.maxAttempts]) {
        assert.deepEqual(decideOutcome(status(code), attempts, POLICY, NOW, zero), {
          transition: 'succeed',
          nextAttemptAt: null,
          disableDestination: false,
        });
      }
    }
  });

  it('410 disables the destination; the delivery is due at once when re-enabled', () => {
    for (const attempts of [1, POLICY.maxAttempts, POLICY.maxAttempts + 3]) {
      assert.deepEqual(decideOutcome(status(410), attempts, POLICY, NOW, zero), {
        transition: 'disable',
        nextAttemptAt: NOW,
        disableDestination: true,
      });
    }
  });

  it('exhausts when the last attempt fails', () => {
    for (const result of [status(500), status(429, '2'), status(404), networkError]) {
      assert.deepEqual(decideOutcome(result, POLICY.maxAttempts, POLICY, NOW, zero), {
        transition: 'exhaust',
        nextAttemptAt: null,
        disableDestination: false,
      });
      assert.equal(decideOutcome(result, POLICY.maxAttempts - 1, POLICY, NOW, zero).transition, 'retry');
    }
  });

  it('retries a failure with backoff: next attempt in [now, now + ceiling)', () => {
    const random = mulberry32(5);
    for (const result of [status(500), status(404), status(301), networkError]) {
      for (let attempts = 1; attempts < POLICY.maxAttempts; attempts++) {
        const o = decideOutcome(result, attempts, POLICY, NOW, random);
        assert.equal(o.transition, 'retry');
        assert.equal(o.disableDestination, false);
        const delay = (o.nextAttemptAt as number) - NOW;
        assert.ok(delay >= 0 && delay < backoffCeilingMs(POLICY, attempts), `${attempts}: ${delay}`);
      }
    }
  });

  it('429 and 503 with Retry-After: 2 wait at least 2 s', () => {
    const random = mulberry32(6);
    for (const code of [429, 503]) {
      assert.equal(decideOutcome(status(code, '2'), 1, POLICY, NOW, zero).nextAttemptAt, NOW + 2_000);
      for (let i = 0; i < 200; i++) {
        const o = decideOutcome(status(code, '2'), 1 + (i % 7), POLICY, NOW, random);
        assert.equal(o.transition, 'retry');
        assert.ok((o.nextAttemptAt as number) >= NOW + 2_000, `${code}: ${o.nextAttemptAt}`);
      }
    }
  });

  it('honours an HTTP-date Retry-After on 429, capped at MAX_RETRY_AFTER_MS', () => {
    const in90s = new Date(NOW + 90_000).toUTCString();
    assert.equal(decideOutcome(status(429, in90s), 1, POLICY, NOW, zero).nextAttemptAt, NOW + 90_000);
    const nextYear = new Date(NOW + 365 * 86_400_000).toUTCString();
    assert.equal(
      decideOutcome(status(503, nextYear), 1, POLICY, NOW, zero).nextAttemptAt,
      NOW + MAX_RETRY_AFTER_MS,
    );
  });

  it('ignores Retry-After on other statuses (500)', () => {
    assert.equal(decideOutcome(status(500, '2'), 1, POLICY, NOW, zero).nextAttemptAt, NOW);
    assert.equal(decideOutcome(status(500, '3600'), 1, POLICY, NOW, zero).nextAttemptAt, NOW);
    assert.equal(decideOutcome(status(502, '60'), 1, POLICY, NOW, zero).nextAttemptAt, NOW);
  });

  it('a garbage Retry-After on 429 is ignored: plain backoff', () => {
    assert.equal(decideOutcome(status(429, 'soon'), 1, POLICY, NOW, zero).nextAttemptAt, NOW);
    assert.equal(decideOutcome(status(429), 1, POLICY, NOW, zero).nextAttemptAt, NOW);
  });
});
