/**
 * Destination transforms (docs/api.md "Transforms"), in the shape under test: a reshaped
 * payload arrives signed over the body sent, with the headers the transform set; a cancel
 * ends the delivery `cancelled` with no request; a throwing transform ends it `dead` at once
 * with its message, and a replay after the code is fixed sends the fixed shape; the code is
 * checked on write with the line of its error; the preview answers what would be sent.
 */

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Webhook } from 'standardwebhooks';
import { fileBox, headersOf, rejectsWith } from './helpers/client.ts';
import { waitUntil } from './helpers/sluice.ts';

const get = fileBox();

const SLACK = `function handler(webhook) {
  const { payload } = webhook;
  return {
    payload: { text: 'Order ' + payload.id + ' paid: ' + payload.amount + ' ' + payload.currency },
    headers: { ...webhook.headers, 'x-shaped-by': 'sluice' },
  };
}`;

describe('destination transforms', () => {
  it('sends the reshaped payload, signed over the body sent, with the headers it set', async () => {
    const box = get();
    const { api } = await box.tenant('reshape');
    const d = await api.destinations.create({
      url: box.rcv.url('slack'),
      rateLimit: { limit: 100, period: 'second' },
      headers: { 'x-team': 'payments' },
      transform: { code: SLACK },
    });
    assert.deepEqual(d.transform, { code: SLACK });
    const e = await api.events.send({
      type: 'order.paid',
      payload: { id: 'ord_1', amount: 120, currency: 'EUR' },
    });
    await box.rcv.waitFor(() => box.rcv.deliveredIds(box.rcv.path('slack')).has(e.id), 15_000, 'the event');
    const arrival = box.rcv.arrivals(box.rcv.path('slack'))[0];
    assert.ok(arrival);
    assert.equal(arrival.body, '{"text":"Order ord_1 paid: 120 EUR"}');
    const h = headersOf(arrival);
    assert.equal(h['x-team'], 'payments');
    assert.equal(h['x-shaped-by'], 'sluice');
    assert.deepEqual(new Webhook(d.secret).verify(arrival.body, h), { text: 'Order ord_1 paid: 120 EUR' });
  });

  it('a cancel ends the delivery cancelled, sending nothing; a throw ends it dead at once', async () => {
    const box = get();
    const { api } = await box.tenant('cancel-throw');
    const cancelling = await api.destinations.create({
      url: box.rcv.url('cancelled'),
      rateLimit: { limit: 100, period: 'second' },
      transform: {
        code: 'function handler(w) {\n  return w.payload.test ? { cancel: true } : w;\n}',
      },
    });
    const throwing = await api.destinations.create({
      url: box.rcv.url('thrown'),
      rateLimit: { limit: 100, period: 'second' },
      retry: { maxAttempts: 5, initialDelayMs: 1_000, maxDelayMs: 1_000 },
      transform: { code: 'function handler(w) {\n  throw new Error("no amount in " + w.type);\n}' },
    });
    const test = await api.events.send({
      type: 'order.paid',
      destinationId: cancelling.id,
      payload: { test: true },
    });
    const real = await api.events.send({
      type: 'order.paid',
      destinationId: cancelling.id,
      payload: { n: 1 },
    });
    const dies = await api.events.send({ type: 'order.paid', destinationId: throwing.id, payload: { n: 2 } });
    const settled = async (id: string, status: string) =>
      waitUntil(
        async () => {
          const d = await api.deliveries.get(id);
          return d.status === status ? d : undefined;
        },
        15_000,
        `delivery ${id} ${status}`,
      );
    const cancelled = await settled(test.deliveries[0]?.id ?? '', 'cancelled');
    assert.equal(cancelled.lastError, 'transform_cancelled');
    assert.equal(cancelled.attempts[0]?.errorCode, 'transform_cancelled');
    assert.match(cancelled.attempts[0]?.error ?? '', /cancelled by the destination's transform/);
    await settled(real.deliveries[0]?.id ?? '', 'delivered');
    assert.deepEqual(
      [...box.rcv.deliveredIds(box.rcv.path('cancelled'))],
      [real.id],
      'only the real one went',
    );

    const dead = await settled(dies.deliveries[0]?.id ?? '', 'dead');
    assert.equal(
      dead.attempts.length,
      1,
      'dead at the first attempt: retrying deterministic code cannot help',
    );
    assert.equal(dead.attempts[0]?.errorCode, 'transform_failed');
    assert.equal(dead.attempts[0]?.error, 'Error: no amount in order.paid (line 2)');
    assert.equal(dead.attempts[0]?.statusCode, null);
    assert.equal(box.rcv.arrivals(box.rcv.path('thrown')).length, 0, 'no request');
    assert.equal(
      (await api.destinations.get(throwing.id)).health.state,
      'healthy',
      'not counted by the breaker',
    );

    // Fixed, then replayed: the fixed shape is what arrives.
    await api.destinations.update(throwing.id, {
      transform: { code: 'function handler(w) { return { payload: { fixed: w.payload.n } } }' },
    });
    const replayed = await api.destinations.replay(throwing.id);
    assert.equal(replayed.count, 1);
    await box.rcv.waitFor(
      () => box.rcv.deliveredIds(box.rcv.path('thrown')).has(dies.id),
      15_000,
      'the replay',
    );
    assert.equal(box.rcv.arrivals(box.rcv.path('thrown'))[0]?.body, '{"fixed":2}');
  });

  it('refuses code that does not compile or defines no handler, at transform.code with the line', async () => {
    const box = get();
    const { api } = await box.tenant('bad-code');
    const base = { url: box.rcv.url('bad'), rateLimit: { limit: 1, period: 'second' as const } };
    const syntax = await rejectsWith(
      api.destinations.create({ ...base, transform: { code: 'function handler(w) {\n  return {\n' } }),
      400,
      'validation_failed',
    );
    assert.deepEqual(syntax.details, [
      {
        path: 'transform.code',
        message: 'line 3: SyntaxError: invalid property name',
        code: 'custom',
        line: 3,
      },
    ]);
    const none = await rejectsWith(
      api.destinations.create({ ...base, transform: { code: 'const x = 1;' } }),
      400,
      'validation_failed',
    );
    assert.match(String((none.details as { message: string }[])[0]?.message), /defines no function handler/);
    const looping = await rejectsWith(
      api.destinations.create({
        ...base,
        transform: { code: 'while (true) {}\nfunction handler(w) { return w }' },
      }),
      400,
      'validation_failed',
    );
    // Its 50 ms of CPU, or the hard stop first on a machine too busy to give it them.
    assert.match(
      String((looping.details as { message: string }[])[0]?.message),
      /ran out of time|stopped after/,
    );
    assert.equal((await api.destinations.list()).data.length, 0, 'nothing created');
    const d = await api.destinations.create(base);
    await rejectsWith(
      api.destinations.update(d.id, { transform: { code: 'function handler(' } }),
      400,
      'validation_failed',
    );
    assert.equal((await api.destinations.get(d.id)).transform, null, 'unchanged');
  });

  it('previews what would be sent, with its own or a tried filter and transform, within a budget', async () => {
    const box = get();
    const { api } = await box.tenant('preview');
    const d = await api.destinations.create({
      url: box.rcv.url('preview'),
      rateLimit: { limit: 1, period: 'second' },
      eventTypes: ['order.*'],
      headers: { 'x-team': 'payments' },
      filter: { 'payload.amount': { $gte: 100 } },
      transform: { code: SLACK },
    });
    const payload = { id: 'ord_9', amount: 120, currency: 'USD' };
    assert.deepEqual(await api.destinations.preview(d.id, { type: 'order.paid', payload }), {
      matches: true,
      request: {
        headers: { 'content-type': 'application/json', 'x-team': 'payments', 'x-shaped-by': 'sluice' },
        body: { text: 'Order ord_9 paid: 120 USD' },
      },
      error: null,
    });
    assert.deepEqual(await api.destinations.preview(d.id, { type: 'user.created', payload }), {
      matches: false,
      request: null,
      error: null,
    });
    // A tried filter and transform instead of its own; nothing saved.
    const tried = await api.destinations.preview(d.id, {
      type: 'order.paid',
      payload: { amount: 5 },
      filter: null,
      transform: null,
    });
    assert.equal(tried.matches, true);
    const thrown = await api.destinations.preview(d.id, {
      type: 'order.paid',
      payload,
      transform: { code: 'function handler(w) {\n  return w.payload.nope.deeper;\n}' },
    });
    assert.equal(thrown.request, null);
    assert.equal(thrown.error?.code, 'transform_failed');
    assert.match(thrown.error?.message ?? '', /TypeError: .*\(line 2\)$/);
    assert.equal(box.rcv.arrivals(box.rcv.path('preview')).length, 0, 'nothing sent');
    // Past the budget (5 a second by default): 429 with Retry-After.
    let limited: unknown;
    for (let i = 0; i < 10 && limited === undefined; i++)
      await api.destinations.preview(d.id, { type: 'order.paid', payload }).catch((err: unknown) => {
        limited = err;
      });
    assert.ok(limited, 'a burst of previews is limited');
    const err = limited as { status: number; code: string; retryAfter?: number };
    assert.equal(err.status, 429);
    assert.equal(err.code, 'rate_limited');
  });
});
