/**
 * Backlog alerts (docs/adr/0009-backlog-alerts.md), in both shapes: a destination whose backlog passes a
 * threshold raises one alert — a signed webhook to the operator's URL (verified with the
 * Standard Webhooks library), the firing gauge, `GET /v1/alerts` — and is not raised again
 * while it fires; once the backlog drains, one `resolved` webhook. The alert webhooks go
 * through Sluice itself, so they keep their own rate limit; the operator's URL is trusted
 * configuration (no SSRF guard), tenants' URLs are not. In the distributed shape, three
 * rate-limiter processes evaluate at once and still raise and resolve each alert once.
 */

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Webhook } from 'standardwebhooks';
import { type Cluster, startCluster } from './helpers/cluster.ts';
import { assertNoLeaks } from './helpers/leaks.ts';
import { metricValue, scrape } from './helpers/metrics.ts';
import type { Arrival, Receiver } from './helpers/receiver.ts';
import { sleep, startReceiver } from './helpers/receiver.ts';
import { SHAPE } from './helpers/shape.ts';
import {
  type Client,
  createDestination,
  createTenant,
  harness,
  notFound,
  postBatches,
  postEvents,
  type Tenant,
  waitUntil,
} from './helpers/sluice.ts';
import { worstWindow } from './helpers/window.ts';

const SECRET = `whsec_${Buffer.from('operator-alert-secret-0123456789').toString('base64')}`;
const OPS = '/d/ops';

interface AlertBody {
  type: string;
  kind: string;
  tenantId: string;
  destinationId: string;
  threshold: number;
  value: number;
  unit: string;
  raisedAt: string;
  resolvedAt: string | null;
}

interface FiringAlert {
  destinationId: string;
  tenantId: string;
  kind: string;
  threshold: number;
  value: number;
  raisedAt: string;
}

/** The body of an operator webhook, once its signature verified with the operator's secret. */
function verified(arrival: Arrival): AlertBody {
  const headers: Record<string, string> = {};
  for (const [k, v] of Object.entries(arrival.headers)) if (typeof v === 'string') headers[k] = v;
  new Webhook(SECRET).verify(arrival.body, headers); // throws on a bad signature
  const body = JSON.parse(arrival.body) as AlertBody;
  assert.equal(headers['webhook-event-type'], body.type);
  return body;
}

/** The verified alert webhooks the operator received, in arrival order. */
function received(rcv: Receiver): AlertBody[] {
  return rcv
    .arrivals(OPS)
    .filter((a) => a.complete)
    .map(verified);
}

/** The `SLUICE_ALERT_*` settings of a box whose alerts go to `rcv` (0: a kind off). */
const alertSettings = (
  rcv: Receiver,
  thresholds: { pendingCount: number; pendingAgeSeconds: number },
  limit = 10,
) => ({
  SLUICE_ALERT_PENDING_COUNT: thresholds.pendingCount,
  SLUICE_ALERT_PENDING_AGE_SECONDS: thresholds.pendingAgeSeconds,
  SLUICE_ALERT_INTERVAL_MS: 200,
  SLUICE_ALERT_URL: rcv.url('ops'),
  SLUICE_ALERT_SECRET: SECRET,
  SLUICE_ALERT_RATE_LIMIT: `${limit}/second`,
});

async function alertsOf(box: Api, token: string): Promise<FiringAlert[]> {
  const res = await box.api<{ data: FiringAlert[] }>('GET', '/v1/alerts', undefined, token);
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return res.body.data;
}

type Api = Client & { adminToken: string };

/** A paused destination holding `count` pending deliveries, accepted at once (one batch). */
async function parkedBacklog(box: Api, tenant: Tenant, url: string, count: number) {
  const dest = await createDestination(box, tenant.apiKey, {
    url,
    rateLimit: { limit: 50, period: 'second' },
  });
  const paused = await box.api('POST', `/v1/destinations/${dest.id}/pause`, undefined, tenant.apiKey);
  assert.equal(paused.status, 200, JSON.stringify(paused.body));
  await postBatches(
    box,
    tenant.apiKey,
    Array.from({ length: count }, (_, n) => ({ type: 'order.paid', destinationId: dest.id, payload: { n } })),
  );
  return dest;
}

describe('backlog alerts', () => {
  it('past the count threshold: one signed raised webhook, the gauge and the API; drained: one resolved', {
    timeout: 90_000,
  }, async (t) => {
    const { box, rcv } = await harness(t, (r) => alertSettings(r, { pendingCount: 5, pendingAgeSeconds: 0 }));
    const tenant = await createTenant(box, box.adminToken, 'acme');
    const other = await createTenant(box, box.adminToken, 'other');
    const dest = await parkedBacklog(box, tenant, rcv.url('d'), 12);

    await rcv.waitFor(() => received(rcv).length >= 1, 30_000, 'the raised webhook');
    const [raised] = received(rcv);
    assert.equal(raised?.type, 'sluice.backlog.raised');
    assert.equal(raised.kind, 'pending_count');
    assert.equal(raised.tenantId, tenant.id);
    assert.equal(raised.destinationId, dest.id);
    assert.equal(raised.threshold, 5);
    assert.equal(raised.value, 12, 'the real backlog, not the capped count');
    assert.equal(raised.unit, 'deliveries');
    assert.equal(raised.resolvedAt, null);

    // The API: the tenant and the admin see it; another tenant does not.
    const mine = await alertsOf(box, tenant.apiKey);
    assert.deepEqual(
      mine.map((a) => [a.destinationId, a.kind, a.threshold, a.value, a.raisedAt]),
      [[dest.id, 'pending_count', 5, 12, raised.raisedAt]],
    );
    assert.equal((await alertsOf(box, box.adminToken)).length, 1);
    assert.deepEqual(await alertsOf(box, other.apiKey), []);
    // The gauge, in any process's /metrics (it reads the store).
    const firing = await scrape(box.url);
    assert.equal(metricValue(firing, 'sluice_backlog_alerts_firing', { kind: 'pending_count' }), 1);
    assert.equal(metricValue(firing, 'sluice_backlog_alerts_firing', { kind: 'pending_age' }), 0);

    // Still over the threshold (more events come): never raised again.
    await postEvents(box, tenant.apiKey, [
      { type: 'order.paid', destinationId: dest.id, payload: { more: 1 } },
    ]);
    await sleep(1_500);
    assert.equal(received(rcv).length, 1, 'one webhook while the alert fires');

    // Drained: exactly one resolved webhook, and nothing firing.
    const resumed = await box.api('POST', `/v1/destinations/${dest.id}/resume`, undefined, tenant.apiKey);
    assert.equal(resumed.status, 200);
    await rcv.waitFor(() => received(rcv).length >= 2, 30_000, 'the resolved webhook');
    const resolved = received(rcv)[1];
    assert.equal(resolved?.type, 'sluice.backlog.resolved');
    assert.equal(resolved.kind, 'pending_count');
    assert.equal(resolved.destinationId, dest.id);
    assert.equal(resolved.raisedAt, raised.raisedAt);
    assert.ok(resolved.resolvedAt !== null && resolved.resolvedAt >= raised.raisedAt);
    assert.ok(resolved.value <= 2, `resolved at or below half the threshold (${resolved.value})`);
    await waitUntil(
      async () => (await alertsOf(box, box.adminToken)).length === 0,
      10_000,
      'no alert firing',
    );
    const after = await scrape(box.url);
    assert.equal(metricValue(after, 'sluice_backlog_alerts_firing', { kind: 'pending_count' }), 0);
    await sleep(1_000);
    assert.deepEqual(
      received(rcv).map((b) => b.type),
      ['sluice.backlog.raised', 'sluice.backlog.resolved'],
      'exactly one of each',
    );
    // Each webhook was delivered once (the operator answered 200): distinct webhook-ids.
    assert.equal(rcv.deliveredIds(OPS).size, 2);
  });

  it('past the age threshold: raised with the age in seconds', { timeout: 60_000 }, async (t) => {
    const { box, rcv } = await harness(t, (r) => alertSettings(r, { pendingCount: 0, pendingAgeSeconds: 1 }));
    const tenant = await createTenant(box, box.adminToken);
    const dest = await parkedBacklog(box, tenant, rcv.url('d'), 1);
    await rcv.waitFor(() => received(rcv).length >= 1, 30_000, 'the raised webhook');
    const [raised] = received(rcv);
    assert.equal(raised?.kind, 'pending_age');
    assert.equal(raised.destinationId, dest.id);
    assert.equal(raised.threshold, 1);
    assert.equal(raised.unit, 'seconds');
    assert.ok(raised.value > 1, `the age passed the threshold (${raised.value})`);
    assert.deepEqual(
      (await alertsOf(box, tenant.apiKey)).map((a) => a.kind),
      ['pending_age'],
    );
  });

  it('the alert webhooks keep their own rate limit', { timeout: 90_000 }, async (t) => {
    const { box, rcv } = await harness(t, (r) =>
      alertSettings(r, { pendingCount: 2, pendingAgeSeconds: 0 }, 1),
    );
    const tenant = await createTenant(box, box.adminToken);
    const dests = [];
    for (let i = 0; i < 4; i++) dests.push(await parkedBacklog(box, tenant, rcv.url(`d${i}`), 3));
    await rcv.waitFor(() => received(rcv).length >= 4, 60_000, 'four raised webhooks');
    assert.deepEqual(
      received(rcv)
        .map((b) => b.destinationId)
        .sort(),
      dests.map((d) => d.id).sort(),
      'one per destination',
    );
    const worst = worstWindow(rcv.times(OPS), 1_000);
    assert.ok(worst.count <= 1, `at most 1 alert webhook in any second, saw ${worst.count}`);
  });

  it("the operator's URL is trusted config: its webhook reaches loopback while tenants' stay guarded", {
    timeout: 60_000,
  }, async (t) => {
    const HOST = 'hook.example.test';
    const { box, rcv } = await harness(t, (r) => ({
      SLUICE_ALLOW_PRIVATE_NETWORKS: 'false',
      // Tenants' hostname → 127.0.0.1: refused at connect by the guard.
      lookup: (hostname, options, callback) => {
        process.nextTick(() => {
          if (hostname !== HOST) callback(notFound(hostname), '');
          else if (options.all === true) callback(null, [{ address: '127.0.0.1', family: 4 }]);
          else callback(null, '127.0.0.1', 4);
        });
      },
      ...alertSettings(r, { pendingCount: 1, pendingAgeSeconds: 0 }),
    }));
    const tenant = await createTenant(box, box.adminToken);
    const url = `http://${HOST}:${rcv.port}${rcv.path('d')}`;
    const dest = await createDestination(box, tenant.apiKey, {
      url,
      rateLimit: { limit: 5, period: 'second' },
      retry: { maxAttempts: 1, initialDelayMs: 0, maxDelayMs: 0 },
    });
    await box.api('POST', `/v1/destinations/${dest.id}/pause`, undefined, tenant.apiKey);
    await postBatches(
      box,
      tenant.apiKey,
      [1, 2, 3].map((n) => ({ type: 'order.paid', destinationId: dest.id, payload: { n } })),
    );
    // The alert reaches 127.0.0.1; resumed, the tenant's deliveries are refused at connect.
    await rcv.waitFor(() => received(rcv).length >= 1, 30_000, 'the raised webhook');
    assert.equal(received(rcv)[0]?.destinationId, dest.id);
    await box.api('POST', `/v1/destinations/${dest.id}/resume`, undefined, tenant.apiKey);
    const dead = await waitUntil(
      async () => {
        const res = await box.api<{ data: { status: string; lastError: string | null }[] }>(
          'GET',
          `/v1/deliveries?destinationId=${dest.id}&status=dead`,
          undefined,
          tenant.apiKey,
        );
        return res.body.data.length === 3 ? res.body.data : undefined;
      },
      30_000,
      "the tenant's deliveries refused",
    );
    assert.ok(
      dead.every((d) => d.lastError === 'destination_not_allowed'),
      JSON.stringify(dead),
    );
    assert.equal(rcv.arrivals(rcv.path('d')).length, 0, "the tenant's receiver never saw a request");
  });

  it('3 rate-limiter processes evaluate together: each alert is raised once and resolved once', {
    skip: SHAPE !== 'distributed' && 'distributed shape only (SLUICE_TEST_SHAPE=distributed)',
    timeout: 3 * 60_000,
  }, async () => {
    const rcv = await startReceiver();
    let c: Cluster | undefined;
    try {
      // The settings as an operator gives them: the services' own config parses them.
      c = await startCluster({
        limiters: 3,
        workers: 1,
        env: {
          SLUICE_ALERT_PENDING_COUNT: '3',
          SLUICE_ALERT_PENDING_AGE_SECONDS: '0',
          SLUICE_ALERT_INTERVAL_MS: '100',
          SLUICE_ALERT_URL: rcv.url('ops'),
          SLUICE_ALERT_SECRET: SECRET,
          SLUICE_ALERT_RATE_LIMIT: '50/second',
        },
      });
      const cluster = c;
      const tenant = await createTenant(cluster, cluster.adminToken);
      const dests = [];
      for (let i = 0; i < 5; i++) dests.push(await parkedBacklog(cluster, tenant, rcv.url(`d${i}`), 6));
      await rcv.waitFor(() => received(rcv).length >= 5, 60_000, 'five raised webhooks');
      await sleep(1_500); // every replica evaluates ~15 more times meanwhile
      const raised = received(rcv);
      assert.deepEqual(
        raised.map((b) => `${b.type} ${b.destinationId}`).sort(),
        dests.map((d) => `sluice.backlog.raised ${d.id}`).sort(),
        'one raised webhook per destination',
      );
      assert.equal((await alertsOf(cluster, cluster.adminToken)).length, 5);

      for (const d of dests) {
        const res = await cluster.api('POST', `/v1/destinations/${d.id}/resume`, undefined, tenant.apiKey);
        assert.equal(res.status, 200);
      }
      await rcv.waitFor(() => received(rcv).length >= 10, 60_000, 'five resolved webhooks');
      await sleep(1_500);
      const resolved = received(rcv).filter((b) => b.type === 'sluice.backlog.resolved');
      assert.deepEqual(
        resolved.map((b) => b.destinationId).sort(),
        dests.map((d) => d.id).sort(),
        'one resolved webhook per destination',
      );
      assert.equal(received(rcv).length, 10, 'nothing else');
      assert.deepEqual(await alertsOf(cluster, cluster.adminToken), []);
    } finally {
      await c?.close();
      await rcv.close();
      await assertNoLeaks();
    }
  });
});
