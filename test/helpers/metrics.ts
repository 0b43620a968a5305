/** Reading a Prometheus text exposition in tests. */

import assert from 'node:assert/strict';

/** The names the guide, the HPA, the adapter rules and the ScaledObject use. */
export const EXPORTED = [
  'sluice_deliveries_total',
  'sluice_attempt_duration_seconds',
  'sluice_delivery_latency_seconds',
  'sluice_ticks_total',
  'sluice_tick_lag_seconds',
  'sluice_delivery_queue_depth',
  'sluice_oldest_pending_age_seconds',
  'sluice_deliveries_in_flight',
  'sluice_scheduled_destinations',
  'sluice_backlog_alerts_firing',
];

/** `name{labels} value` lines of a Prometheus text exposition, comments skipped. */
export function samples(text: string): { name: string; labels: Record<string, string>; value: number }[] {
  const out: { name: string; labels: Record<string, string>; value: number }[] = [];
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)/.exec(line);
    if (!m) continue;
    const labels: Record<string, string> = {};
    for (const l of (m[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) {
      labels[l[1] as string] = l[2] as string;
    }
    out.push({ name: m[1] as string, labels, value: Number(m[3]) });
  }
  return out;
}

/** The value of one unlabelled (or exactly labelled) series. */
export function metricValue(
  text: string,
  name: string,
  labels: Record<string, string> = {},
): number | undefined {
  return samples(text).find(
    (s) =>
      s.name === name &&
      Object.keys(s.labels).length === Object.keys(labels).length &&
      Object.entries(labels).every(([k, v]) => s.labels[k] === v),
  )?.value;
}

export async function scrape(url: string): Promise<string> {
  const res = await fetch(`${url}/metrics`);
  assert.equal(res.status, 200);
  assert.match(res.headers.get('content-type') ?? '', /^text\/plain/);
  return res.text();
}
