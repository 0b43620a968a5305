/**
 * Autoscaling the delivery workers by the queue's depth (docs/adr/0004-autoscaling-signal.md).
 *
 * Single-shape pass (pure): the HPA algorithm (helpers/hpa.ts) on the hpa overlay's own
 * spec scales up under a backlog and, after the stabilisation window, back down.
 *
 * Distributed pass (real processes: an API, a rate limiter and a worker over Postgres and
 * Redis): every metric name the HPA's adapter rules, the ScaledObject and the alerts use is
 * one a running worker exports; the queue's depth, scraped from the worker, rises under a
 * backlog (never past the per-run bound, docs/design.md I3) and returns to 0, and the HPA run on
 * that series scales up and back down; SIGTERM drains each service.
 */

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type Cluster, startCluster } from './helpers/cluster.ts';
import { type HpaSpec, propose, simulate } from './helpers/hpa.ts';
import { hasKubectl, type Manifest, metricNames, readYaml, render } from './helpers/k8s.ts';
import { assertNoLeaks } from './helpers/leaks.ts';
import { metricValue, scrape } from './helpers/metrics.ts';
import { type Receiver, sleep, startReceiver } from './helpers/receiver.ts';
import { SHAPE } from './helpers/shape.ts';
import { createDestination, createTenant, postBatches, waitUntil } from './helpers/sluice.ts';

const kubectl = hasKubectl() || process.env.CI === 'true';

/** The hpa overlay's worker HPA, as the simulator's input. */
function workerSpec(): HpaSpec {
  const hpa = render('overlays/hpa').find(
    (o) => o.kind === 'HorizontalPodAutoscaler' && o.metadata.name === 'sluice-delivery-worker',
  ) as Manifest;
  const target = hpa.spec.metrics[0].external.target;
  return {
    minReplicas: hpa.spec.minReplicas,
    maxReplicas: hpa.spec.maxReplicas,
    target: { type: target.type, value: Number(target.averageValue) },
    behavior: hpa.spec.behavior,
  };
}

/** Every metric name the autoscalers and the alerts query. */
function queriedNames(): string[] {
  const adapter = readYaml('k8s/overlays/hpa/prometheus-adapter-values.yaml') as {
    rules: { external: { seriesQuery: string; metricsQuery: string }[] };
  };
  const exprs = adapter.rules.external.map((r) => r.seriesQuery);
  const keda = render('overlays/keda').find((o) => o.kind === 'ScaledObject') as Manifest;
  exprs.push(...keda.spec.triggers.map((t: { metadata: { query: string } }) => t.metadata.query));
  const rules = render('base').find((o) => o.kind === 'PrometheusRule') as Manifest;
  for (const group of rules.spec.groups) exprs.push(...group.rules.map((r: { expr: string }) => r.expr));
  // `up` is Prometheus's own series for every target.
  return [...new Set(exprs.flatMap(metricNames))].filter((n) => n !== 'up');
}

describe('autoscaling: the HPA algorithm', {
  skip: SHAPE !== 'single' ? 'pure: run in the single-shape pass' : !kubectl && 'kubectl is not installed',
}, () => {
  it('proposes ceil(current × usage) outside the tolerance, and holds inside it', () => {
    const avg: HpaSpec = { maxReplicas: 20, target: { type: 'AverageValue', value: 50 } };
    assert.equal(propose(avg, 2, 500), 10);
    assert.equal(propose(avg, 2, 105), 2, '105 ÷ (2 × 50) = 1.05, within 10%');
    assert.equal(propose(avg, 2, 115), 3);
    assert.equal(propose(avg, 4, 0), 0);
    const value: HpaSpec = { maxReplicas: 6, target: { type: 'Value', value: 0.1 } };
    assert.equal(propose(value, 2, 0.35), 7);
  });

  it('the hpa overlay: scales up at once under a backlog, down only after the window', () => {
    const spec = workerSpec();
    // Per 15 s sync: idle, a backlog of 600 jobs for 2 minutes, then idle for 10 minutes.
    const series = [0, 0, ...Array(8).fill(600), ...Array(40).fill(0)];
    const steps = simulate(spec, series, 2);
    const replicas = steps.map((s) => s.replicas);
    assert.equal(replicas[1], spec.minReplicas, 'idle: the minimum');
    assert.equal(replicas[2], 6, 'the first sync under the backlog: +4 pods (the larger policy)');
    assert.equal(replicas[3], 12, 'then +100%');
    assert.equal(Math.max(...replicas), 12, 'ceil(600 ÷ 50) = 12 and no more');
    const lastBusy = 9;
    const window = (spec.behavior?.scaleDown?.stabilizationWindowSeconds ?? 300) / 15;
    // The last busy proposal leaves the window 300 s after it was made.
    for (let i = lastBusy + 1; i < lastBusy + window; i++) {
      assert.equal(replicas[i], 12, `sync ${i}: held up by the ${window * 15} s scale-down window`);
    }
    assert.equal(replicas[lastBusy + window], 6, 'then it scales down, by at most 50% a minute');
    assert.equal(replicas[lastBusy + window + 1], 6, 'and not again within that minute');
    assert.equal(replicas.at(-1), spec.minReplicas, 'and back to the minimum');
  });
});

describe('autoscaling: the real services', {
  skip: SHAPE !== 'distributed' ? 'distributed shape only' : !kubectl && 'kubectl is not installed',
}, () => {
  let cluster: Cluster;
  let rcv: Receiver;

  before(async () => {
    rcv = await startReceiver();
    // Few requests per worker, so a backlog builds in the delivery queue.
    // One delivery per job (ADR 0010): the depth then counts deliveries, and this backlog of
    // 600 at 6 × 40/s passes the HPA's target of 50 waiting jobs a replica while it drains,
    // not only at its first tick.
    cluster = await startCluster({
      limiters: 1,
      workers: 1,
      env: { SLUICE_DELIVERY_CONCURRENCY: '8', SLUICE_JOB_DELIVERIES: '1' },
    });
  });

  after(async () => {
    await cluster?.close();
    await rcv?.close();
    await assertNoLeaks();
  });

  /** The worker's /metrics URL, from its "listening" log line. */
  const workerUrl = (n = 0): string => {
    const line = cluster.workers[n]?.logs.find((l) => l.includes('"msg":"listening"')) ?? '';
    return (JSON.parse(line) as { url: string }).url;
  };

  it('a worker exports every name the HPA, the adapter rules, the ScaledObject and the alerts use', {
    timeout: 60_000,
  }, async () => {
    const text = await scrape(workerUrl());
    const names = queriedNames();
    for (const signal of [
      'sluice_delivery_queue_depth',
      'sluice_oldest_pending_age_seconds',
      'sluice_tick_lag_seconds_bucket',
    ]) {
      assert.ok(names.includes(signal), `${signal} is queried (${names.join()})`);
    }
    for (const name of names) {
      const base = name.replace(/_(bucket|sum|count)$/, '');
      assert.ok(text.includes(`\n# TYPE ${base} `), `the worker exports ${name}`);
    }
  });

  it('the queue depth rises under a backlog, stays bounded, returns to 0; the HPA scales up and down', {
    timeout: 120_000,
  }, async () => {
    const tenant = await createTenant(cluster, cluster.adminToken);
    const LIMIT = 40;
    const DESTINATIONS = 6;
    const paths: string[] = [];
    const events = [];
    for (let d = 0; d < DESTINATIONS; d++) {
      const name = `scale${d}`;
      const path = rcv.path(name);
      await rcv.setDelay(path, 100);
      paths.push(path);
      const dest = await createDestination(cluster, tenant.apiKey, {
        name,
        url: rcv.url(name),
        rateLimit: { limit: LIMIT, period: 'second' },
      });
      for (let n = 0; n < 100; n++)
        events.push({ type: 'scale.test', destinationId: dest.id, payload: { n } });
    }
    const accepted = await postBatches(cluster, tenant.apiKey, events);
    const url = workerUrl();
    const depths: number[] = [];
    const delivered = () => paths.reduce((sum, p) => sum + rcv.deliveredIds(p).size, 0);
    while (delivered() < accepted.length) {
      depths.push(metricValue(await scrape(url), 'sluice_delivery_queue_depth') ?? Number.NaN);
      await sleep(200);
      assert.ok(depths.length < 400, `all ${accepted.length} delivered within 80 s (${delivered()})`);
    }
    // Outcomes are written in batches after the responses: wait for the counter as well.
    const final = await waitUntil(
      async () => {
        const text = await scrape(url);
        return metricValue(text, 'sluice_delivery_queue_depth') === 0 &&
          metricValue(text, 'sluice_oldest_pending_age_seconds') === 0 &&
          metricValue(text, 'sluice_deliveries_total', { outcome: 'delivered' }) === accepted.length
          ? text
          : undefined;
      },
      15_000,
      'the depth and the backlog age to return to 0, and every delivery counted',
    );
    depths.push(metricValue(final, 'sluice_delivery_queue_depth') as number);
    const peak = Math.max(...depths);
    process.stderr.write(
      `queue depth scraped from the worker every 200 ms: peak ${peak}, ${depths.join(' ')}\n`,
    );
    assert.ok(peak > 50, `the depth rose under the backlog (peak ${peak})`);
    assert.ok(
      peak <= DESTINATIONS * LIMIT,
      `never past the scheduled destinations' per-run limits (docs/design.md I3): ${peak}`,
    );

    // The HPA on that series: each scrape stands for one 15 s sync (time compressed), then
    // the idle value the series ended on for 30 more syncs.
    const spec = workerSpec();
    const series = [...depths, ...Array(30).fill(0)];
    const replicas = simulate(spec, series, spec.minReplicas ?? 1).map((s) => s.replicas);
    process.stderr.write(`HPA replicas: ${replicas.join(' ')}\n`);
    assert.ok(Math.max(...replicas) > (spec.minReplicas ?? 1), 'scaled up under the backlog');
    assert.ok(Math.max(...replicas) <= Math.ceil(peak / spec.target.value), 'no more than the backlog asks');
    assert.equal(replicas.at(-1), spec.minReplicas, 'and back down after it');
  });

  it('SIGTERM: the worker turns unready, finishes its requests in flight; each service exits 0', {
    timeout: 60_000,
  }, async () => {
    const tenant = await createTenant(cluster, cluster.adminToken);
    const path = rcv.path('drain');
    await rcv.setDelay(path, 1_500);
    const dest = await createDestination(cluster, tenant.apiKey, {
      name: 'drain',
      url: rcv.url('drain'),
      rateLimit: { limit: 10, period: 'second' },
    });
    const events = Array.from({ length: 4 }, (_, n) => ({
      type: 'drain.test',
      destinationId: dest.id,
      payload: { n },
    }));
    const accepted = await postBatches(cluster, tenant.apiKey, events);
    await rcv.waitFor(() => rcv.arrivals(path).length === 4, 10_000, 'the 4 requests to be in flight');
    const worker = cluster.workers[0];
    assert.ok(worker);
    const exited = worker.stop();
    // Draining: not ready any more, still answering, the requests still in flight.
    const draining = await waitUntil(
      async () => {
        const res = await fetch(`${workerUrl()}/readyz`);
        await res.body?.cancel();
        return res.status === 503 ? res.status : undefined;
      },
      1_000,
      'the draining worker to answer /readyz with 503',
    );
    assert.equal(draining, 503);
    assert.ok(rcv.deliveredIds(path).size < 4, 'readiness went before the requests finished');
    assert.equal(await exited, 0, 'the worker drained and exited 0');
    assert.equal(rcv.deliveredIds(path).size, 4, 'every request in flight was answered before the exit');
    const listed = await cluster.api<{ data: { eventId: string; status: string }[] }>(
      'GET',
      `/v1/deliveries?destinationId=${dest.id}`,
      undefined,
      tenant.apiKey,
    );
    assert.deepEqual(
      listed.body.data.filter((d) => accepted.some((a) => a.id === d.eventId)).map((d) => d.status),
      ['delivered', 'delivered', 'delivered', 'delivered'],
      'and their outcomes written',
    );
    for (const limiter of cluster.limiters) assert.equal(await limiter.stop(), 0, 'the limiter exited 0');
    const leases = await cluster.redis.zcard(`${cluster.prefix}:{s0}:leases`);
    assert.equal(leases, 0, 'no tick left claimed in the schedule');
    assert.equal(await cluster.apiProcess.stop(), 0, 'the API exited 0');
  });
});
