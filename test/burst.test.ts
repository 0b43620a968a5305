/**
 * The burst allowance (`rateLimit.burst`, docs/adr/0008): "2 per second, bursts of 10". An
 * idle destination with a backlog takes the burst at once, then the rate; once idle long
 * enough for the bucket to refill, it takes the burst again. Judged at the receiver against
 * both descriptions: no sliding window of one period holds more than the burst, and a token
 * bucket of capacity `burst` refilled at `limit` per period refuses nothing. Sluice's own
 * audit (the stats endpoint) must agree.
 */

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { sleep } from './helpers/receiver.ts';
import { createDestination, createTenant, type EventInput, harness, postBatches } from './helpers/sluice.ts';
import { bucketRefusals, describeWindow, worstWindow } from './helpers/window.ts';

const LIMIT = 2;
const BURST = 10;
const PERIOD_MS = 1_000;

interface Stats {
  rateLimit: { limit: number; period: string; burst?: number };
  maxSentInAnyWindow: number;
  bucketRefusals: number | null;
  effectiveLimit: number;
  backingOff: boolean;
}

/**
 * Arrival times that begin with a burst: the first `BURST` close together (at the long-run
 * rate they would span 4.5 s), and the next one not before the window lets it.
 */
function assertBurst(times: number[], what: string): void {
  const t0 = times[0]!;
  const spread = times[BURST - 1]! - t0;
  assert.ok(spread < 2_000, `${what}: ${BURST} arrivals over ${Math.round(spread)} ms, not at once`);
  const next = times[BURST]! - t0;
  assert.ok(next >= 900, `${what}: arrival ${BURST + 1} ${Math.round(next)} ms after the first`);
}

describe('burst allowance', () => {
  it('an idle destination takes the burst at once, then the rate; the bucket conforms at the receiver', {
    timeout: 120_000,
  }, async (t) => {
    const { box, rcv } = await harness(t);
    const tenant = await createTenant(box, box.adminToken);
    const rateLimit = { limit: LIMIT, period: 'second', burst: BURST } as const;
    const dest = await createDestination(box, tenant.apiKey, { url: rcv.url('bursty'), rateLimit });
    assert.deepEqual(dest.rateLimit, rateLimit, 'the burst is stored and shown');
    const path = rcv.path('bursty');
    const events = (n: number, phase: string): EventInput[] =>
      Array.from({ length: n }, (_, i) => ({
        type: 'burst.test',
        destinationId: dest.id,
        payload: { phase, i },
      }));

    // 30 events on an idle destination, accepted together (one batch, so that a busy machine's
    // slow accepts cannot spread the backlog out): 10 at once, then 2 per second.
    await postBatches(box, tenant.apiKey, events(30, 'first'));
    await rcv.waitFor(() => rcv.deliveredIds(path).size >= 30, 60_000, 'the first 30 to arrive');
    const first = rcv.times(path);
    const t0 = first[0]!;
    assertBurst(first, 'the burst');
    const span = first[first.length - 1]! - t0;
    // A bucket of 10 refilled at 2/s: the 30th arrival no sooner than (30 − 10) / 2 s after the first.
    assert.ok(span >= ((30 - BURST) / LIMIT) * 1_000, `30 arrivals over ${Math.round(span)} ms`);
    assert.ok(span < 20_000, `the rate after the burst is the limit, not slower (${Math.round(span)} ms)`);

    // Idle until the bucket is full again (10 tokens at 2/s: 5 s), then another burst.
    await sleep(6_000);
    await postBatches(box, tenant.apiKey, events(12, 'second'));
    await rcv.waitFor(() => rcv.deliveredIds(path).size >= 42, 60_000, 'the next 12 to arrive');
    const all = rcv.times(path);
    const second = all.slice(30);
    assertBurst(second, 'the refilled bucket takes the burst again');

    const worst = worstWindow(all, PERIOD_MS);
    assert.ok(worst.count <= BURST, `${describeWindow(worst, PERIOD_MS, t0)}: more than the burst`);
    assert.equal(bucketRefusals(all, LIMIT, PERIOD_MS, BURST), 0, 'a 2/s bucket of 10 refuses nothing');
    assert.equal(rcv.arrivals(path).length, 42, 'each event once');

    const stats = await box.api<Stats>(
      'GET',
      `/v1/destinations/${dest.id}/stats?seconds=120`,
      undefined,
      tenant.apiKey,
    );
    assert.equal(stats.status, 200);
    assert.ok(
      stats.body.maxSentInAnyWindow <= BURST,
      `stats: ${stats.body.maxSentInAnyWindow} in one window`,
    );
    assert.equal(stats.body.maxSentInAnyWindow, BURST, 'stats: the burst was used');
    assert.equal(stats.body.bucketRefusals, 0, "Sluice's own audit: the bucket held");
    assert.equal(stats.body.effectiveLimit, LIMIT);
  });

  it('a burst below the limit, or not an integer, is a 400 and changes nothing', async (t) => {
    const { box, rcv } = await harness(t);
    const tenant = await createTenant(box, box.adminToken);
    for (const burst of [1, 2.5, '10', 0]) {
      const res = await box.api<{ error: { code: string } }>(
        'POST',
        '/v1/destinations',
        { url: rcv.url('x'), rateLimit: { limit: 2, period: 'second', burst } },
        tenant.apiKey,
      );
      assert.equal(res.status, 400, `burst ${JSON.stringify(burst)}`);
      assert.equal(res.body.error.code, 'validation_failed');
    }
    const dest = await createDestination(box, tenant.apiKey, {
      url: rcv.url('x'),
      rateLimit: { limit: 2, period: 'second', burst: 4 },
    });
    const bad = await box.api(
      'PATCH',
      `/v1/destinations/${dest.id}`,
      { rateLimit: { limit: 5, period: 'second', burst: 4 } },
      tenant.apiKey,
    );
    assert.equal(bad.status, 400);
    const kept = await box.api<{ rateLimit: unknown }>(
      'GET',
      `/v1/destinations/${dest.id}`,
      undefined,
      tenant.apiKey,
    );
    assert.deepEqual(kept.body.rateLimit, { limit: 2, period: 'second', burst: 4 });
    const none = await box.api<{ rateLimit: unknown }>(
      'PATCH',
      `/v1/destinations/${dest.id}`,
      { rateLimit: { limit: 3, period: 'second' } },
      tenant.apiKey,
    );
    assert.deepEqual(
      none.body.rateLimit,
      { limit: 3, period: 'second' },
      'a new rate limit without a burst drops it',
    );
  });
});
