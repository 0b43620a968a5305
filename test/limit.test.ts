/**
 * I2 — the limit holds. Thirty destinations with per-second and per-minute limits each get
 * a burst of several times their limit at once. At the receiver, no sliding window of one
 * period (anchored at every arrival) may hold more than the limit, and every event must
 * arrive exactly once (nothing crashes here, so nothing may repeat).
 */

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { now } from './helpers/receiver.ts';
import {
  createDestination,
  createTenant,
  type EventInput,
  harness,
  postEvents,
  type RateLimit,
} from './helpers/sluice.ts';
import { describeWindow, worstWindow } from './helpers/window.ts';

const PERIOD_MS = { second: 1_000, minute: 60_000, hour: 3_600_000 } as const;

/** The four kinds of limit, spread evenly over the destinations, with each one's burst. */
const KINDS: { rateLimit: RateLimit; burst: number }[] = [
  { rateLimit: { limit: 3, period: 'second' }, burst: 12 },
  { rateLimit: { limit: 10, period: 'second' }, burst: 40 },
  { rateLimit: { limit: 50, period: 'second' }, burst: 200 },
  { rateLimit: { limit: 120, period: 'minute' }, burst: 240 },
];
const DESTINATIONS = 30;

interface Plan {
  name: string;
  path: string;
  destinationId: string;
  rateLimit: RateLimit;
  eventIds: Set<string>;
}

describe('the limit holds', () => {
  it('no sliding window of one period holds more than the limit, and every event arrives once', {
    timeout: 10 * 60_000,
  }, async (t) => {
    // The receiver runs in this process beside the suite's other files: on 2 cores a request
    // can be read past the default arrival bound, which the limit is kept under (ADR 0001).
    const { box, rcv } = await harness(t, { SLUICE_ARRIVAL_BOUND_MS: 2_000 });
    const tenant = await createTenant(box, box.adminToken);

    const plans: Plan[] = [];
    const events: EventInput[][] = [];
    for (let i = 0; i < DESTINATIONS; i++) {
      const kind = KINDS[i % KINDS.length]!;
      const name = `d${i}-${kind.rateLimit.limit}per${kind.rateLimit.period}`;
      const dest = await createDestination(box, tenant.apiKey, {
        name,
        url: rcv.url(name),
        rateLimit: kind.rateLimit,
      });
      plans.push({
        name,
        path: rcv.path(name),
        destinationId: dest.id,
        rateLimit: kind.rateLimit,
        eventIds: new Set(),
      });
      events.push(
        Array.from({ length: kind.burst }, (_, n) => ({
          type: 'limit.burst',
          destinationId: dest.id,
          payload: { destination: name, n },
        })),
      );
    }

    // The bursts interleaved, so every destination's burst lands at about the same time.
    const interleaved: EventInput[] = [];
    for (let n = 0; n < Math.max(...events.map((e) => e.length)); n++) {
      for (const list of events) if (n < list.length) interleaved.push(list[n]!);
    }
    const start = now();
    const accepted = await postEvents(box, tenant.apiKey, interleaved, 64);
    const byDestination = new Map(plans.map((p) => [p.destinationId, p]));
    for (const a of accepted) {
      assert.equal(a.deliveries.length, 1, `event ${a.id} should have one delivery`);
      byDestination.get(a.deliveries[0]!.destinationId)!.eventIds.add(a.id);
    }

    const total = interleaved.length;
    await rcv.waitFor(() => rcv.deliveredIds().size >= total, 6 * 60_000, `all ${total} events to arrive`);
    // A little longer, so that a late duplicate would be seen.
    await new Promise((resolve) => setTimeout(resolve, 2_000));

    const problems: string[] = [];
    for (const plan of plans) {
      const { limit, period } = plan.rateLimit;
      const periodMs = PERIOD_MS[period];
      const arrivals = rcv.arrivals(plan.path);
      const worst = worstWindow(
        arrivals.map((a) => a.at),
        periodMs,
      );
      if (worst.count > limit) {
        problems.push(
          `${plan.name} (${plan.destinationId}, limit ${limit}/${period}): ` +
            `${describeWindow(worst, periodMs, start)} after the burst was posted`,
        );
      }
      const seen = new Map<string, number>();
      for (const a of arrivals) {
        const id = String(a.headers['webhook-id']);
        seen.set(id, (seen.get(id) ?? 0) + 1);
      }
      const missing = [...plan.eventIds].filter((id) => !seen.has(id));
      const repeated = [...seen].filter(([, n]) => n > 1).map(([id, n]) => `${id} ×${n}`);
      const unknown = [...seen.keys()].filter((id) => !plan.eventIds.has(id));
      if (missing.length > 0) problems.push(`${plan.name}: ${missing.length} events never arrived`);
      if (repeated.length > 0) {
        problems.push(`${plan.name}: repeated without a crash: ${repeated.join(', ')}`);
        // What the receiver and the record saw of each, so that a failure explains itself.
        for (const [id] of [...seen].filter(([, n]) => n > 1)) {
          const got = arrivals
            .filter((a) => a.headers['webhook-id'] === id)
            .map((a) => `attempt ${a.headers['webhook-attempt']} at +${Math.round(a.at - start)} ms`);
          const attempts = await box.query(
            'SELECT a.attempt, a.started_at, a.finished_at, a.status_code, a.error_code, a.error_message ' +
              'FROM attempts a JOIN deliveries d ON d.id = a.delivery_id WHERE d.event_id = ? ORDER BY a.attempt',
            [id],
          );
          problems.push(`  ${id}: arrivals ${got.join(', ')}; attempts ${JSON.stringify(attempts)}`);
        }
      }
      if (unknown.length > 0)
        problems.push(`${plan.name}: events of other destinations: ${unknown.join(', ')}`);
    }
    assert.deepEqual(problems, [], `the limit or exactly-once broke:\n${problems.join('\n')}`);
  });
});
