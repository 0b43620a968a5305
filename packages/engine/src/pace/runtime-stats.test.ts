import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { runtimeStats } from './runtime-stats.ts';

describe('runtimeStats', () => {
  it('reads nothing for a destination the delivery side cannot read', () => {
    assert.deepEqual(runtimeStats(undefined, undefined, 0), {
      queued: 0,
      inFlight: 0,
      effectiveLimit: 0,
      backingOff: false,
    });
  });

  it('is the configured limit of a fixed destination, with its pace counters', () => {
    const destination = { rateLimit: { limit: 10, period: 'second' as const }, adaptive: false };
    assert.deepEqual(runtimeStats(destination, { queued: 3, inFlight: 2, adaptive: null }, 0), {
      queued: 3,
      inFlight: 2,
      effectiveLimit: 10,
      backingOff: false,
    });
  });
});
