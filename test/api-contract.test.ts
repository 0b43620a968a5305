/**
 * The contract (docs/api.md), endpoint by endpoint, through `@sluice/client`: each answer's
 * status, its exact shape (the server's own zod schema parses it to itself: no field
 * missing, none extra) and its values. The last test checks every route was called.
 */

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { catalogContract, contract, lifecycleContract, portalContract, sentContract } from '@sluice/api';
import type {
  CreateDestinationInput,
  DeliveryWithAttempts,
  DestinationWithSecret,
  TenantWithKey,
  UpdateDestinationInput,
} from '@sluice/client';
import type { z } from 'zod';
import { collect, fileBox, ROUTES, rejectsWith, template } from './helpers/client.ts';
import { waitUntil } from './helpers/sluice.ts';

const get = fileBox();

/** `value` has exactly the schema's shape: parsing keeps every field and adds none. */
function assertShape(schema: z.ZodType, value: unknown, what: string): void {
  const parsed = schema.safeParse(value);
  assert.ok(parsed.success, `${what}: ${parsed.error?.message}\n${JSON.stringify(value)}`);
  assert.deepEqual(parsed.data, value, `${what}: fields beyond the contract`);
}

function assertStatus(status: number, what: string): void {
  const last = get().last();
  assert.equal(last.status, status, `${what}: ${last.method} ${last.path}`);
}

const near = (iso: string, ms: number, slackMs: number, what: string) => {
  const at = Date.parse(iso);
  assert.ok(
    Math.abs(at - ms) <= slackMs,
    `${what}: ${iso} is not within ${slackMs} ms of ${new Date(ms).toISOString()}`,
  );
};

const id = (prefix: string) => new RegExp(`^${prefix}_[0-9a-z]{26}$`);
const RATE = { limit: 50, period: 'second' } as const;
const FULL = {
  name: 'orders',
  rateLimit: { limit: 20, period: 'minute', burst: 40 },
  maxConcurrency: 10,
  adaptive: true,
  ordering: 'fifo',
  eventTypes: ['order.*', 'invoice.paid'],
  retry: { maxAttempts: 8, initialDelayMs: 5_000, maxDelayMs: 3_600_000 },
  timeoutMs: 15_000,
  headers: { 'X-Partner': 'acme' },
  auth: { type: 'basic', username: 'acme', password: 'pw-contract' },
  secret: `whsec_${Buffer.from('0123456789abcdef0123456789abcdef').toString('base64')}`,
} satisfies Omit<CreateDestinationInput, 'url'>;

describe('tenants', () => {
  let created: TenantWithKey;

  it('POST /v1/tenants → 201 with the API key, once', async () => {
    const before = Date.now();
    created = await get().admin.tenants.create({ name: 'acme' });
    assertStatus(201, 'create tenant');
    assertShape(contract.TenantWithKey, created, 'tenant');
    assert.match(created.id, id('ten'));
    assert.equal(created.name, 'acme');
    assert.match(created.apiKey, /^sk_[A-Za-z0-9_-]{43}$/, 'a 256-bit key');
    near(created.createdAt, before, 5_000, 'createdAt');
  });

  it('the API key is stored only as a hash: nothing in the store holds the key', async () => {
    const rows = await get().query<Record<string, unknown>>('SELECT * FROM tenants WHERE id = ?', [
      created.id,
    ]);
    assert.equal(rows.length, 1);
    const stored = JSON.stringify(rows[0]);
    assert.ok(!stored.includes(created.apiKey), `the key is stored as given: ${stored}`);
    assert.ok(!stored.includes(created.apiKey.slice(3)), 'the key is stored without its prefix');
    assert.match(String(rows[0]?.api_key_hash), /^[0-9a-f]{64}$|^[A-Za-z0-9+/_-]{43,}=*$/, 'a hash');
  });

  it('GET /v1/tenants → 200, newest first, no keys', async () => {
    const other = await get().admin.tenants.create({ name: 'globex' });
    const page = await get().admin.tenants.list();
    assertStatus(200, 'list tenants');
    assertShape(contract.listOf(contract.Tenant), page, 'tenant list');
    assert.deepEqual(
      page.data.slice(0, 2).map((t) => t.id),
      [other.id, created.id],
    );
    assert.equal(page.nextCursor, null);
    assert.ok(!JSON.stringify(page).includes(created.apiKey), 'a key is shown once only');
    const first = await get().admin.tenants.list({ limit: 1 });
    assert.equal(first.data.length, 1);
    assert.equal(typeof first.nextCursor, 'string');
  });

  it('GET /v1/tenants/:id → 200 without the key; unknown → 404', async () => {
    const tenant = await get().admin.tenants.get(created.id);
    assertStatus(200, 'get tenant');
    assertShape(contract.Tenant, tenant, 'tenant');
    const { apiKey: _, ...expected } = created;
    assert.deepEqual(tenant, expected);
    await rejectsWith(get().admin.tenants.get(`ten_${'0'.repeat(26)}`), 404, 'not_found');
  });

  it('PATCH /v1/tenants/:id → 200 with the quotas named changed, the others kept; tenant key → 403', async () => {
    const patched = await get().admin.tenants.update(created.id, { quota: { pendingEvents: 1_000_000 } });
    assertStatus(200, 'patch tenant');
    assertShape(contract.Tenant, patched, 'tenant');
    assert.deepEqual(patched.quota, { eventsPerSecond: null, pendingEvents: 1_000_000 });
    assert.equal(patched.name, 'acme');
    const back = await get().admin.tenants.update(created.id, { quota: { pendingEvents: null } });
    assert.deepEqual(back.quota, { eventsPerSecond: null, pendingEvents: null });
    await rejectsWith(
      get().client(created.apiKey).tenants.update(created.id, { name: 'mine' }),
      403,
      'forbidden',
    );
    await rejectsWith(get().admin.tenants.update(`ten_${'0'.repeat(26)}`, { name: 'x' }), 404, 'not_found');
  });
});

describe('destinations', () => {
  let full: DestinationWithSecret;
  let minimal: DestinationWithSecret;
  const api = () => get().client(tenantKey);
  let tenantKey = '';

  it('POST /v1/destinations → 201 with every field given, secret included', async () => {
    tenantKey = (await get().tenant('dest')).tenant.apiKey;
    const before = Date.now();
    full = await api().destinations.create({ ...FULL, url: get().rcv.url('full') });
    assertStatus(201, 'create destination');
    assertShape(contract.DestinationWithSecret, full, 'destination');
    assert.match(full.id, id('dst'));
    const { secret, ...given } = FULL;
    assert.deepEqual(
      { ...full, id: '', tenantId: '', createdAt: '', updatedAt: '' },
      {
        ...given,
        // The credential without its secret.
        auth: { type: 'basic', username: 'acme' },
        tls: null,
        filter: null,
        transform: null,
        id: '',
        tenantId: '',
        url: get().rcv.url('full'),
        state: 'active',
        disabledReason: null,
        health: {
          state: 'healthy',
          since: null,
          consecutiveFailures: 0,
          nextProbeAt: null,
          lastErrorClass: null,
          suspendReason: null,
          failureRate: null,
          certificateExpiresAt: null,
        },
        secret,
        createdAt: '',
        updatedAt: '',
      },
    );
    near(full.createdAt, before, 5_000, 'createdAt');
    assert.equal(full.updatedAt, full.createdAt);
  });

  it('POST /v1/destinations with url and rateLimit only → the defaults, a generated secret', async () => {
    minimal = await api().destinations.create({ url: get().rcv.url('minimal'), rateLimit: RATE });
    assertStatus(201, 'create destination');
    assertShape(contract.DestinationWithSecret, minimal, 'destination');
    assert.equal(minimal.name, null);
    assert.equal(minimal.maxConcurrency, null);
    assert.equal(minimal.ordering, 'none');
    assert.deepEqual(minimal.eventTypes, ['*']);
    assert.equal(minimal.timeoutMs, 15_000);
    assertShape(contract.RetryPolicy, minimal.retry, 'default retry');
    assert.match(minimal.secret, /^whsec_[A-Za-z0-9+/]+=*$/);
    assert.ok(
      Buffer.from(minimal.secret.slice(6), 'base64').length >= 24,
      'a generated secret has ≥ 192 bits',
    );
    assert.notEqual(minimal.secret, full.secret);
  });

  it('GET /v1/destinations → 200, newest first, no secrets', async () => {
    const page = await api().destinations.list();
    assertStatus(200, 'list destinations');
    assertShape(contract.listOf(contract.Destination), page, 'destination list');
    assert.deepEqual(
      page.data.map((d) => d.id),
      [minimal.id, full.id],
    );
    assert.equal(page.nextCursor, null);
    const { secret: _, ...expected } = full;
    assert.deepEqual(page.data[1], expected);
  });

  it('GET /v1/destinations/:id → 200, no secret', async () => {
    const d = await api().destinations.get(full.id);
    assertStatus(200, 'get destination');
    assertShape(contract.Destination, d, 'destination');
    const { secret: _, ...expected } = full;
    assert.deepEqual(d, expected);
  });

  it('PATCH /v1/destinations/:id → 200 with the fields changed, the others kept', async () => {
    const patch = {
      name: 'orders-v2',
      rateLimit: { limit: 7, period: 'second' },
      maxConcurrency: null,
      adaptive: false,
      ordering: 'none',
      eventTypes: ['order.paid'],
      timeoutMs: 2_000,
      retry: { maxAttempts: 2, initialDelayMs: 100, maxDelayMs: 1_000 },
      headers: null,
      auth: { type: 'bearer', token: 'tok-contract' },
      secret: `whsec_${Buffer.from('fedcba9876543210fedcba9876543210').toString('base64')}`,
    } satisfies UpdateDestinationInput;
    const d = await api().destinations.update(full.id, patch);
    assertStatus(200, 'update destination');
    assertShape(contract.Destination, d, 'destination');
    const { secret: _, ...fields } = patch;
    assert.deepEqual(
      { ...d, updatedAt: '' },
      {
        ...fields,
        headers: {},
        auth: { type: 'bearer' },
        tls: null,
        filter: null,
        transform: null,
        ...pickKept(full),
        updatedAt: '',
      },
    );
    assert.ok(Date.parse(d.updatedAt) >= Date.parse(full.updatedAt));
    assert.deepEqual(await api().destinations.get(full.id), d, 'the change is stored');
    const renamed = await api().destinations.update(full.id, { name: null });
    assert.equal(renamed.name, null);
    assert.equal(renamed.timeoutMs, 2_000);
  });

  it('GET /v1/destinations/:id/health → 200 with the breaker state and its transitions', async () => {
    const health = await api().destinations.health(minimal.id, { limit: 5 });
    assertStatus(200, 'health');
    assertShape(contract.HealthWithTransitions, health, 'health');
    assert.deepEqual(health, {
      state: 'healthy',
      since: null,
      consecutiveFailures: 0,
      nextProbeAt: null,
      lastErrorClass: null,
      suspendReason: null,
      failureRate: null,
      certificateExpiresAt: null,
      transitions: [],
    });
  });

  it('POST /v1/destinations/:id/pause and /resume → 200 with the state', async () => {
    const paused = await api().destinations.pause(minimal.id);
    assertStatus(200, 'pause');
    assertShape(contract.Destination, paused, 'destination');
    assert.equal(paused.state, 'paused');
    assert.equal((await api().destinations.get(minimal.id)).state, 'paused');
    const resumed = await api().destinations.resume(minimal.id);
    assertStatus(200, 'resume');
    assert.equal(resumed.state, 'active');
    assert.equal(resumed.disabledReason, null);
  });

  it('POST /v1/destinations/:id/rotate-secret → 200, a new secret; the old expires in 24 h', async () => {
    const before = Date.now();
    const rotated = await api().destinations.rotateSecret(minimal.id);
    assertStatus(200, 'rotate');
    assertShape(contract.RotatedSecret, rotated, 'rotated secret');
    assert.match(rotated.secret, /^whsec_[A-Za-z0-9+/]+=*$/);
    assert.notEqual(rotated.secret, minimal.secret);
    assert.ok(rotated.previousSecretExpiresAt !== null);
    near(rotated.previousSecretExpiresAt, before + 24 * 3_600_000, 5_000, 'previousSecretExpiresAt');

    const secrets = await api().destinations.secret(minimal.id);
    assertStatus(200, 'secret');
    assertShape(contract.DestinationSecrets, secrets, 'destination secrets');
    assert.deepEqual(secrets, {
      secret: rotated.secret,
      previous: [{ secret: minimal.secret, expiresAt: rotated.previousSecretExpiresAt }],
    });
    const read = await api().destinations.get(minimal.id);
    assert.ok(!JSON.stringify(read).includes(rotated.secret), 'a read of the destination never holds it');
  });

  it('POST /v1/destinations/:id/replay → 202 with the count of dead deliveries put back', async () => {
    const rcv = get().rcv;
    await rcv.setDefault(rcv.path('dies'), 500);
    const dies = await api().destinations.create({
      url: rcv.url('dies'),
      rateLimit: RATE,
      retry: { maxAttempts: 1, initialDelayMs: 0, maxDelayMs: 0 },
    });
    const none = await api().destinations.replay(dies.id);
    assertStatus(202, 'replay');
    assertShape(contract.Count, none, 'count');
    assert.deepEqual(none, { count: 0 });
    const accepted = await api().events.send({ type: 'a.b', payload: {}, destinationId: dies.id });
    const dlv = accepted.deliveries[0]!.id;
    await waitUntil(
      async () => (await api().deliveries.get(dlv)).status === 'dead',
      15_000,
      'a dead delivery',
    );
    await rcv.setDefault(rcv.path('dies'), 200);
    assert.deepEqual(await api().destinations.replay(dies.id, { status: 'dead' }), { count: 1 });
    assertStatus(202, 'replay');
    const d = await waitUntil(
      async () => {
        const found = await api().deliveries.get(dlv);
        return found.status === 'delivered' ? found : undefined;
      },
      15_000,
      'the replayed delivery to be delivered',
    );
    assert.deepEqual(
      d.attempts.map((a) => a.statusCode),
      [500, 200],
    );
  });

  it('GET /v1/destinations/:id/stats → 200: backlog, outcomes, the audit', async () => {
    const rcv = get().rcv;
    const dest = await api().destinations.create({
      url: rcv.url('stats'),
      rateLimit: { limit: 3, period: 'second' },
    });
    const sent = await api().events.sendBatch(
      Array.from({ length: 4 }, (_, n) => ({ type: 'stats.x', payload: { n }, destinationId: dest.id })),
    );
    const ids = sent.data.map((e) => e.id);
    await rcv.waitFor(
      () => ids.every((e) => rcv.deliveredIds(rcv.path('stats')).has(e)),
      15_000,
      '4 deliveries',
    );
    const stats = await waitUntil(
      async () => {
        const s = await api().destinations.stats(dest.id, { seconds: 60 });
        return s.delivered === 4 ? s : undefined;
      },
      10_000,
      'delivered: 4',
    );
    assertStatus(200, 'stats');
    assertShape(contract.Stats, stats, 'stats');
    assert.deepEqual(stats.rateLimit, { limit: 3, period: 'second' });
    assert.equal(stats.state, 'active');
    assert.equal(stats.pending, 0);
    assert.equal(stats.dead, 0);
    assert.equal(stats.oldestPendingAgeMs, 0);
    assert.equal(stats.maxSentInAnyWindow, 3, 'four requests at 3/s: at most three in any second, and three');
    assert.equal(stats.bucketRefusals, null, 'no burst: no bucket audit');
    assert.equal(stats.effectiveLimit, 3, 'not adaptive: the configured limit');
    assert.equal(stats.backingOff, false);
    assert.ok(
      stats.perSecond.length >= 60 && stats.perSecond.length <= 62,
      `${stats.perSecond.length} buckets`,
    );
    assert.equal(
      stats.perSecond.reduce((n, b) => n + b.sent, 0),
      4,
    );
    const times = stats.perSecond.map((b) => Date.parse(b.t));
    for (let i = 1; i < times.length; i++) assert.equal(times[i]! - times[i - 1]!, 1_000);
    const fallback = await api().destinations.stats(dest.id);
    assert.ok(fallback.perSecond.length >= 300, 'seconds defaults to 300');
  });

  it('GET /v1/destinations/stats → 200: every destination with its backlog and outcomes', async () => {
    const rcv = get().rcv;
    const held = await api().destinations.create({ url: rcv.url('held'), rateLimit: RATE });
    await api().destinations.pause(held.id);
    const before = Date.now();
    await api().events.sendBatch(
      [0, 1].map((n) => ({ type: 'held.x', payload: { n }, destinationId: held.id })),
    );
    await new Promise((resolve) => setTimeout(resolve, 50));
    const page = await api().destinations.overview({ limit: 500 });
    assertStatus(200, 'overview');
    assertShape(contract.listOf(contract.DestinationOverview), page, 'overview');
    const ids = page.data.map((d) => d.id);
    assert.deepEqual(ids, [...ids].sort().reverse(), 'newest first');
    const mine = (await api().destinations.list({ limit: 500 })).data.map((d) => d.id);
    assert.deepEqual(ids, mine, 'the same destinations as the list');
    const entry = page.data.find((d) => d.id === held.id);
    assert.equal(entry?.state, 'paused');
    assert.deepEqual(
      { ...entry?.stats, oldestPendingAgeMs: 0 },
      {
        pending: 2,
        queued: 0,
        inFlight: 0,
        effectiveLimit: entry?.rateLimit.limit,
        backingOff: false,
        oldestPendingAgeMs: 0,
        delivered: 0,
        dead: 0,
      },
    );
    assert.ok((entry?.stats.oldestPendingAgeMs ?? 0) >= 40, 'the oldest pending has waited');
    assert.ok((entry?.stats.oldestPendingAgeMs ?? 0) <= Date.now() - before + 1_000);
    const delivered = page.data.find((d) => d.url === rcv.url('stats'));
    assert.equal(delivered?.stats.delivered, 4, 'the stats destination delivered 4 in the last hour');
    await rejectsWith(api().destinations.overview({ seconds: 0 }), 400, 'validation_failed', 'seconds: 0');
    const first = await api().destinations.overview({ limit: 1 });
    assert.deepEqual(
      first.data.map((d) => d.id),
      [ids[0]],
    );
    assert.deepEqual(
      (await api().destinations.overview({ limit: 1, cursor: first.nextCursor ?? '' })).data.map((d) => d.id),
      [ids[1]],
    );
    // The admin token sees every tenant's; another tenant none of these.
    const everyone = await get().admin.destinations.overview({ limit: 500 });
    assert.ok(everyone.data.some((d) => d.id === held.id));
    const { api: stranger } = await get().tenant('stranger');
    assert.deepEqual((await stranger.destinations.overview()).data, []);
  });

  it('DELETE /v1/destinations/:id → 204; then 404 and gone from the list', async () => {
    const gone = await api().destinations.create({ url: get().rcv.url('gone'), rateLimit: RATE });
    assert.equal(await api().destinations.delete(gone.id), undefined);
    assertStatus(204, 'delete');
    await rejectsWith(api().destinations.get(gone.id), 404, 'not_found', 'get after delete');
    const all = await collect(api().destinations.listAll());
    assert.ok(!all.some((d) => d.id === gone.id));
    await rejectsWith(api().destinations.delete(gone.id), 404, 'not_found', 'delete twice');
  });
});

/** The fields a PATCH of everything but these leaves alone. */
function pickKept(d: DestinationWithSecret) {
  return {
    id: d.id,
    tenantId: d.tenantId,
    url: d.url,
    state: d.state,
    disabledReason: d.disabledReason,
    health: d.health,
    createdAt: d.createdAt,
  };
}

describe('events and deliveries', () => {
  let key = '';
  const api = () => get().client(key);
  let orders: DestinationWithSecret;
  let all: DestinationWithSecret;
  /** Paused: takes the bulk events without sending them. */
  let parked: DestinationWithSecret;

  it('POST /v1/events → 202: the event and one delivery per destination', async () => {
    key = (await get().tenant('events')).tenant.apiKey;
    const rcv = get().rcv;
    orders = await api().destinations.create({
      url: rcv.url('orders'),
      rateLimit: RATE,
      eventTypes: ['order.*'],
    });
    all = await api().destinations.create({ url: rcv.url('all'), rateLimit: RATE });
    parked = await api().destinations.create({
      url: rcv.url('parked'),
      rateLimit: RATE,
      eventTypes: ['parked'],
    });
    await api().destinations.pause(parked.id);
    const named = await api().events.send({
      type: 'order.paid',
      payload: { n: 1 },
      destinationId: orders.id,
    });
    assertStatus(202, 'send');
    assertShape(contract.AcceptedEvent, named, 'accepted');
    assert.match(named.id, id('evt'));
    assert.equal(named.deliveries.length, 1);
    assert.match(named.deliveries[0]!.id, id('dlv'));
    assert.equal(named.deliveries[0]!.destinationId, orders.id);

    const fanned = await api().events.send({ type: 'order.paid', payload: { n: 2 } });
    assert.deepEqual(fanned.deliveries.map((d) => d.destinationId).sort(), [orders.id, all.id].sort());
    const other = await api().events.send({ type: 'user.created', payload: { n: 3 } });
    assert.deepEqual(
      other.deliveries.map((d) => d.destinationId),
      [all.id],
    );
    const both = await api().events.send({ type: 'x', payload: null, destinationIds: [orders.id, all.id] });
    assert.deepEqual(both.deliveries.map((d) => d.destinationId).sort(), [orders.id, all.id].sort());
  });

  it('POST /v1/events/batch → 202: one result per event, in order', async () => {
    const events = Array.from({ length: 25 }, (_, n) => ({
      type: 'batch.item',
      payload: { n },
      destinationId: n % 2 === 0 ? orders.id : all.id,
    }));
    const batch = await api().events.sendBatch(events);
    assertStatus(202, 'batch');
    assertShape(contract.AcceptedEventBatch, batch, 'batch');
    assert.equal(batch.data.length, 25);
    assert.equal(new Set(batch.data.map((e) => e.id)).size, 25);
    for (const [n, result] of batch.data.entries()) {
      assert.deepEqual(
        result.deliveries.map((d) => d.destinationId),
        [events[n]!.destinationId],
      );
    }
    for (const n of [0, 13, 24]) {
      assert.deepEqual((await api().events.get(batch.data[n]!.id)).payload, { n }, `event ${n} in order`);
    }
    const max = await api().events.sendBatch(
      Array.from({ length: 1_000 }, (_, n) => ({ type: 't', payload: n, destinationId: parked.id })),
    );
    assert.equal(max.data.length, 1_000, 'a batch of 1,000 is accepted');
  });

  it('GET /v1/events/:id → 200: type, payload, key, its deliveries', async () => {
    const payload = {
      order: 'ord_1',
      total: 42.5,
      items: [{ sku: 'a', qty: 2 }],
      note: 'déjà vu ✓',
      nil: null,
    };
    const sent = await api().events.send({
      type: 'order.created',
      payload,
      idempotencyKey: 'k-1',
      destinationId: orders.id,
    });
    const event = await api().events.get(sent.id);
    assertStatus(200, 'get event');
    assertShape(contract.Event, event, 'event');
    assert.equal(event.id, sent.id);
    assert.equal(event.type, 'order.created');
    assert.deepEqual(event.payload, payload);
    assert.equal(event.idempotencyKey, 'k-1');
    assert.deepEqual(
      event.deliveries.map((d) => [d.id, d.destinationId, d.eventId]),
      sent.deliveries.map((d) => [d.id, d.destinationId, sent.id]),
    );
    await rejectsWith(api().events.get(`evt_${'0'.repeat(26)}`), 404, 'not_found');
  });

  it('payloads over 256 KiB and bodies over 8 MiB → 413 payload_too_large', async () => {
    await rejectsWith(
      api().events.send({ type: 'big', payload: 'x'.repeat(256 * 1024 + 1), destinationId: parked.id }),
      413,
      'payload_too_large',
    );
    await api().events.send({ type: 'big', payload: 'x'.repeat(256 * 1024 - 2), destinationId: parked.id });
    const chunk = 'y'.repeat(200 * 1024);
    await rejectsWith(
      api().events.sendBatch(
        Array.from({ length: 45 }, () => ({ type: 'big', payload: chunk, destinationId: parked.id })),
      ),
      413,
      'payload_too_large',
    );
  });

  it('GET /v1/deliveries/:id → 200 with its attempts', async () => {
    const sent = await api().events.send({ type: 'order.shipped', payload: { a: 1 }, destinationId: all.id });
    const dlv = sent.deliveries[0]!.id;
    const d = await waitUntil(
      async () => {
        const found = await api().deliveries.get(dlv);
        return found.status === 'delivered' ? found : undefined;
      },
      15_000,
      'the delivery',
    );
    assertStatus(200, 'get delivery');
    assertShape(contract.DeliveryWithAttempts, d, 'delivery');
    assert.equal(d.eventId, sent.id);
    assert.equal(d.destinationId, all.id);
    assert.equal(d.attemptCount, 1);
    assert.equal(d.nextAttemptAt, null);
    assert.equal(d.lastError, null);
    assert.equal(d.attempts.length, 1);
    const [a] = d.attempts as [DeliveryWithAttempts['attempts'][number]];
    assert.match(a.id, id('att'));
    assert.equal(a.attempt, 1);
    assert.equal(a.statusCode, 200);
    assert.equal(a.errorCode, null);
    assert.ok(a.latencyMs >= 0);
    assert.ok(Date.parse(a.startedAt) <= Date.parse(a.finishedAt));
    assert.equal(Date.parse(a.finishedAt) - Date.parse(a.startedAt), a.latencyMs);
    await rejectsWith(api().deliveries.get(`dlv_${'0'.repeat(26)}`), 404, 'not_found');
  });

  it('GET /v1/deliveries → 200, newest first, filtered by destination, event, status and since', async () => {
    const page = await api().deliveries.list({ limit: 500 });
    assertStatus(200, 'list deliveries');
    assertShape(contract.listOf(contract.Delivery), page, 'delivery list');
    const ids = page.data.map((d) => d.id);
    assert.deepEqual(ids, [...ids].sort().reverse(), 'newest first');
    const mine = await collect(api().deliveries.listAll({ destinationId: all.id, limit: 7 }));
    assert.ok(mine.length > 0 && mine.every((d) => d.destinationId === all.id));
    const sent = await api().events.send({ type: 'order.x', payload: 1 });
    const byEvent = await api().deliveries.list({ eventId: sent.id });
    assert.deepEqual(byEvent.data.map((d) => d.id).sort(), sent.deliveries.map((d) => d.id).sort());
    const delivered = await collect(api().deliveries.listAll({ status: 'delivered', limit: 500 }));
    assert.ok(delivered.length > 0 && delivered.every((d) => d.status === 'delivered'));
    const future = new Date(Date.now() + 60_000).toISOString();
    assert.deepEqual(
      (await api().deliveries.list({ since: future })).data,
      [],
      'since: last changed at or after',
    );
    const recent = await collect(
      api().deliveries.listAll({ since: new Date(Date.now() - 60_000).toISOString() }),
    );
    assert.ok(recent.length > 0 && recent.every((d) => Date.parse(d.updatedAt) >= Date.now() - 61_000));
    const both = await api().deliveries.list({ eventId: sent.id, destinationId: orders.id });
    assert.deepEqual(
      both.data.map((d) => d.destinationId),
      [orders.id],
    );
  });

  it('POST /v1/deliveries/:id/retry → 202 for a dead one; 409 for a delivered one', async () => {
    const rcv = get().rcv;
    await rcv.setDefault(rcv.path('retry'), 500);
    const dest = await api().destinations.create({
      url: rcv.url('retry'),
      rateLimit: RATE,
      retry: { maxAttempts: 1, initialDelayMs: 0, maxDelayMs: 0 },
    });
    const sent = await api().events.send({ type: 'r', payload: {}, destinationId: dest.id });
    const dlv = sent.deliveries[0]!.id;
    await waitUntil(async () => (await api().deliveries.get(dlv)).status === 'dead', 15_000, 'dead');
    await rcv.setDefault(rcv.path('retry'), 200);
    const retried = await api().deliveries.retry(dlv);
    assertStatus(202, 'retry');
    assertShape(contract.Delivery, retried, 'delivery');
    assert.equal(retried.id, dlv);
    assert.equal(retried.status, 'pending');
    await waitUntil(
      async () => (await api().deliveries.get(dlv)).status === 'delivered',
      15_000,
      'delivered',
    );
    const conflict = await rejectsWith(api().deliveries.retry(dlv), 409, 'conflict', 'retry a delivered one');
    assert.deepEqual(conflict.details, { status: 'delivered' });
  });
});

describe('alerts', () => {
  it('GET /v1/alerts → 200: the backlog alerts firing (none here; test/alerts.test.ts raises some)', async () => {
    const alerts = await get().client(get().adminToken).alerts.list();
    assertStatus(200, 'alerts');
    assert.deepEqual(alerts, []);
    assertShape(contract.AlertList, { data: alerts }, 'alert list');
  });
});

describe('event types', () => {
  it('POST, GET, PATCH and DELETE /v1/event-types: the catalog, the built-in types included', async () => {
    const admin = get().client(get().adminToken);
    const before = Date.now();
    const schema = { type: 'object', required: ['amount'], properties: { amount: { type: 'integer' } } };
    const created = await admin.eventTypes.create({
      name: 'contract.paid',
      description: 'Paid.',
      schema,
      example: { amount: 1 },
    });
    assertStatus(201, 'create event type');
    assertShape(catalogContract.EventType, created, 'event type');
    assert.equal(created.builtIn, false);
    near(created.createdAt ?? '', before, 5_000, 'createdAt');
    const page = await get().admin.eventTypes.list({ limit: 500 });
    assertStatus(200, 'list event types');
    assertShape(catalogContract.EventTypeList, page, 'event type list');
    const names = page.data.map((t) => t.name);
    assert.ok(names.includes('contract.paid') && names.includes('sluice.delivery.dead'), names.join());
    assert.deepEqual(names, [...names].sort(), 'by name');
    const dead = await get().admin.eventTypes.get('sluice.delivery.dead');
    assertStatus(200, 'get a built-in event type');
    assertShape(catalogContract.EventType, dead, 'built-in event type');
    const patched = await admin.eventTypes.update('contract.paid', { description: 'Paid, really.' });
    assertStatus(200, 'patch event type');
    assert.equal(patched.description, 'Paid, really.');
    assert.deepEqual(patched.schema, schema);
    await rejectsWith(admin.eventTypes.delete('sluice.test'), 409, 'conflict', 'delete a built-in type');
    await admin.eventTypes.delete('contract.paid');
    assertStatus(204, 'delete event type');
    await rejectsWith(get().admin.eventTypes.get('contract.paid'), 404, 'not_found', 'a deleted type');
  });
});

describe("tenants' keys, their deletion and the event log", () => {
  it('keys: POST → 201 (shown once), GET → 200 (never the key), DELETE → 204 then 401; the last → 409', async () => {
    const { tenant } = await get().tenant('keys');
    const admin = get().admin;
    const created = await admin.tenants.createKey(tenant.id);
    assertStatus(201, 'create key');
    assertShape(lifecycleContract.CreatedKey, created, 'created key');
    assert.match(created.id, id('key'));
    const keys = await admin.tenants.listKeys(tenant.id);
    assertStatus(200, 'list keys');
    assertShape(lifecycleContract.TenantKeyList, { data: keys }, 'key list');
    assert.deepEqual(
      keys.map((k) => k.prefix),
      [tenant.apiKey.slice(0, 11), created.apiKey.slice(0, 11)],
    );
    assert.ok(!JSON.stringify(keys).includes(created.apiKey.slice(11)), 'never the key');
    await admin.tenants.deleteKey(tenant.id, keys[0]?.id ?? '');
    assertStatus(204, 'delete key');
    await rejectsWith(get().client(tenant.apiKey).destinations.list(), 401, 'unauthorized', 'a deleted key');
    await rejectsWith(admin.tenants.deleteKey(tenant.id, created.id), 409, 'conflict', 'the last key');
  });

  it('DELETE /v1/tenants/:id → 204: its key refused, its destinations gone; then 404', async () => {
    const { tenant, api } = await get().tenant('doomed');
    const destination = await api.destinations.create({
      url: get().rcv.url('doomed'),
      rateLimit: { limit: 1, period: 'second' },
    });
    await get().admin.tenants.delete(tenant.id);
    assertStatus(204, 'delete tenant');
    await rejectsWith(api.destinations.list(), 401, 'unauthorized', "a deleted tenant's key");
    await rejectsWith(get().admin.destinations.get(destination.id), 404, 'not_found', 'its destination');
    await rejectsWith(get().admin.tenants.get(tenant.id), 404, 'not_found', 'the tenant');
  });

  it("GET /v1/events → 200: the tenant's events newest first, by type prefix", async () => {
    const { tenant, api } = await get().tenant('log');
    const destination = await api.destinations.create({
      url: get().rcv.url('log'),
      rateLimit: { limit: 1, period: 'second' },
    });
    await api.destinations.pause(destination.id);
    const sent = [];
    for (const type of ['order.created', 'invoice.sent', 'order.paid']) {
      sent.push((await api.events.send({ type, payload: { type }, destinationId: destination.id })).id);
    }
    const page = await api.events.list({ type: 'order.*' });
    assertStatus(200, 'event log');
    assertShape(contract.listOf(lifecycleContract.LoggedEvent), page, 'event log');
    assert.deepEqual(
      page.data.map((e) => e.id),
      [sent[2], sent[0]],
    );
    // No payload in a page, its size instead: `events.get` reads it.
    assert.ok(page.data.every((e) => !('payload' in e)));
    assert.deepEqual(
      page.data.map((e) => e.payloadBytes),
      ['order.paid', 'order.created'].map((type) => JSON.stringify({ type }).length),
    );
    const all = await collect(get().admin.forTenant(tenant.id).events.listAll({ limit: 1 }));
    assert.deepEqual(
      all.map((e) => e.id),
      [...sent].reverse(),
    );
  });
});

describe('who am I', () => {
  it('GET /v1/whoami → 200: the role and the tenant of the token', async () => {
    const admin = await get().admin.whoami();
    assertStatus(200, 'whoami');
    assertShape(portalContract.Whoami, admin, 'whoami');
    assert.deepEqual(admin, { role: 'admin', tenant: null, portal: null });
    const { api, tenant } = await get().tenant('whoami');
    assert.deepEqual(await api.whoami(), {
      role: 'tenant',
      tenant: { id: tenant.id, name: tenant.name },
      portal: null,
    });
  });
});

describe('the portal', () => {
  it('POST /v1/destinations/:id/test → 202: a sluice.test event to that destination only', async () => {
    const { api } = await get().tenant('test-event');
    const destination = await api.destinations.create({ url: get().rcv.url('test-event'), rateLimit: RATE });
    await api.destinations.pause(destination.id);
    const accepted = await api.destinations.test(destination.id);
    assertStatus(202, 'test event');
    assertShape(contract.AcceptedEvent, accepted, 'test event');
    assert.deepEqual(
      accepted.deliveries.map((d) => d.destinationId),
      [destination.id],
    );
    assert.equal((await api.events.get(accepted.id)).type, 'sluice.test');
  });

  it('POST /v1/destinations/:id/preview → 200: what it would send, nothing sent', async () => {
    const { api } = await get().tenant('preview');
    const destination = await api.destinations.create({
      url: get().rcv.url('preview'),
      rateLimit: RATE,
      transform: { code: 'function handler(w) { return { payload: { wrapped: w.payload } } }' },
    });
    const preview = await api.destinations.preview(destination.id, { type: 'order.paid', payload: { n: 1 } });
    assertStatus(200, 'preview');
    assertShape(sentContract.Preview, preview, 'preview');
    assert.deepEqual(preview.request?.body, { wrapped: { n: 1 } });
  });

  it('POST, GET and DELETE /v1/portal-links: 201 with the token once, 200 without it, 204; the token then 401', async () => {
    const { api, tenant } = await get().tenant('portal');
    const created = await api.portalLinks.create({ access: 'read', branding: { title: 'Acme' } });
    assertStatus(201, 'create link');
    assertShape(portalContract.CreatedPortalLink, created, 'created link');
    assert.match(created.id, id('prt'));
    assert.equal(created.url, `${get().url}/portal/#token=${created.token}`);
    const page = await api.portalLinks.list();
    assertStatus(200, 'list links');
    assertShape(contract.listOf(portalContract.PortalLink), page, 'links');
    assert.deepEqual(
      page.data.map((l) => [l.id, l.tenantId, l.access, l.expired]),
      [[created.id, tenant.id, 'read', false]],
    );
    const portal = get().client(created.token);
    assert.equal((await portal.whoami()).role, 'portal');
    await api.portalLinks.revoke(created.id);
    assertStatus(204, 'revoke link');
    await rejectsWith(portal.whoami(), 401, 'unauthorized', 'a revoked link');
  });
});

describe('coverage', () => {
  it('every route of the API was called above', () => {
    const called = new Set(get().calls.map((c) => `${c.method} ${template(c.path)}`));
    assert.deepEqual(
      ROUTES.filter((r) => !called.has(r)),
      [],
    );
  });
});
