/**
 * `PATCH /v1/destinations/:id` takes any of the fields (docs/api.md), and a change applies to the
 * deliveries already waiting, not only to events sent after it: live-change.test.ts checks
 * `rateLimit`, api-ops.test.ts `eventTypes`, api-rotation.test.ts `secret`; here the ones that
 * say where and how a request goes — `url` (the backlog goes to the new one, nothing more to
 * the old) and `timeoutMs` (the next attempt gives up at the new one).
 */

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { fileBox } from './helpers/client.ts';
import { waitUntil } from './helpers/sluice.ts';

const get = fileBox();

describe('PATCH applies to the waiting deliveries', () => {
  it('url: a paused backlog goes to the new URL once resumed, none to the old', {
    timeout: 60_000,
  }, async () => {
    const { rcv } = get();
    const { api } = await get().tenant('patch-url');
    const dest = await api.destinations.create({
      url: rcv.url('patch-old'),
      rateLimit: { limit: 20, period: 'second' },
    });
    await api.destinations.pause(dest.id);
    const sent = await api.events.sendBatch(
      Array.from({ length: 3 }, (_, i) => ({ type: 'p.url', payload: { i }, destinationId: dest.id })),
    );
    const moved = await api.destinations.update(dest.id, { url: rcv.url('patch-new') });
    assert.equal(moved.url, rcv.url('patch-new'));
    await api.destinations.resume(dest.id);
    const ids = sent.data.map((e) => e.id);
    await rcv.waitFor(
      () => ids.every((id) => rcv.deliveredIds(rcv.path('patch-new')).has(id)),
      15_000,
      'the backlog at the new URL',
    );
    assert.equal(rcv.arrivals(rcv.path('patch-old')).length, 0, 'nothing went to the old URL');
  });

  it('timeoutMs: the next attempt of a waiting delivery gives up at the new timeout', {
    timeout: 60_000,
  }, async () => {
    const { rcv } = get();
    const { api } = await get().tenant('patch-timeout');
    const path = rcv.path('patch-slow');
    await rcv.setDelay(path, 3_000);
    const dest = await api.destinations.create({
      url: rcv.url('patch-slow'),
      rateLimit: { limit: 20, period: 'second' },
      timeoutMs: 10_000,
      retry: { maxAttempts: 1, initialDelayMs: 0, maxDelayMs: 0 },
    });
    await api.destinations.pause(dest.id);
    const sent = await api.events.send({ type: 'p.timeout', payload: {}, destinationId: dest.id });
    await api.destinations.update(dest.id, { timeoutMs: 500 });
    await api.destinations.resume(dest.id);
    const dlv = sent.deliveries[0]!.id;
    const dead = await waitUntil(
      async () => {
        const d = await api.deliveries.get(dlv);
        return d.status === 'dead' ? d : undefined;
      },
      10_000,
      'the attempt to time out at 500 ms and the delivery to die',
    );
    assert.equal(dead.attempts.length, 1);
    const attempt = dead.attempts[0]!;
    assert.equal(attempt.errorCode, 'timeout', JSON.stringify(attempt));
    assert.ok(
      attempt.latencyMs !== null && attempt.latencyMs < 2_500,
      `gave up at the new 500 ms, not the old 10 s nor the receiver's 3 s: ${attempt.latencyMs} ms`,
    );
  });
});
