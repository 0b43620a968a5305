/**
 * Retries: a failed attempt goes back to `pending` and is tried again after a backoff;
 * `Retry-After` on a 429 or 503 is a floor; an answer slower than the timeout is a failure; a 410 disables the destination without killing the
 * delivery; attempts exhausted → `dead`. The delivery detail records every attempt.
 */

import assert from 'node:assert/strict';
import type { TestContext } from 'node:test';
import { describe, it } from 'node:test';
import type { Reply } from './helpers/receiver.ts';
import { sleep } from './helpers/receiver.ts';
import {
  createDestination,
  createTenant,
  type Delivery,
  type Destination,
  getDelivery,
  harness,
  postEvent,
  waitUntil,
} from './helpers/sluice.ts';

const RETRY = { maxAttempts: 3, initialDelayMs: 200, maxDelayMs: 1_000 };
/** Slack for the two clocks (sender's wall clock, receiver's monotonic one); low side only. */
const CLOCK_SLACK_MS = 10;

/** A box, a receiver answering `replies` then `defaultStatus`, a destination, one event. */
async function oneEvent(t: TestContext, replies: Reply[], defaultStatus = 200) {
  const { box, rcv } = await harness(t);
  const tenant = await createTenant(box, box.adminToken);
  const path = rcv.path('r');
  await rcv.script(path, replies);
  await rcv.setDefault(path, defaultStatus);
  const dest = await createDestination(box, tenant.apiKey, {
    name: 'r',
    url: rcv.url('r'),
    rateLimit: { limit: 10, period: 'second' },
    retry: RETRY,
  });
  assert.deepEqual(dest.retry, RETRY, 'the destination keeps the retry policy it was given');
  const event = await postEvent(box, tenant.apiKey, {
    type: 'retry.test',
    destinationId: dest.id,
    payload: { x: 1 },
  });
  const deliveryId = event.deliveries[0]!.id;
  const delivery = () => getDelivery(box, tenant.apiKey, deliveryId);
  const settled = (status: Delivery['status']) =>
    waitUntil(
      async () => {
        const d = await delivery();
        return d.status === status ? d : undefined;
      },
      30_000,
      `delivery ${deliveryId} to be ${status}`,
    );
  const destination = async () => {
    const res = await box.api<Destination>('GET', `/v1/destinations/${dest.id}`, undefined, tenant.apiKey);
    assert.equal(res.status, 200);
    return res.body;
  };
  return { box, rcv, tenant, path, dest, event, delivery, settled, destination };
}

function statusCodes(d: Delivery): (number | null)[] {
  return d.attempts.map((a) => a.statusCode);
}

describe('retries', () => {
  it('500 then 200: delivered on the second attempt', { timeout: 60_000 }, async (t) => {
    const { rcv, path, event, settled } = await oneEvent(t, [500, 200]);
    const d = await settled('delivered');
    assert.deepEqual(statusCodes(d), [500, 200], `attempts of ${d.id}: ${JSON.stringify(d.attempts)}`);
    assert.deepEqual(
      d.attempts.map((a) => a.attempt),
      [1, 2],
    );
    const arrivals = rcv.arrivals(path);
    assert.equal(arrivals.length, 2, 'the receiver saw two requests');
    for (const a of arrivals)
      assert.equal(a.headers['webhook-id'], event.id, 'webhook-id is stable across retries');
    assert.equal(arrivals[0]!.body, arrivals[1]!.body, 'the retry carries the same body');
  });

  for (const status of [429, 503]) {
    it(`${status} with Retry-After: 2 then 200: the retry comes no sooner than 2 s later`, {
      timeout: 60_000,
    }, async (t) => {
      const { rcv, path, settled } = await oneEvent(t, [{ status, headers: { 'retry-after': '2' } }, 200]);
      const d = await settled('delivered');
      assert.deepEqual(statusCodes(d), [status, 200], `attempts of ${d.id}: ${JSON.stringify(d.attempts)}`);
      const [first, second] = rcv.times(path);
      assert.ok(first !== undefined && second !== undefined, 'two arrivals');
      const gap = second - first;
      assert.ok(
        gap >= 2_000 - CLOCK_SLACK_MS,
        `the retry came ${gap.toFixed(1)} ms after a ${status} with Retry-After: 2`,
      );
    });
  }

  it('an answer slower than timeoutMs is a failed attempt (timeout), retried', {
    timeout: 60_000,
  }, async (t) => {
    const { box, rcv } = await harness(t);
    const tenant = await createTenant(box, box.adminToken);
    const path = rcv.path('slow');
    await rcv.script(path, [{ status: 200, delayMs: 2_000 }, 200]);
    const dest = await createDestination(box, tenant.apiKey, {
      url: rcv.url('slow'),
      rateLimit: { limit: 10, period: 'second' },
      retry: RETRY,
      timeoutMs: 300,
    });
    const event = await postEvent(box, tenant.apiKey, {
      type: 'retry.test',
      destinationId: dest.id,
      payload: 1,
    });
    const id = event.deliveries[0]!.id;
    const d = await waitUntil(
      async () => {
        const got = await getDelivery(box, tenant.apiKey, id);
        return got.status === 'delivered' ? got : undefined;
      },
      30_000,
      `delivery ${id} to be delivered`,
    );
    const [first, second] = d.attempts;
    assert.equal(first?.errorCode, 'timeout', `first attempt: ${JSON.stringify(first)}`);
    assert.equal(first?.statusCode, null);
    assert.ok(
      (first?.latencyMs ?? 0) < 2_000,
      `the first attempt was cut at its timeout: ${first?.latencyMs} ms`,
    );
    assert.equal(second?.statusCode, 200);
  });

  it('410 disables the destination; the delivery stays pending', { timeout: 60_000 }, async (t) => {
    const { rcv, path, delivery, destination } = await oneEvent(t, [410]);
    await rcv.waitFor(() => rcv.arrivals(path).some((a) => a.status === 410), 10_000, 'the 410');
    const disabled = await waitUntil(
      async () => {
        const dest = await destination();
        return dest.state === 'disabled' ? dest : undefined;
      },
      10_000,
      'the destination to be disabled',
    );
    assert.equal(disabled.state, 'disabled');
    // Longer than the retry policy's longest delay: nothing more is tried, nothing dies.
    await sleep(2 * RETRY.maxDelayMs);
    const d = await delivery();
    assert.equal(d.status, 'pending', `a 410 must not kill the delivery: ${JSON.stringify(d)}`);
    assert.deepEqual(statusCodes(d), [410]);
    assert.equal(rcv.arrivals(path).length, 1, 'a disabled destination is sent nothing');
  });

  it('resume re-enables a destination disabled by a 410, and its delivery goes out', {
    timeout: 60_000,
  }, async (t) => {
    const { box, rcv, tenant, path, dest, settled, destination } = await oneEvent(t, [410]);
    await waitUntil(
      async () => (await destination()).state === 'disabled',
      10_000,
      'the destination to be disabled',
    );
    const res = await box.api('POST', `/v1/destinations/${dest.id}/resume`, undefined, tenant.apiKey);
    assert.ok(res.status >= 200 && res.status < 300, `resume: ${res.status} ${JSON.stringify(res.body)}`);
    assert.equal((await destination()).state, 'active');
    const d = await settled('delivered');
    assert.deepEqual(statusCodes(d), [410, 200]);
    assert.equal(rcv.arrivals(path).length, 2);
  });

  // A refusal the receiver answers (4xx) exhausts into dead. An endpoint that answers every
  // request with a 5xx is down as far as anyone can tell: the breaker holds its deliveries
  // instead (docs/adr/0007, breaker.test.ts).
  it('always 422 with maxAttempts 3: dead after 3 attempts', { timeout: 60_000 }, async (t) => {
    const { rcv, path, settled } = await oneEvent(t, [], 422);
    const d = await settled('dead');
    assert.deepEqual(statusCodes(d), [422, 422, 422], `attempts of ${d.id}: ${JSON.stringify(d.attempts)}`);
    assert.deepEqual(
      d.attempts.map((a) => a.attempt),
      [1, 2, 3],
    );
    await sleep(2 * RETRY.maxDelayMs);
    assert.equal(rcv.arrivals(path).length, 3, 'no attempt after the last');
  });
});
