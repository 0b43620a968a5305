/**
 * k8s/ (docs/operations.md, "Deploy on a cluster"), offline: every overlay renders with `kubectl kustomize`, every object is
 * valid against the Kubernetes schemas (and the ServiceMonitor, PrometheusRule and
 * ScaledObject CRDs' schemas), the Deployments run the right command with probes,
 * resources and a restricted securityContext, every environment variable they set is one
 * of their service's config schema and every required one is set, the grace period covers
 * the drain, and the hpa and keda overlays scale the workers on the same query.
 * The metric names in them are checked against a running worker by autoscale.test.ts.
 * Static files: run once, in the single-shape pass.
 */

import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { describe, it } from 'node:test';
import { parse } from 'yaml';
import {
  find,
  hasKubectl,
  type Manifest,
  metricNames,
  REPO_ROOT,
  readYaml,
  render,
  renderAdapterQuery,
  requiredVariables,
  SERVICES,
  validate,
} from './helpers/k8s.ts';
import { SHAPE } from './helpers/shape.ts';

const skip =
  SHAPE !== 'single'
    ? 'static files: checked in the single-shape pass'
    : !hasKubectl() && process.env.CI !== 'true' && 'kubectl is not installed (CI has it)';

const OVERLAYS = ['base', 'overlays/hpa', 'overlays/keda'];

interface AdapterRule {
  seriesQuery: string;
  name: { matches: string; as: string };
  metricsQuery: string;
}

function adapterRules(): AdapterRule[] {
  const values = readYaml('k8s/overlays/hpa/prometheus-adapter-values.yaml') as {
    rules: { external: AdapterRule[] };
  };
  return values.rules.external;
}

function workerHpa(objects: Manifest[]): Manifest | undefined {
  return objects.find(
    (o) => o.kind === 'HorizontalPodAutoscaler' && o.spec.scaleTargetRef.name === 'sluice-delivery-worker',
  );
}

describe('k8s manifests', { skip }, () => {
  for (const dir of OVERLAYS) {
    it(`${dir}: renders, and every object is valid against its schema`, () => {
      const objects = render(dir);
      assert.ok(objects.length >= 10, `${dir} rendered ${objects.length} objects`);
      for (const o of objects) validate(o);
      for (const o of objects.filter((x) => x.kind !== 'Namespace')) {
        assert.equal(
          o.metadata.namespace,
          'sluice',
          `${o.kind}/${o.metadata.name} is in the sluice namespace`,
        );
      }
    });
  }

  it('metricNames reads the metrics out of PromQL', () => {
    assert.deepEqual(metricNames('max by (namespace) (sluice_delivery_queue_depth{namespace="sluice"})'), [
      'sluice_delivery_queue_depth',
    ]);
    assert.deepEqual(
      metricNames(
        'histogram_quantile(0.99, sum by (namespace, le) (rate(sluice_tick_lag_seconds_bucket[5m]))) > 0.5',
      ),
      ['sluice_tick_lag_seconds_bucket'],
    );
    assert.deepEqual(metricNames('sum(rate(a_total{x="y"}[1m])) / sum(rate(b_total[1m]))'), [
      'a_total',
      'b_total',
    ]);
  });

  it('docs/operations.md shows the alerts as shipped', () => {
    const guide = readFileSync(join(REPO_ROOT, 'docs/operations.md'), 'utf8');
    const block =
      /```yaml\n(apiVersion: monitoring\.coreos\.com\/v1\nkind: PrometheusRule\n[\s\S]*?)```/.exec(guide);
    assert.ok(block, 'the guide has the PrometheusRule');
    assert.deepEqual(parse(block[1] as string), readYaml('k8s/base/alerts.yaml'));
  });

  it("docs/operations.md's overlay of your own: its image and Prometheus address win", () => {
    const guide = readFileSync(join(REPO_ROOT, 'docs/operations.md'), 'utf8');
    const block =
      /```yaml\n(apiVersion: kustomize\.config\.k8s\.io\/v1beta1\nkind: Kustomization\n[\s\S]*?)```/.exec(
        guide,
      );
    assert.ok(block, 'the guide has an overlay of your own');
    const overlay = block[1] as string;
    const wanted = parse(overlay) as {
      images: { newName: string; newTag: string }[];
      patches: { patch: string }[];
    };
    const image = `${wanted.images[0]?.newName}:${wanted.images[0]?.newTag}`;
    const address = (parse(wanted.patches[0]?.patch ?? '') as { value: string }[])[0]?.value;
    // The guide's overlay sits in k8s/overlays/mine; kustomize takes relative paths only.
    assert.match(overlay, /^ {2}- \.\.\/keda\b/m, 'the overlay builds on ../keda');
    const dir = mkdtempSync(join(tmpdir(), 'sluice-overlay-'));
    try {
      for (const base of ['keda', 'hpa']) {
        const from = relative(dir, join(REPO_ROOT, 'k8s/overlays', base));
        writeFileSync(
          join(dir, 'kustomization.yaml'),
          overlay.replace(/^( {2}- )\.\.\/keda\b/m, `$1${from}`),
        );
        const objects = render(dir);
        const containers = objects
          .filter((o) => o.kind === 'Deployment')
          .flatMap((o) => o.spec.template.spec.containers as { name: string; image: string }[]);
        assert.equal(containers.length, 3, `${base}: three Deployments, one container each`);
        for (const c of containers) assert.equal(c.image, image, `${base}: ${c.name} runs ${c.image}`);
        if (base === 'keda') {
          const so = find(objects, 'ScaledObject', 'sluice-delivery-worker');
          assert.equal(so.spec.triggers[0].metadata.serverAddress, address);
        }
      }
      // The pitfall the guide warns of: an entry named `sluice` matches nothing after the base.
      const shipped = find(render('base'), 'Deployment', 'sluice-api').spec.template.spec.containers[0].image;
      writeFileSync(
        join(dir, 'kustomization.yaml'),
        readFileSync(join(dir, 'kustomization.yaml'), 'utf8').replace(/^( {2}- name: ).*$/m, '$1sluice'),
      );
      const images = render(dir)
        .filter((o) => o.kind === 'Deployment')
        .map((o) => o.spec.template.spec.containers[0].image);
      assert.deepEqual(images, [shipped, shipped, shipped]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('the validator rejects what Kubernetes would', () => {
    const deployment = find(render('base'), 'Deployment', 'sluice-api');
    assert.throws(
      () => validate({ ...deployment, spec: { ...deployment.spec, replicas: 'two' } }),
      /integer/,
    );
    assert.throws(() => validate({ ...deployment, kind: 'Deploymnet' }), /no schema/);
  });

  it('each service: command, probes, resources, non-root, drain within the grace period', () => {
    const objects = render('base');
    const config = objects.find((o) => o.kind === 'ConfigMap') as Manifest;
    for (const [name, { main, schema }] of Object.entries(SERVICES)) {
      const d = find(objects, 'Deployment', `sluice-${name}`);
      const pod = d.spec.template.spec;
      const [c, ...others] = pod.containers;
      assert.equal(others.length, 0);
      assert.deepEqual(c.command, ['node', main], `${name} runs its service`);
      assert.equal(c.livenessProbe.httpGet.path, '/healthz');
      assert.equal(c.readinessProbe.httpGet.path, '/readyz');
      assert.ok(c.resources.requests.cpu && c.resources.requests.memory && c.resources.limits.memory);
      assert.equal(pod.securityContext.runAsNonRoot, true);
      assert.equal(c.securityContext.allowPrivilegeEscalation, false);
      assert.equal(c.securityContext.readOnlyRootFilesystem, true);
      assert.deepEqual(c.securityContext.capabilities.drop, ['ALL']);

      // Every variable set is one the service reads; every required one is set.
      const set = new Set<string>(c.env.map((e: { name: string }) => e.name));
      for (const from of c.envFrom) {
        assert.equal(from.configMapRef.name, config.metadata.name, 'the generated ConfigMap, hash included');
        for (const key of Object.keys(config.data)) set.add(key);
      }
      for (const variable of set) {
        assert.ok(
          variable in schema.shape,
          `${name} sets ${variable}, which its config schema does not read`,
        );
      }
      for (const variable of requiredVariables(schema)) {
        assert.ok(set.has(variable), `${name} requires ${variable}`);
      }
      for (const e of c.env.filter((x: { valueFrom?: unknown }) => x.valueFrom)) {
        assert.equal(e.valueFrom.secretKeyRef.name, 'sluice-secrets', `${e.name} comes from the Secret`);
      }
      // Every literal value parses: a bad one would stop the pod at start.
      const env = Object.fromEntries([
        ...Object.entries(config.data as Record<string, string>),
        ...c.env
          .filter((x: { value?: string }) => x.value !== undefined)
          .map((x: { name: string; value: string }) => [x.name, x.value]),
      ]);
      const parsed = schema.partial().safeParse(env);
      assert.ok(parsed.success, `${name}: ${parsed.error?.message}`);
      const port = c.ports.find((p: { name: string }) => p.name === 'http').containerPort;
      assert.equal(Number(env.PORT), port, `${name} listens where its probes look`);
      assert.equal(env.HOST, '0.0.0.0', `${name} listens on the pod's address`);

      const drainMs = Number(env.SLUICE_SHUTDOWN_TIMEOUT_MS);
      const preStopS = c.lifecycle?.preStop ? 5 : 0;
      assert.ok(
        drainMs + preStopS * 1000 < pod.terminationGracePeriodSeconds * 1000,
        `${name}: the drain (${drainMs} ms) ends before the kubelet's SIGKILL`,
      );

      const service = find(objects, 'Service', `sluice-${name}`);
      for (const [k, v] of Object.entries(service.spec.selector)) {
        assert.equal(d.spec.template.metadata.labels[k], v, `Service sluice-${name} selects the pods`);
      }
      const pdb = find(objects, 'PodDisruptionBudget', `sluice-${name}`);
      assert.deepEqual(pdb.spec.selector.matchLabels, d.spec.selector.matchLabels);
    }
    const monitor = find(objects, 'ServiceMonitor', 'sluice');
    for (const s of objects.filter((o) => o.kind === 'Service')) {
      for (const [k, v] of Object.entries(monitor.spec.selector.matchLabels)) {
        assert.equal(s.metadata.labels?.[k], v, `the ServiceMonitor selects ${s.metadata.name}`);
      }
      assert.ok(s.spec.ports.some((p: { name: string }) => p.name === monitor.spec.endpoints[0].port));
    }
  });

  it('hpa: the workers on the External queue depth, served by an adapter rule; no replicas field', () => {
    const objects = render('overlays/hpa');
    const hpa = workerHpa(objects) as Manifest;
    const [metric] = hpa.spec.metrics;
    assert.equal(metric.type, 'External');
    assert.equal(metric.external.metric.name, 'sluice_delivery_queue_depth');
    assert.equal(metric.external.target.type, 'AverageValue');
    assert.equal(find(objects, 'Deployment', 'sluice-delivery-worker').spec.replicas, undefined);
    const served = new Set(adapterRules().map((r) => r.name.as));
    for (const h of objects.filter((o) => o.kind === 'HorizontalPodAutoscaler')) {
      for (const m of h.spec.metrics.filter((x: { type: string }) => x.type === 'External')) {
        assert.ok(served.has(m.external.metric.name), `the adapter serves ${m.external.metric.name}`);
      }
    }
    const limiter = find(objects, 'HorizontalPodAutoscaler', 'sluice-rate-limiter');
    assert.deepEqual(
      limiter.spec.metrics.map((m: { type: string }) => m.type),
      ['Resource', 'External'],
      'the rate limiters on CPU and tick lag',
    );
    for (const rule of adapterRules()) {
      assert.match(
        rule.seriesQuery,
        new RegExp(`^${rule.name.matches.slice(1, -1)}\\{`),
        'the name matches the series',
      );
    }
  });

  it('keda: a ScaledObject on the adapter rule’s own query, the same target and bounds', () => {
    const objects = render('overlays/keda');
    assert.equal(workerHpa(objects), undefined, 'KEDA owns the workers’ HPA');
    assert.equal(find(objects, 'Deployment', 'sluice-delivery-worker').spec.replicas, undefined);
    const so = find(objects, 'ScaledObject', 'sluice-delivery-worker');
    const [trigger] = so.spec.triggers;
    assert.equal(trigger.type, 'prometheus');
    const rule = adapterRules().find((r) => r.name.as === 'sluice_delivery_queue_depth') as AdapterRule;
    assert.equal(
      trigger.metadata.query,
      renderAdapterQuery(
        rule.metricsQuery,
        'sluice_delivery_queue_depth',
        `namespace="${so.metadata.namespace}"`,
      ),
    );
    const hpa = workerHpa(render('overlays/hpa')) as Manifest;
    assert.equal(
      Number(trigger.metadata.threshold),
      Number(hpa.spec.metrics[0].external.target.averageValue),
    );
    assert.equal(so.spec.minReplicaCount, hpa.spec.minReplicas);
    assert.equal(so.spec.maxReplicaCount, hpa.spec.maxReplicas);
    assert.deepEqual(so.spec.advanced.horizontalPodAutoscalerConfig.behavior, hpa.spec.behavior);
  });
});
