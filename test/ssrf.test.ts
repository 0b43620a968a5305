/**
 * SSRF guard. A destination given by hostname is accepted at creation; the hostname is
 * checked after resolution, at connect. Here an injected DNS lookup resolves
 * `hook.example.test` to 127.0.0.1 (where the receiver listens): with private networks not
 * allowed, the attempt fails with `destination_not_allowed` and the receiver sees nothing;
 * with them allowed (the control), the same setup delivers.
 */

import assert from 'node:assert/strict';
import type { TestContext } from 'node:test';
import { describe, it } from 'node:test';
import { sleep } from './helpers/receiver.ts';
import {
  createDestination,
  createTenant,
  type Delivery,
  getDelivery,
  harness,
  type Lookup,
  notFound,
  postEvent,
  waitUntil,
} from './helpers/sluice.ts';

const HOST = 'hook.example.test';

/** node's dns.lookup signature: `hook.example.test` → 127.0.0.1, anything else → ENOTFOUND. */
const lookup: Lookup = (hostname, options, callback) => {
  process.nextTick(() => {
    if (hostname !== HOST) callback(notFound(hostname), '');
    else if (options.all === true) callback(null, [{ address: '127.0.0.1', family: 4 }]);
    else callback(null, '127.0.0.1', 4);
  });
};

async function sendOne(t: TestContext, allowPrivateNetworks: boolean) {
  const { box, rcv } = await harness(t, {
    SLUICE_ALLOW_PRIVATE_NETWORKS: allowPrivateNetworks ? 'true' : 'false',
    lookup,
  });
  const tenant = await createTenant(box, box.adminToken);
  const url = `http://${HOST}:${rcv.port}${rcv.path('x')}`;
  const dest = await createDestination(box, tenant.apiKey, {
    name: 'x',
    url,
    rateLimit: { limit: 5, period: 'second' },
    retry: { maxAttempts: 2, initialDelayMs: 100, maxDelayMs: 200 },
  });
  assert.equal(dest.url, url, 'a hostname URL is accepted at creation');
  const event = await postEvent(box, tenant.apiKey, {
    type: 'ssrf.test',
    destinationId: dest.id,
    payload: { n: 1 },
  });
  const deliveryId = event.deliveries[0]!.id;
  const settled = () =>
    waitUntil(
      async () => {
        const d = await getDelivery(box, tenant.apiKey, deliveryId);
        return d.status === 'delivered' || d.status === 'dead' ? d : undefined;
      },
      30_000,
      `delivery ${deliveryId} to settle`,
    );
  return { rcv, event, settled };
}

describe('SSRF guard', () => {
  it('a hostname resolving to a private address is refused at connect', { timeout: 60_000 }, async (t) => {
    const { rcv, settled } = await sendOne(t, false);
    const d: Delivery = await settled();
    assert.equal(d.status, 'dead', `a refused destination never delivers: ${JSON.stringify(d)}`);
    assert.ok(d.attempts.length >= 1, 'the refusal is recorded as an attempt');
    for (const a of d.attempts) {
      assert.equal(a.errorCode, 'destination_not_allowed', `attempt ${a.attempt}: ${JSON.stringify(a)}`);
      assert.equal(a.statusCode, null, `attempt ${a.attempt} got no HTTP status`);
    }
    await sleep(500);
    assert.equal(rcv.arrivals().length, 0, 'the receiver must never see a request');
  });

  it('the same hostname delivers when private networks are allowed (control)', {
    timeout: 60_000,
  }, async (t) => {
    const { rcv, event, settled } = await sendOne(t, true);
    const d = await settled();
    assert.equal(d.status, 'delivered', `through the injected lookup: ${JSON.stringify(d)}`);
    // The receiver's thread reports its answer on its own; the outcome may be stored first.
    await rcv.waitFor(() => rcv.deliveredIds().size > 0, 5_000, 'the receiver to report its answer');
    assert.deepEqual([...rcv.deliveredIds()], [event.id]);
    assert.equal(
      rcv.arrivals()[0]!.headers.host,
      `${HOST}:${rcv.port}`,
      'the Host header names the hostname',
    );
  });
});
