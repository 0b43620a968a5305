/**
 * Signatures: what a destination receives verifies with the Standard Webhooks library,
 * with the secret Sluice generated and with one the user supplied, and carries the
 * documented headers and the payload's exact JSON.
 */

import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import type { TestContext } from 'node:test';
import { describe, it } from 'node:test';
import { Webhook } from 'standardwebhooks';
import type { Arrival } from './helpers/receiver.ts';
import { createDestination, createTenant, harness, postEvent } from './helpers/sluice.ts';

const PAYLOAD = { order: 'ord_1', total: 42.5, items: [{ sku: 'a', qty: 2 }], note: 'déjà vu ✓', nil: null };

function headersOf(a: Arrival): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(a.headers)) if (typeof v === 'string') out[k] = v;
  return out;
}

async function deliverOne(t: TestContext, secret?: string) {
  const { box, rcv } = await harness(t);
  const tenant = await createTenant(box, box.adminToken);
  const dest = await createDestination(box, tenant.apiKey, {
    name: 's',
    url: rcv.url('s'),
    rateLimit: { limit: 10, period: 'second' },
    ...(secret === undefined ? {} : { secret }),
  });
  const event = await postEvent(box, tenant.apiKey, {
    type: 'order.paid',
    destinationId: dest.id,
    payload: PAYLOAD,
  });
  const path = rcv.path('s');
  await rcv.waitFor(() => rcv.deliveredIds(path).has(event.id), 15_000, `event ${event.id} to arrive`);
  const arrival = rcv.arrivals(path)[0]!;
  return { dest, event, arrival };
}

function assertWellFormed(arrival: Arrival, eventId: string, secret: string): void {
  const h = headersOf(arrival);
  assert.equal(arrival.method, 'POST');
  assert.match(h['content-type'] ?? '', /^application\/json\b/, 'content-type');
  assert.equal(h['webhook-id'], eventId, 'webhook-id is the event id');
  assert.equal(h['webhook-event-type'], 'order.paid', 'webhook-event-type');
  assert.match(h['webhook-timestamp'] ?? '', /^\d+$/, 'webhook-timestamp is unix seconds');
  assert.ok(
    Math.abs(Number(h['webhook-timestamp']) - Date.now() / 1000) < 300,
    `webhook-timestamp ${h['webhook-timestamp']} is near now`,
  );
  assert.match(
    h['webhook-signature'] ?? '',
    /^v1,[A-Za-z0-9+/]+=*( v1,[A-Za-z0-9+/]+=*)*$/,
    'webhook-signature',
  );
  assert.match(h['user-agent'] ?? '', /^Sluice\//, 'user-agent');
  assert.equal(h['webhook-sequence'], '1', "webhook-sequence: the destination's first event");
  assert.equal(h['webhook-attempt'], '1', 'webhook-attempt: the first request');
  assert.equal(arrival.body, JSON.stringify(PAYLOAD), 'the body is the payload JSON exactly');
  assert.deepEqual(new Webhook(secret).verify(arrival.body, h), PAYLOAD, 'verifies with standardwebhooks');
}

describe('signatures', () => {
  it('verify with the secret returned at creation', { timeout: 60_000 }, async (t) => {
    const { dest, event, arrival } = await deliverOne(t);
    assert.match(dest.secret, /^whsec_[A-Za-z0-9+/]+=*$/, 'a generated secret is a whsec_ secret');
    assertWellFormed(arrival, event.id, dest.secret);
  });

  it('verify with a user-supplied whsec_ secret', { timeout: 60_000 }, async (t) => {
    const secret = `whsec_${randomBytes(32).toString('base64')}`;
    const { dest, event, arrival } = await deliverOne(t, secret);
    assert.equal(dest.secret, secret, 'the destination keeps the supplied secret');
    assertWellFormed(arrival, event.id, secret);
  });

  it('do not verify with another secret, nor with a tampered body', { timeout: 60_000 }, async (t) => {
    const { dest, arrival } = await deliverOne(t);
    const other = `whsec_${randomBytes(32).toString('base64')}`;
    assert.throws(
      () => new Webhook(other).verify(arrival.body, headersOf(arrival)),
      'another secret must fail',
    );
    const tampered = arrival.body.replace('42.5', '42.6');
    assert.throws(
      () => new Webhook(dest.secret).verify(tampered, headersOf(arrival)),
      'a changed body must fail',
    );
  });
});
