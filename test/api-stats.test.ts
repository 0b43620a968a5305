/**
 * `GET /v1/destinations/:id/stats` beyond its shape (api-contract.test.ts): what docs/api.md says
 * of its numbers. `delivered`, `dead` and `maxSentInAnyWindow` count over the asked span
 * only, and a rate-limit window longer than the span is the span (a per-minute limit asked
 * over 2 s counts the requests of those 2 s); the backlog — `pending` with
 * `oldestPendingAgeMs` on a paused destination, `inFlight` while the receiver holds the
 * requests — is what is there now.
 */

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Sluice } from '@sluice/client';
import { fileBox } from './helpers/client.ts';
import { sleep } from './helpers/receiver.ts';
import { waitUntil } from './helpers/sluice.ts';

const get = fileBox();

/** Sends `n` events to `destinationId` in one batch; their event ids. */
async function send(api: Sluice, destinationId: string, n: number, tag: string): Promise<string[]> {
  const batch = await api.events.sendBatch(
    Array.from({ length: n }, (_, i) => ({ type: 'stats.span', payload: { tag, i }, destinationId })),
  );
  return batch.data.map((e) => e.id);
}

describe('stats', () => {
  it('delivered, dead and maxSentInAnyWindow count over the span; a longer window is the span', {
    timeout: 60_000,
  }, async () => {
    const { rcv } = get();
    const { api } = await get().tenant('span');
    // 600 a minute: ten a tick, so a batch goes out at once, and the window (60 s) is longer
    // than the spans asked below.
    const ok = await api.destinations.create({
      url: rcv.url('span-ok'),
      rateLimit: { limit: 600, period: 'minute' },
    });
    await rcv.setDefault(rcv.path('span-dead'), 500);
    const failing = await api.destinations.create({
      url: rcv.url('span-dead'),
      rateLimit: { limit: 600, period: 'minute' },
      retry: { maxAttempts: 1, initialDelayMs: 0, maxDelayMs: 0 },
    });

    const first = await send(api, ok.id, 5, 'first');
    await send(api, failing.id, 2, 'dead');
    await rcv.waitFor(() => rcv.deliveredIds(rcv.path('span-ok')).size === 5, 15_000, 'the first five');
    await waitUntil(
      async () => (await api.destinations.stats(failing.id, { seconds: 60 })).dead === 2,
      15_000,
      'two dead',
    );
    await waitUntil(
      async () => (await api.destinations.stats(ok.id, { seconds: 60 })).delivered === 5,
      10_000,
      'five delivered',
    );
    // Every outcome so far is written (the stats said so): none is later than now.
    const firstDone = Date.now();

    // Past a 2-second span of everything so far: three more, sent at once.
    await sleep(Math.max(0, firstDone + 2_500 - Date.now()));
    const second = await send(api, ok.id, 3, 'second');
    await rcv.waitFor(
      () => second.every((e) => rcv.deliveredIds(rcv.path('span-ok')).has(e)),
      15_000,
      'the next three',
    );
    const recent = await waitUntil(
      async () => {
        const s = await api.destinations.stats(ok.id, { seconds: 2 });
        return s.delivered === 3 ? s : undefined;
      },
      1_500,
      'the last 2 s: the three delivered in them',
    );
    assert.equal(
      recent.maxSentInAnyWindow,
      3,
      'a 60 s window over a 2 s span is the span: the three sent in it, not the eight sent in the minute',
    );
    assert.equal(recent.dead, 0);
    assert.equal(
      recent.perSecond.reduce((n, b) => n + b.sent, 0),
      3,
    );

    const minute = await api.destinations.stats(ok.id, { seconds: 60 });
    assert.equal(minute.delivered, first.length + second.length);
    assert.equal(minute.maxSentInAnyWindow, 8, 'all eight within one minute');
    assert.equal(
      minute.perSecond.reduce((n, b) => n + b.sent, 0),
      8,
    );

    const deadRecent = await api.destinations.stats(failing.id, { seconds: 2 });
    assert.equal(deadRecent.dead, 0, 'the dead ones died before the span');
    assert.equal(deadRecent.maxSentInAnyWindow, 0);
    const deadMinute = await api.destinations.stats(failing.id, { seconds: 60 });
    assert.equal(deadMinute.dead, 2);
    assert.equal(deadMinute.delivered, 0);
    assert.equal(deadMinute.maxSentInAnyWindow, 2, 'a request that failed was still sent');
  });

  it('the backlog now: pending and its age while paused, inFlight while the receiver holds them', {
    timeout: 60_000,
  }, async () => {
    const { rcv } = get();
    const { api } = await get().tenant('backlog');
    const dest = await api.destinations.create({
      url: rcv.url('backlog'),
      rateLimit: { limit: 10, period: 'second' },
    });
    await api.destinations.pause(dest.id);
    const sentAt = Date.now();
    await send(api, dest.id, 2, 'held');
    await sleep(1_000);
    const paused = await api.destinations.stats(dest.id);
    assert.equal(paused.state, 'paused');
    assert.equal(paused.pending, 2);
    assert.equal(paused.queued + paused.inFlight, 0, 'a paused destination sends nothing');
    assert.ok(
      paused.oldestPendingAgeMs >= 900 && paused.oldestPendingAgeMs <= Date.now() - sentAt + 100,
      `oldestPendingAgeMs ${paused.oldestPendingAgeMs}: the age of the oldest pending delivery`,
    );

    await rcv.setDelay(rcv.path('backlog'), 3_000);
    await api.destinations.resume(dest.id);
    const holding = await waitUntil(
      async () => {
        const s = await api.destinations.stats(dest.id);
        return s.inFlight === 2 ? s : undefined;
      },
      2_500,
      'two requests in flight',
    );
    assert.equal(holding.pending, 0);
    assert.equal(holding.oldestPendingAgeMs, 0, 'nothing pending: 0');
    assert.equal(holding.delivered, 0, 'not answered yet');
    await rcv.waitFor(() => rcv.deliveredIds(rcv.path('backlog')).size === 2, 10_000, 'both answered');
    const settled = await waitUntil(
      async () => {
        const s = await api.destinations.stats(dest.id);
        return s.delivered === 2 ? s : undefined;
      },
      5_000,
      'both delivered',
    );
    assert.equal(settled.inFlight + settled.queued + settled.pending, 0);
  });
});
