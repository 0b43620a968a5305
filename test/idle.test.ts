/**
 * I4 — idle is free. A destination with nothing pending has no schedule entry; it gets one
 * while work is pending, and loses it again once everything is delivered.
 */

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createDestination, createTenant, harness, postEvents, waitUntil } from './helpers/sluice.ts';

describe('idle is free', () => {
  it('a destination is scheduled only while it has work', { timeout: 60_000 }, async (t) => {
    const { box, rcv } = await harness(t);
    const tenant = await createTenant(box, box.adminToken);
    const path = rcv.path('idle');
    const dest = await createDestination(box, tenant.apiKey, {
      name: 'idle',
      url: rcv.url('idle'),
      rateLimit: { limit: 5, period: 'second' },
    });
    const other = await createDestination(box, tenant.apiKey, {
      name: 'other',
      url: rcv.url('other'),
      rateLimit: { limit: 5, period: 'second' },
    });
    assert.equal(await box.isScheduled(dest.id), false, `${dest.id} is scheduled before it has any work`);

    for (const round of [1, 2]) {
      // 3× the limit: at least two more ticks of work after the first.
      const events = Array.from({ length: 15 }, (_, n) => ({
        type: 'idle.test',
        destinationId: dest.id,
        payload: { round, n },
      }));
      const accepted = await postEvents(box, tenant.apiKey, events, 15);
      await waitUntil(
        () => box.isScheduled(dest.id),
        1_000,
        `round ${round}: ${dest.id} to be scheduled with work`,
      );
      assert.ok(
        rcv.deliveredIds(path).size < round * 15,
        `round ${round}: the work was done before it was seen scheduled`,
      );
      assert.equal(
        await box.isScheduled(other.id),
        false,
        `round ${round}: ${other.id} has no work but is scheduled`,
      );

      await rcv.waitFor(
        () => accepted.every((a) => rcv.deliveredIds(path).has(a.id)),
        30_000,
        `round ${round}: all 15 events to arrive`,
      );
      await waitUntil(
        async () => !(await box.isScheduled(dest.id)),
        3_000,
        `round ${round}: ${dest.id} to leave the schedule once its work is done`,
      );
    }
  });
});
