/**
 * Operational events (docs/api.md "Operational events"), in the shape under test: when a
 * tenant's destination is disabled by a 410, suspended and recovered by its breaker, a
 * delivery dies, a backlog alert is raised and resolved, or a secret is rotated, the tenant's
 * destinations that name the type (or `sluice.*`) receive a `sluice.…` webhook, signed
 * (verified with the `standardwebhooks` package), its body as the catalog's schema says; a
 * `*` destination receives none; a destination never receives the events about itself; and
 * nothing is emitted about a delivery of a `sluice.…` event (no loops). The events are
 * ordinary events of the tenant: `GET /v1/events` lists them.
 */

import assert from 'node:assert/strict';
import { describe, it, type TestContext } from 'node:test';
import { BUILT_IN_EVENT_TYPES } from '@sluice/core';
import { Ajv } from 'ajv';
import { Webhook } from 'standardwebhooks';
import { headersOf } from './helpers/client.ts';
import { type Receiver, sleep } from './helpers/receiver.ts';
import {
  createDestination,
  createTenant,
  type Destination,
  harness,
  postEvents,
  type Tenant,
  type TestBox,
  waitUntil,
} from './helpers/sluice.ts';

const SETTINGS = {
  SLUICE_BREAKER_DEGRADE_AFTER: 2,
  SLUICE_BREAKER_SUSPEND_AFTER: 4,
  SLUICE_BREAKER_WINDOW_MS: 60_000,
  SLUICE_BREAKER_WINDOW_MIN_ATTEMPTS: 100_000,
  SLUICE_BREAKER_WINDOW_FAILURE_PERCENT: 50,
  SLUICE_BREAKER_PROBE_INITIAL_MS: 300,
  SLUICE_BREAKER_PROBE_MAX_MS: 600,
  SLUICE_ALERT_PENDING_COUNT: 10,
  SLUICE_ALERT_PENDING_AGE_SECONDS: 0,
  SLUICE_ALERT_INTERVAL_MS: 200,
};
const FAST_RETRY = { maxAttempts: 2, initialDelayMs: 100, maxDelayMs: 200 };
const ONE_TRY = { maxAttempts: 1, initialDelayMs: 100, maxDelayMs: 100 };

interface Body {
  type: string;
  tenantId: string;
  destinationId: string;
  occurredAt: string;
  data: Record<string, unknown>;
}

const ajv = new Ajv({ strict: false, validateFormats: false });
const schemas = new Map(BUILT_IN_EVENT_TYPES.map((t) => [t.name, ajv.compile(t.schema ?? {})]));

/** The operational webhooks at `name`, each verified with `secret` and checked against its schema. */
function received(rcv: Receiver, name: string, secret: string): Body[] {
  return rcv
    .arrivals(rcv.path(name))
    .filter((a) => a.complete && String(a.headers['webhook-event-type']).startsWith('sluice.'))
    .map((a) => {
      new Webhook(secret).verify(a.body, headersOf(a)); // throws on a bad signature
      const body = JSON.parse(a.body) as Body;
      assert.equal(a.headers['webhook-event-type'], body.type);
      assert.deepEqual(Object.keys(body).sort(), ['data', 'destinationId', 'occurredAt', 'tenantId', 'type']);
      const valid = schemas.get(body.type);
      assert.ok(valid, `a built-in type: ${body.type}`);
      assert.ok(valid(body), `${body.type} fits its schema: ${JSON.stringify(valid.errors)} ${a.body}`);
      assert.ok(Math.abs(Date.parse(body.occurredAt) - Date.now()) < 120_000, body.occurredAt);
      return body;
    });
}

/** An operational event as `GET /v1/events/:id` answers it. */
interface OperationalEvent {
  id: string;
  type: string;
  payload: Body;
  deliveries: { destinationId: string }[];
}

/** The events of `type` in the event log, each read by id (a page carries no payload). */
async function eventLog(box: TestBox, key: string, type: string): Promise<OperationalEvent[]> {
  const res = await box.api<{ data: { id: string }[] }>(
    'GET',
    `/v1/events?type=${type}&limit=100`,
    undefined,
    key,
  );
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return Promise.all(
    res.body.data.map(async ({ id }) => {
      const one = await box.api<OperationalEvent>('GET', `/v1/events/${id}`, undefined, key);
      assert.equal(one.status, 200, JSON.stringify(one.body));
      return one.body;
    }),
  );
}

interface Setup {
  box: TestBox;
  rcv: Receiver;
  tenant: Tenant;
  /** `sluice.*`: hears of everything but itself. */
  ops: Destination;
  /** `*`: hears of no operational event. */
  star: Destination;
}

async function setUp(t: TestContext): Promise<Setup> {
  const { box, rcv } = await harness(t, SETTINGS);
  const tenant = await createTenant(box, box.adminToken, 'platform');
  const rate = { limit: 50, period: 'second' };
  const ops = await createDestination(box, tenant.apiKey, {
    url: rcv.url('ops'),
    rateLimit: rate,
    eventTypes: ['sluice.*'],
  });
  const star = await createDestination(box, tenant.apiKey, { url: rcv.url('star'), rateLimit: rate });
  return { box, rcv, tenant, ops, star };
}

/** Waits for an operational event of `type` about `about` at `ops`, and returns it. */
async function arrival(s: Setup, type: string, about: string, timeoutMs = 30_000): Promise<Body> {
  return waitUntil(
    () => received(s.rcv, 'ops', s.ops.secret).find((b) => b.type === type && b.destinationId === about),
    timeoutMs,
    `${type} about ${about} at the sluice.* subscriber`,
    50,
  );
}

describe('operational events', () => {
  it('suspended, recovered, dead and secret.rotated reach a sluice.* subscriber, signed; * gets none; never the destination itself', {
    timeout: 120_000,
  }, async (t) => {
    const s = await setUp(t);
    const { box, rcv, tenant } = s;
    // Down, then up again: its breaker opens and closes. It also subscribes to sluice.*, but
    // never hears of itself.
    await rcv.setDefault(rcv.path('down'), 503);
    const down = await createDestination(box, tenant.apiKey, {
      url: rcv.url('down'),
      rateLimit: { limit: 20, period: 'second' },
      retry: FAST_RETRY,
      eventTypes: ['order.*', 'sluice.*'],
    });
    // Refuses with a 400 once: the delivery is dead at once (a 4xx never opens the breaker).
    await rcv.setDefault(rcv.path('bad'), 400);
    const bad = await createDestination(box, tenant.apiKey, {
      url: rcv.url('bad'),
      rateLimit: { limit: 20, period: 'second' },
      retry: ONE_TRY,
      eventTypes: ['order.*'],
    });
    const named = await createDestination(box, tenant.apiKey, {
      url: rcv.url('named'),
      rateLimit: { limit: 20, period: 'second' },
      eventTypes: ['sluice.secret.rotated'],
    });

    await postEvents(
      box,
      tenant.apiKey,
      Array.from({ length: 6 }, (_, i) => ({ type: 'order.paid', payload: { i }, destinationId: down.id })),
    );
    const [dying] = await postEvents(box, tenant.apiKey, [
      { type: 'order.refunded', payload: { r: 1 }, destinationId: bad.id },
    ]);

    const suspended = await arrival(s, 'sluice.destination.suspended', down.id);
    assert.equal(suspended.tenantId, tenant.id);
    assert.ok(
      Number(suspended.data.failures) >= SETTINGS.SLUICE_BREAKER_SUSPEND_AFTER,
      JSON.stringify(suspended),
    );
    assert.equal(suspended.data.lastError, 'HTTP 503');
    assert.ok(Date.parse(String(suspended.data.nextProbeAt)) > Date.parse(suspended.occurredAt));

    const dead = await arrival(s, 'sluice.delivery.dead', bad.id);
    assert.deepEqual(dead.data, {
      deliveryId: dying?.deliveries[0]?.id,
      eventId: dying?.id,
      eventType: 'order.refunded',
      attempts: 1,
      lastStatusCode: 400,
      lastError: 'HTTP 400',
    });

    await rcv.setDefault(rcv.path('down'), 200);
    const recovered = await arrival(s, 'sluice.destination.recovered', down.id);
    assert.ok(Number(recovered.data.suspendedForMs) > 0, JSON.stringify(recovered));

    const rotation = await box.api<{ previousSecretExpiresAt: string }>(
      'POST',
      `/v1/destinations/${bad.id}/rotate-secret`,
      undefined,
      tenant.apiKey,
    );
    assert.equal(rotation.status, 200);
    const rotated = await arrival(s, 'sluice.secret.rotated', bad.id);
    assert.deepEqual(rotated.data, { previousSecretExpiresAt: rotation.body.previousSecretExpiresAt });
    // A destination naming the one type gets it, and nothing else.
    await rcv.waitFor(() => received(rcv, 'named', named.secret).length === 1, 15_000, 'rotated at named');
    assert.deepEqual(
      received(rcv, 'named', named.secret).map((b) => b.type),
      ['sluice.secret.rotated'],
    );

    // The destination the events are about never receives them; `*` receives none.
    await sleep(500);
    const heard = received(rcv, 'down', down.secret);
    assert.deepEqual(
      heard.filter((b) => b.destinationId === down.id),
      [],
      'down heard nothing about itself',
    );
    assert.ok(
      heard.some((b) => b.destinationId === bad.id),
      'down heard of the other destinations',
    );
    assert.deepEqual(
      rcv.arrivals(rcv.path('star')).map((a) => a.headers['webhook-event-type']),
      [],
      'a * destination receives no operational event',
    );

    // Ordinary events of the tenant: in the event log, each delivered to ops.
    for (const type of [
      'sluice.destination.suspended',
      'sluice.destination.recovered',
      'sluice.delivery.dead',
    ]) {
      const logged = await eventLog(box, tenant.apiKey, type);
      assert.equal(logged.length, 1, `${type} once: ${JSON.stringify(logged)}`);
      assert.equal(logged[0]?.payload.type, type);
    }
  });

  it('disabled by a 410, and the backlog alert raised and resolved', { timeout: 120_000 }, async (t) => {
    const s = await setUp(t);
    const { box, rcv, tenant } = s;
    await rcv.setDefault(rcv.path('gone'), 410);
    const gone = await createDestination(box, tenant.apiKey, {
      url: rcv.url('gone'),
      rateLimit: { limit: 20, period: 'second' },
      eventTypes: ['order.*'],
    });
    await postEvents(box, tenant.apiKey, [{ type: 'order.paid', payload: {}, destinationId: gone.id }]);
    const disabled = await arrival(s, 'sluice.destination.disabled', gone.id);
    assert.deepEqual(disabled.data, { reason: 'the destination answered 410 Gone', statusCode: 410 });

    // 30 events at 10 a second: past the threshold (10) at once, back under half of it in ~2.5 s.
    const slow = await createDestination(box, tenant.apiKey, {
      url: rcv.url('slow'),
      rateLimit: { limit: 10, period: 'second' },
      eventTypes: ['order.*'],
    });
    await postEvents(
      box,
      tenant.apiKey,
      Array.from({ length: 30 }, (_, i) => ({ type: 'order.paid', payload: { i }, destinationId: slow.id })),
    );
    const raised = await arrival(s, 'sluice.backlog.raised', slow.id);
    assert.equal(raised.data.threshold, SETTINGS.SLUICE_ALERT_PENDING_COUNT);
    assert.equal(raised.data.kind, 'pending_count');
    // Counted again as the alert is recorded: a little may have gone out since the sample.
    assert.ok(Number(raised.data.pending) > SETTINGS.SLUICE_ALERT_PENDING_COUNT / 2, JSON.stringify(raised));
    const resolved = await arrival(s, 'sluice.backlog.resolved', slow.id);
    // `pending` counts what is not delivered yet, claimed ones included (published ahead of the
    // window in the distributed shape): the alert resolves on the pending ones alone.
    assert.ok(Number(resolved.data.pending) < 30, JSON.stringify(resolved));
    assert.ok(Date.parse(resolved.occurredAt) > Date.parse(raised.occurredAt));
    assert.deepEqual(rcv.arrivals(rcv.path('star')), [], 'a * destination receives no operational event');
    assert.equal((await eventLog(box, tenant.apiKey, 'sluice.backlog.raised')).length, 1);
  });

  it('no loops: a subscriber that fails its sluice.delivery.dead to death causes no further event', {
    timeout: 120_000,
  }, async (t) => {
    const s = await setUp(t);
    const { box, rcv, tenant } = s;
    await rcv.setDefault(rcv.path('bad'), 400);
    await rcv.setDefault(rcv.path('sink'), 400);
    const bad = await createDestination(box, tenant.apiKey, {
      url: rcv.url('bad'),
      rateLimit: { limit: 20, period: 'second' },
      retry: ONE_TRY,
      eventTypes: ['order.*'],
    });
    // Hears of dead deliveries, and lets each one die too.
    const sink = await createDestination(box, tenant.apiKey, {
      url: rcv.url('sink'),
      rateLimit: { limit: 20, period: 'second' },
      retry: ONE_TRY,
      eventTypes: ['sluice.delivery.dead'],
    });
    await postEvents(box, tenant.apiKey, [{ type: 'order.paid', payload: {}, destinationId: bad.id }]);
    await arrival(s, 'sluice.delivery.dead', bad.id);
    const deadAtSink = async () => {
      const res = await box.api<{ data: unknown[] }>(
        'GET',
        `/v1/deliveries?destinationId=${sink.id}&status=dead`,
        undefined,
        tenant.apiKey,
      );
      return res.body.data.length === 1;
    };
    await waitUntil(deadAtSink, 15_000, "the sink's delivery of the dead event to die");
    await sleep(1_500);
    const logged = await eventLog(box, tenant.apiKey, 'sluice.delivery.dead');
    assert.equal(logged.length, 1, `one dead event, about bad only: ${JSON.stringify(logged)}`);
    assert.equal(logged[0]?.payload.destinationId, bad.id);
    assert.equal(
      received(rcv, 'ops', s.ops.secret).filter((b) => b.type === 'sluice.delivery.dead').length,
      1,
    );

    // Replayable like any delivery: the sink answers again, its dead delivery is replayed.
    await rcv.setDefault(rcv.path('sink'), 200);
    const replay = await box.api<{ count: number }>(
      'POST',
      `/v1/destinations/${sink.id}/replay`,
      { status: 'dead' },
      tenant.apiKey,
    );
    assert.deepEqual([replay.status, replay.body.count], [202, 1]);
    const again = await waitUntil(
      () => rcv.arrivals(rcv.path('sink')).find((a) => a.complete && a.status === 200),
      15_000,
      'the replayed sluice.delivery.dead at the sink',
    );
    new Webhook(sink.secret).verify(again.body, headersOf(again));
    assert.equal((JSON.parse(again.body) as Body).destinationId, bad.id);
  });
});
