/**
 * Tenant ingest quotas (docs/operations.md "Tenant quotas"), in the shape under test: the
 * operator sets a tenant's quotas with `PATCH /v1/tenants/:id`; a request past one answers
 * `429 rate_limited` with `Retry-After` and nothing of it is accepted (the tenant's events
 * counted through the API); other tenants are unaffected; after `Retry-After` posting works
 * again; the operator-wide default applies to a tenant without its own setting. And without
 * any quota configured, one tenant's 60,000 events in batches of 1,000 are all accepted: no
 * 429, no 503.
 */

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { type NewEvent, type Sluice, SluiceError } from '@sluice/client';
import { type ApiBox, collect, fileBox } from './helpers/client.ts';
import { samples, scrape } from './helpers/metrics.ts';
import { sleep } from './helpers/receiver.ts';

const events = (n: number, tag = 'e'): NewEvent[] =>
  Array.from({ length: n }, (_, i) => ({ type: 'order.created', payload: { tag, i } }));

/**
 * The batch's answer: its events accepted, or the SluiceError it was refused with. What is
 * checked is the answer, not how soon: in the suite's pool a 1,000-event batch into the
 * distributed shape in this process (its worker delivering the earlier batches beside it)
 * has taken more than the client's default 30 s to answer.
 */
async function post(api: Sluice, batch: NewEvent[]): Promise<number | SluiceError> {
  try {
    return (await api.events.sendBatch(batch, { timeout: 120_000 })).data.length;
  } catch (err) {
    if (err instanceof SluiceError) return err;
    throw err;
  }
}

function assertRefused(
  answer: number | SluiceError,
  quota: string,
): SluiceError & { details: Record<string, unknown> } {
  assert.ok(answer instanceof SluiceError, `refused, not accepted: ${String(answer)}`);
  assert.equal(answer.status, 429, answer.message);
  assert.equal(answer.code, 'rate_limited');
  assert.equal((answer.details as { quota: string }).quota, quota);
  assert.ok(Number.isInteger(answer.retryAfterSeconds) && (answer.retryAfterSeconds ?? 0) >= 1);
  return answer as SluiceError & { details: Record<string, unknown> };
}

/** The tenant's events, counted through the API: one delivery each to its one destination. */
async function eventsOf(api: Sluice, destinationId: string): Promise<number> {
  return (await collect(api.deliveries.listAll({ destinationId, limit: 500 }))).length;
}

async function tenantWithDestination(box: ApiBox, name: string, state: 'active' | 'paused' = 'active') {
  const { tenant, api } = await box.tenant(name);
  const destination = await api.destinations.create({
    url: box.rcv.url(name),
    rateLimit: { limit: 1_000, period: 'second' },
  });
  if (state === 'paused') await api.destinations.pause(destination.id);
  return { tenant, api, destinationId: destination.id };
}

describe('with an operator-wide default of 50 events a second', () => {
  const get = fileBox({ SLUICE_TENANT_EVENTS_PER_SECOND: 50 });

  it('a quota set by PATCH: past it 429 with Retry-After, nothing of the batch accepted; after Retry-After it fits', async () => {
    const box = get();
    const a = await tenantWithDestination(box, 'rate-a');
    const patched = await box.admin.tenants.update(a.tenant.id, { quota: { eventsPerSecond: 10 } });
    assert.deepEqual(patched.quota, { eventsPerSecond: 10, pendingEvents: null });
    assert.deepEqual((await box.admin.tenants.get(a.tenant.id)).quota, patched.quota);

    let accepted = 0;
    let refused: SluiceError | undefined;
    const started = Date.now();
    for (let i = 0; i < 20 && refused === undefined; i++) {
      const answer = await post(a.api, events(4, `a${i}`));
      if (typeof answer === 'number') accepted += answer;
      else refused = answer;
    }
    const elapsedS = (Date.now() - started) / 1_000;
    const error = assertRefused(refused as SluiceError, 'eventsPerSecond');
    assert.equal(error.details.limit, 10);
    assert.equal(error.details.requested, 4);
    assert.ok(accepted >= 8, `a second's room at once: ${accepted}`);
    assert.ok(accepted <= 10 + 10 * elapsedS + 4, `within the bucket: ${accepted} in ${elapsedS} s`);
    assert.equal(await eventsOf(a.api, a.destinationId), accepted, 'nothing past the quota was accepted');

    // Another tenant (the default's 50 a second) is unaffected, at once.
    const b = await tenantWithDestination(box, 'rate-b');
    assert.equal(await post(b.api, events(40, 'b')), 40);

    // After Retry-After the bucket has room for the same batch.
    await sleep(1_000 * (error.retryAfterSeconds ?? 1));
    assert.equal(await post(a.api, events(4, 'again')), 4);
    assert.equal(await eventsOf(a.api, a.destinationId), accepted + 4);
  });

  it('the operator-wide default applies to a tenant without its own setting; its own wins once set', async () => {
    const box = get();
    const c = await tenantWithDestination(box, 'default-c');
    assert.deepEqual((await box.admin.tenants.get(c.tenant.id)).quota, {
      eventsPerSecond: null,
      pendingEvents: null,
    });
    // 51 events never fit a bucket of 50; 50 do, at once.
    const error = assertRefused(await post(c.api, events(51, 'c')), 'eventsPerSecond');
    assert.equal(error.details.limit, 50);
    assert.equal(await post(c.api, events(50, 'c')), 50);
    await box.admin.tenants.update(c.tenant.id, { quota: { eventsPerSecond: 200 } });
    await sleep(1_100); // the 50 taken under the old quota come back
    assert.equal(await post(c.api, events(150, 'c2')), 150);
    assert.equal(await eventsOf(c.api, c.destinationId), 200);
  });

  it('the pending-events quota: past it 429, nothing accepted; delivered events free their room', async () => {
    const box = get();
    const d = await tenantWithDestination(box, 'pending-d', 'paused');
    await box.admin.tenants.update(d.tenant.id, { quota: { pendingEvents: 30 } });
    assert.equal(await post(d.api, events(20, 'd1')), 20);
    const error = assertRefused(await post(d.api, events(11, 'd2')), 'pendingEvents');
    assert.equal(error.details.limit, 30);
    assert.equal(await post(d.api, events(10, 'd3')), 10, 'exactly up to the quota');
    assertRefused(await post(d.api, events(1, 'd4')), 'pendingEvents');
    assert.equal(await eventsOf(d.api, d.destinationId), 30);

    await d.api.destinations.resume(d.destinationId);
    await box.rcv.waitFor(
      () => box.rcv.deliveredIds(box.rcv.path('pending-d')).size === 30,
      30_000,
      '30 delivered',
    );
    await sleep(200);
    assert.equal(await post(d.api, events(30, 'd5')), 30);

    const refusals = samples(await scrape(box.url)).filter((s) => s.name === 'sluice_ingest_refused_total');
    const by = (quota: string) => refusals.find((s) => s.labels.quota === quota)?.value ?? 0;
    assert.ok(by('pendingEvents') >= 2, JSON.stringify(refusals));
    assert.ok(by('eventsPerSecond') >= 2, JSON.stringify(refusals));
  });
});

describe('without any quota configured', () => {
  const get = fileBox();

  it('one tenant posting 60,000 events in 60 batches of 1,000: every batch 202, no 429, no 503', async () => {
    const box = get();
    // Paused: the 60,000 stay pending (no pending-events quota either), and the box spends
    // the test on accepting them, not on delivering them (that is the other files' part).
    const { api, destinationId } = await tenantWithDestination(box, 'flood', 'paused');
    let accepted = 0;
    for (let i = 0; i < 60; i++) {
      const answer = await post(api, events(1_000, `f${i}`));
      assert.equal(
        typeof answer,
        'number',
        `batch ${i}: ${answer instanceof SluiceError ? answer.message : ''}`,
      );
      accepted += answer as number;
    }
    assert.equal(accepted, 60_000);
    const statuses = box.calls.filter((c) => c.path === '/v1/events/batch').map((c) => c.status);
    assert.deepEqual([...new Set(statuses)], [202]);
    // Acceptance is the point: what is pending is cancelled with its destination.
    await api.destinations.delete(destinationId);
  });
});
