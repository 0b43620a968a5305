/**
 * The deployment files as data, for the tests that keep them true: `kubectl kustomize`
 * renders an overlay offline, each object is validated against the Kubernetes OpenAPI
 * schemas (and the CRDs' published schemas) shipped by the kubernetes-models packages,
 * and the services' zod config schemas say which environment variables exist.
 */

import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { isAbsolute, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ScaledObject } from '@kubernetes-models/keda/keda.sh/v1alpha1';
import {
  PrometheusRule,
  ServiceMonitor,
} from '@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1';
import { apiConfigFields } from '@sluice/api-service/config';
import { deliveryWorkerConfigFields } from '@sluice/delivery-worker/config';
import { rateLimiterConfigFields } from '@sluice/rate-limiter/config';
import { Deployment } from 'kubernetes-models/apps/v1';
import { HorizontalPodAutoscaler } from 'kubernetes-models/autoscaling/v2';
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1';
import { ConfigMap, Namespace, Service } from 'kubernetes-models/v1';
import { parse, parseAllDocuments } from 'yaml';
import type { z } from 'zod';

export const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** A rendered object, loosely typed: the tests read paths the schemas already checked. */
export type Manifest = {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string> };
  // biome-ignore lint/suspicious/noExplicitAny: a manifest is any JSON; the schemas validate it
  [k: string]: any;
};

/** Every kind Sluice ships, with the model that validates it; any other kind is an error. */
const MODELS: Record<string, new (data: never) => { validate(): void }> = {
  'v1/Namespace': Namespace,
  'v1/ConfigMap': ConfigMap,
  'v1/Service': Service,
  'apps/v1/Deployment': Deployment,
  'policy/v1/PodDisruptionBudget': PodDisruptionBudget,
  'autoscaling/v2/HorizontalPodAutoscaler': HorizontalPodAutoscaler,
  'monitoring.coreos.com/v1/ServiceMonitor': ServiceMonitor,
  'monitoring.coreos.com/v1/PrometheusRule': PrometheusRule,
  'keda.sh/v1alpha1/ScaledObject': ScaledObject,
};

/** Throws naming the object and every schema violation. */
export function validate(object: Manifest): void {
  const Model = MODELS[`${object.apiVersion}/${object.kind}`];
  if (!Model) throw new Error(`${object.apiVersion} ${object.kind} has no schema here`);
  try {
    new Model(object as never).validate();
  } catch (err) {
    throw new Error(`${object.kind}/${object.metadata.name}: ${(err as Error).message}`);
  }
}

export function hasKubectl(): boolean {
  return spawnSync('kubectl', ['version', '--client'], { stdio: 'ignore' }).status === 0;
}

/** `kubectl kustomize k8s/<dir>` (or an absolute directory), parsed. */
export function render(dir: string): Manifest[] {
  const path = isAbsolute(dir) ? dir : join(REPO_ROOT, 'k8s', dir);
  const out = spawnSync('kubectl', ['kustomize', path], { encoding: 'utf8' });
  if (out.status !== 0) throw new Error(`kubectl kustomize ${dir} failed:\n${out.stderr}`);
  return parseAllDocuments(out.stdout).map((doc) => doc.toJS() as Manifest);
}

export function readYaml(path: string): unknown {
  return parse(readFileSync(join(REPO_ROOT, path), 'utf8'), { merge: true });
}

export function find(objects: Manifest[], kind: string, name: string): Manifest {
  const found = objects.find((o) => o.kind === kind && o.metadata.name === name);
  if (!found) throw new Error(`no ${kind}/${name}`);
  return found;
}

/** Each service: its entry point and its config schema. */
export const SERVICES: Record<string, { main: string; schema: z.ZodObject }> = {
  api: { main: 'services/api/src/main.ts', schema: apiConfigFields },
  'rate-limiter': { main: 'services/rate-limiter/src/main.ts', schema: rateLimiterConfigFields },
  'delivery-worker': { main: 'services/delivery-worker/src/main.ts', schema: deliveryWorkerConfigFields },
};

/** The variables a schema requires (no default, not optional). */
export function requiredVariables(schema: z.ZodObject): string[] {
  return Object.entries(schema.shape)
    .filter(([, field]) => !(field as z.ZodType).safeParse(undefined).success)
    .map(([name]) => name);
}

/** A prometheus-adapter template (`<<.Series>>`, `<<.LabelMatchers>>`) rendered as the adapter would. */
export function renderAdapterQuery(template: string, series: string, labelMatchers: string): string {
  return template.replaceAll('<<.Series>>', series).replaceAll('<<.LabelMatchers>>', labelMatchers);
}

/** PromQL's own words: keywords and aggregation operators (`max by (…) (…)` has no `(` after `max`). */
const PROMQL = new Set(
  (
    'by without on ignoring group_left group_right bool and or unless offset ' +
    'sum min max avg count stddev stdvar topk bottomk quantile count_values group'
  ).split(' '),
);

/** Metric names in a PromQL expression: identifiers that are not functions, words, labels or durations. */
export function metricNames(expr: string): string[] {
  const names = new Set<string>();
  const stripped = expr.replace(/\{[^}]*\}/g, '{}').replace(/"[^"]*"/g, '""');
  for (const m of stripped.matchAll(/\b([a-zA-Z_:][a-zA-Z0-9_:]*)\b(?!\s*\()/g)) {
    const name = m[1] as string;
    if (PROMQL.has(name)) continue;
    const before = stripped.slice(0, m.index);
    if (/\b(by|without|on|ignoring)\s*\([^)]*$/.test(before)) continue; // a label in by (…)
    if (/\[[^\]]*$/.test(before)) continue; // a range such as [5m]
    names.add(name);
  }
  return [...names];
}
