/**
 * `/metrics` (docs/operations.md, "Metrics"), in both shapes: every series the operations guide and the
 * autoscalers rely on is exported, in base units, with no per-destination or per-tenant
 * label; the backlog age rises while a destination's work waits on its limit and returns to
 * 0 once it is done, and the delivered counter counts every delivery.
 */

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { EXPORTED, metricValue, samples, scrape } from './helpers/metrics.ts';
import { sleep } from './helpers/receiver.ts';
import { SHAPE } from './helpers/shape.ts';
import { createDestination, createTenant, harness, postEvents, waitUntil } from './helpers/sluice.ts';

describe('metrics', () => {
  it('exports every signal, without per-destination labels; the backlog age rises and returns to 0', {
    timeout: 60_000,
  }, async (t) => {
    const { box, rcv } = await harness(t);
    const tenant = await createTenant(box, box.adminToken);
    const path = rcv.path('paced');
    const dest = await createDestination(box, tenant.apiKey, {
      name: 'paced',
      url: rcv.url('paced'),
      rateLimit: { limit: 4, period: 'second' },
    });
    const idle = await scrape(box.url);
    for (const name of EXPORTED) {
      assert.ok(
        idle.includes(`\n# TYPE ${name} `) || idle.startsWith(`# TYPE ${name} `),
        `${name} is exported`,
      );
    }
    assert.equal(metricValue(idle, 'sluice_oldest_pending_age_seconds'), 0);

    // 16 events at 4 a second: the last ones wait about 3 s behind the limit.
    const events = Array.from({ length: 16 }, (_, n) => ({
      type: 'metrics.test',
      destinationId: dest.id,
      payload: { n },
    }));
    const accepted = await postEvents(box, tenant.apiKey, events, 16);
    await sleep(1_500);
    const busy = await scrape(box.url);
    const age = metricValue(busy, 'sluice_oldest_pending_age_seconds') ?? 0;
    assert.ok(age >= 0.5 && age < 10, `the backlog age while work waits on the limit: ${age}`);

    await rcv.waitFor(
      () => accepted.every((a) => rcv.deliveredIds(path).has(a.id)),
      30_000,
      'all 16 to arrive',
    );
    // The single box counts in the one process that serves the API; in the distributed
    // shape the counters are the worker's and the limiter's (autoscale.test.ts scrapes
    // those), and the API shows the shared gauges.
    const done = await waitUntil(
      async () => {
        const text = await scrape(box.url);
        const settled =
          SHAPE === 'single'
            ? metricValue(text, 'sluice_deliveries_total', { outcome: 'delivered' }) === 16
            : metricValue(text, 'sluice_scheduled_destinations') === 0;
        return settled && metricValue(text, 'sluice_oldest_pending_age_seconds') === 0 ? text : undefined;
      },
      5_000,
      'the delivered counter to reach 16 and the backlog age to return to 0',
    );
    assert.equal(metricValue(done, 'sluice_delivery_queue_depth'), 0);
    if (SHAPE === 'single') {
      const lag = samples(done).find((s) => s.name === 'sluice_tick_lag_seconds_count');
      assert.ok((lag?.value ?? 0) > 0, 'ticks are timed');
    }

    for (const s of samples(done).filter((x) => x.name.startsWith('sluice_'))) {
      for (const label of Object.keys(s.labels)) {
        assert.ok(!/destination|tenant|url/i.test(label), `${s.name} has a per-destination label ${label}`);
      }
      for (const value of Object.values(s.labels)) {
        assert.ok(!value.includes(dest.id) && !value.includes(tenant.id), `${s.name} names a destination`);
      }
    }
  });
});
