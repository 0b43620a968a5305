/**
 * I5 — live limits. A destination at 50/s is lowered to 5/s in the middle of a burst: from
 * one tick (1 s) after the PATCH answers, no sliding second may hold more than 5. Raised
 * back to 50/s, the rate must rise within about one tick. Nothing may be lost on the way.
 */

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { now, sleep } from './helpers/receiver.ts';
import {
  createDestination,
  createTenant,
  type Destination,
  harness,
  postEvents,
  type TestBox,
} from './helpers/sluice.ts';
import { between, busiestWindowStartingIn, describeWindow, worstWindow } from './helpers/window.ts';

const EVENTS = 600;
const HIGH = 50;
const LOW = 5;
/** One tick: the time a changed limit may take to be in force. */
const TICK_MS = 1_000;
/** `SLUICE_ARRIVAL_BOUND_MS`'s default: a written request is assumed arrived this long after. */
const ARRIVAL_BOUND_MS = 250;

/** A PATCH of the destination's limit (per second), checked; resolves when it is answered. */
async function patchLimit(box: TestBox, apiKey: string, destinationId: string, limit: number): Promise<void> {
  const res = await box.api<Destination>(
    'PATCH',
    `/v1/destinations/${destinationId}`,
    { rateLimit: { limit, period: 'second' } },
    apiKey,
  );
  assert.equal(res.status, 200, `PATCH rateLimit ${limit}/s: ${JSON.stringify(res.body)}`);
  assert.deepEqual(res.body.rateLimit, { limit, period: 'second' });
}

describe('live change of a rate limit', () => {
  it('a lowered limit is answered once the requests started under the old one cannot arrive later', {
    timeout: 60_000,
  }, async (t) => {
    const { box, rcv } = await harness(t);
    const tenant = await createTenant(box, box.adminToken);
    const path = rcv.path('in-flight');
    // Answered after 3 s: the request stays in flight well past its arrival.
    await rcv.setDelay(path, 3_000);
    const dest = await createDestination(box, tenant.apiKey, {
      name: 'in-flight',
      url: rcv.url('in-flight'),
      rateLimit: { limit: 10, period: 'second' },
    });
    await postEvents(box, tenant.apiKey, [{ type: 'live.one', destinationId: dest.id, payload: {} }], 1);
    await rcv.waitFor(() => rcv.arrivals(path).length >= 1, 30_000, 'the request to arrive');
    const arrived = rcv.times(path)[0] as number;
    await patchLimit(box, tenant.apiKey, dest.id, 5);
    const answered = now();
    // Sluice knows when it wrote the request, not when it arrived: until its response or the
    // write plus the arrival bound, it may still arrive, and a window that began after the
    // answer could hold it beside 5 new ones.
    assert.ok(
      answered >= arrived + ARRIVAL_BOUND_MS - 20,
      `answered ${Math.round(answered - arrived)} ms after the request arrived: it could still have been on its way`,
    );
  });

  it('a lowered limit holds from one tick after the PATCH; a raised one speeds up within a tick', {
    timeout: 5 * 60_000,
  }, async (t) => {
    const { box, rcv } = await harness(t);
    const tenant = await createTenant(box, box.adminToken);
    const path = rcv.path('live');
    const dest = await createDestination(box, tenant.apiKey, {
      name: 'live',
      url: rcv.url('live'),
      rateLimit: { limit: HIGH, period: 'second' },
    });
    const start = now();
    const accepted = await postEvents(
      box,
      tenant.apiKey,
      Array.from({ length: EVENTS }, (_, n) => ({
        type: 'live.burst',
        destinationId: dest.id,
        payload: { n },
      })),
      64,
    );
    await rcv.waitFor(() => rcv.arrivals(path).length >= 100, 60_000, '100 arrivals at 50/s');

    const lowSent = now();
    await patchLimit(box, tenant.apiKey, dest.id, LOW);
    const lowAnswered = now();
    await sleep(4_000);
    const raiseSent = now();
    await patchLimit(box, tenant.apiKey, dest.id, HIGH);
    const raiseAnswered = now();
    const leftAtRaise = EVENTS - rcv.deliveredIds(path).size;

    await rcv.waitFor(() => rcv.deliveredIds(path).size >= EVENTS, 120_000, `all ${EVENTS} events to arrive`);
    await sleep(1_000);
    const times = rcv.times(path);
    const at = (ms: number) => `${Math.round(ms - start)} ms`;
    const phases =
      `lowered at ${at(lowSent)}–${at(lowAnswered)}, raised at ${at(raiseSent)}–${at(raiseAnswered)} ` +
      `(times from the first post)`;

    // While low: windows that start from one tick after the lowering answered, and end
    // before the raise was sent.
    const lowPhase = between(times, lowAnswered + TICK_MS, raiseSent);
    assert.ok(lowPhase.length > 0, `no arrivals at all while the limit was ${LOW}/s; ${phases}`);
    const low = worstWindow(lowPhase, 1_000);
    assert.ok(
      low.count <= LOW,
      `limit ${LOW}/s broken one tick after it was set: ${describeWindow(low, 1_000, start)}; ${phases}`,
    );

    // Raised: within about a tick some sliding second holds clearly more than the low limit.
    assert.ok(leftAtRaise > 3 * HIGH, `only ${leftAtRaise} events were left when the limit was raised`);
    const risen = busiestWindowStartingIn(times, 1_000, raiseAnswered, raiseAnswered + TICK_MS + 500);
    assert.ok(
      risen.count >= 4 * LOW,
      `the rate did not rise within a tick of raising the limit to ${HIGH}/s: busiest second ` +
        `starting within ${TICK_MS + 500} ms of the answer: ${describeWindow(risen, 1_000, start)}; ${phases}`,
    );

    // Throughout, the higher limit held.
    const all = worstWindow(times, 1_000);
    assert.ok(all.count <= HIGH, `limit ${HIGH}/s broken: ${describeWindow(all, 1_000, start)}; ${phases}`);

    t.diagnostic(
      `low phase worst second ${low.count}/${LOW} over ${lowPhase.length} arrivals; ` +
        `busiest second after the raise ${risen.count}; overall worst ${all.count}/${HIGH}; ${phases}`,
    );

    // Everything arrived, once.
    const ids = rcv.arrivals(path).map((a) => String(a.headers['webhook-id']));
    assert.deepEqual(
      [...new Set(ids)].sort(),
      accepted.map((a) => a.id).sort(),
      'every accepted event should arrive',
    );
    assert.equal(ids.length, EVENTS, `${ids.length - EVENTS} repeated arrivals without a crash`);
  });
});
