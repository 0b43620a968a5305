/**
 * Adaptive pacing (`adaptive: true`, docs/adr/0008). A receiver with an unannounced
 * capacity (15 requests per sliding second; over it, `429` with `Retry-After: 1`) behind a
 * destination limited to 50/s: Sluice backs off, settles under the capacity with few
 * refusals, and once the receiver relaxes returns to the configured limit, never above it.
 * Every event is delivered. The effective limit shows in the stats.
 */

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { type Arrival, sleep } from './helpers/receiver.ts';
import { createDestination, createTenant, type EventInput, harness, postEvents } from './helpers/sluice.ts';
import { describeWindow, worstWindow } from './helpers/window.ts';

const LIMIT = 50;
const CAPACITY = 15;
const PERIOD_MS = 1_000;
/** Events against the capacity, then once it is lifted. */
const CAPPED = 180;
const RELAXED = 750;
const TOTAL = CAPPED + RELAXED;
const STATS_MS = 200;

interface Stats {
  effectiveLimit: number;
  backingOff: boolean;
}

/** Per second from `from`: [accepted, refused] — for the failure messages. */
function perSecond(arrivals: Arrival[], from: number): string {
  const rows: string[] = [];
  const end = Math.max(...arrivals.map((a) => a.at));
  for (let s = from; s <= end; s += 1_000) {
    const inIt = arrivals.filter((a) => a.at >= s && a.at < s + 1_000);
    rows.push(
      `${inIt.filter((a) => a.status === 200).length}/${inIt.filter((a) => a.status === 429).length}`,
    );
  }
  return rows.join(' ');
}

describe('adaptive pacing', () => {
  it('backs off under an unannounced capacity with few 429s, and returns to the limit when the receiver relaxes', {
    timeout: 240_000,
  }, async (t) => {
    const { box, rcv } = await harness(t);
    const tenant = await createTenant(box, box.adminToken);
    const path = rcv.path('shy');
    await rcv.setCapacity(path, { limit: CAPACITY, periodMs: PERIOD_MS, retryAfter: '1' });
    const dest = await createDestination(box, tenant.apiKey, {
      url: rcv.url('shy'),
      rateLimit: { limit: LIMIT, period: 'second' },
      adaptive: true,
      retry: { maxAttempts: 30, initialDelayMs: 200, maxDelayMs: 2_000 },
    });
    assert.equal((dest as unknown as { adaptive: boolean }).adaptive, true);
    const stats = async () =>
      (await box.api<Stats>('GET', `/v1/destinations/${dest.id}/stats`, undefined, tenant.apiKey)).body;
    // The stats read every STATS_MS while the receiver is polled (every 10 ms): a read per
    // poll would load the box it measures.
    let statsRead = 0;
    const watchStats = (seen: (s: Stats) => void) => {
      if (Date.now() - statsRead < STATS_MS) return;
      statsRead = Date.now();
      void stats().then(seen);
    };
    const events = (n: number, phase: string): EventInput[] =>
      Array.from({ length: n }, (_, i) => ({
        type: 'adaptive.test',
        destinationId: dest.id,
        payload: { phase, i },
      }));

    // Phase 1: events against the capacity.
    await postEvents(box, tenant.apiKey, events(CAPPED, 'capped'), 64);
    let sawBackingOff = false;
    await rcv.waitFor(
      () => {
        watchStats((s) => {
          if (s.backingOff && s.effectiveLimit < LIMIT) sawBackingOff = true;
        });
        return rcv.deliveredIds(path).size >= CAPPED;
      },
      120_000,
      'the capped events to be delivered',
    );
    const capped = rcv.arrivals(path);
    const t0 = capped[0]!.at;
    const table = perSecond(capped, t0);
    assert.ok(sawBackingOff, 'the stats showed the effective limit below the limit');
    // The first seconds find the capacity out (the first tick sends the whole limit at once);
    // after them, Sluice stays under it: few refusals.
    const settled = capped.filter((a) => a.at >= t0 + 3_000);
    const refused = settled.filter((a) => a.status === 429).length;
    assert.ok(
      refused <= 0.1 * settled.length,
      `${refused} of ${settled.length} requests refused after the first 3 s (accepted/refused per second: ${table})`,
    );
    const accepted = settled.filter((a) => a.status === 200).map((a) => a.at);
    const span = (accepted[accepted.length - 1]! - accepted[0]!) / 1_000;
    assert.ok(
      accepted.length / span >= CAPACITY / 3,
      `${(accepted.length / span).toFixed(1)} deliveries/s: backed off far below the capacity (${table})`,
    );
    const allRefused = capped.filter((a) => a.status === 429).length;
    t.diagnostic(`capped: ${allRefused} refused in all, ${refused} after 3 s; per second ${table}`);

    // Phase 2: the receiver relaxes; Sluice recovers to the configured limit, never above it.
    await rcv.setCapacity(path, null);
    const before = rcv.arrivals(path).length;
    const t1 = Math.max(...capped.map((a) => a.at));
    await postEvents(box, tenant.apiKey, events(RELAXED, 'relaxed'), 64);
    let sawLimit = false;
    await rcv.waitFor(
      () => {
        watchStats((s) => {
          if (s.effectiveLimit === LIMIT && !s.backingOff) sawLimit = true;
        });
        return rcv.deliveredIds(path).size >= TOTAL;
      },
      120_000,
      'the relaxed events',
    );
    const relaxed = rcv.arrivals(path).slice(before);
    const times = relaxed.map((a) => a.at).sort((a, b) => a - b);
    const worst = worstWindow(times, PERIOD_MS);
    t.diagnostic(`relaxed: per second ${perSecond(relaxed, times[0]!)}`);
    assert.ok(worst.count <= LIMIT, `${describeWindow(worst, PERIOD_MS, t1)}: above the configured limit`);
    assert.ok(worst.count >= LIMIT - 5, `recovered only to ${worst.count} per second`);
    assert.ok(
      relaxed.every((a) => a.status === 200),
      'nothing refused once relaxed',
    );
    assert.ok(sawLimit, 'the stats showed the configured limit again');
    // Every event delivered, each once.
    const all = rcv.arrivals(path);
    assert.equal(rcv.deliveredIds(path).size, TOTAL);
    assert.equal(all.filter((a) => a.status === 200).length, TOTAL, 'each delivered once');
    // Quiet afterwards: no tick keeps sending.
    await sleep(500);
    assert.equal(rcv.arrivals(path).length, all.length);
  });

  it('adaptive is false by default, set at creation and by PATCH; a non-boolean is a 400', async (t) => {
    const { box, rcv } = await harness(t);
    const tenant = await createTenant(box, box.adminToken);
    const dest = await createDestination(box, tenant.apiKey, {
      url: rcv.url('a'),
      rateLimit: { limit: 5, period: 'second' },
    });
    assert.equal((dest as unknown as { adaptive: boolean }).adaptive, false);
    const on = await box.api<{ adaptive: boolean }>(
      'PATCH',
      `/v1/destinations/${dest.id}`,
      { adaptive: true },
      tenant.apiKey,
    );
    assert.equal(on.status, 200);
    assert.equal(on.body.adaptive, true);
    const bad = await box.api<{ error: { code: string } }>(
      'PATCH',
      `/v1/destinations/${dest.id}`,
      { adaptive: 'yes' },
      tenant.apiKey,
    );
    assert.equal(bad.status, 400);
    assert.equal(bad.body.error.code, 'validation_failed');
    const got = await box.api<{ adaptive: boolean }>(
      'GET',
      `/v1/destinations/${dest.id}`,
      undefined,
      tenant.apiKey,
    );
    assert.equal(got.body.adaptive, true);
  });
});
