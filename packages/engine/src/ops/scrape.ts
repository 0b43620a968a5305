/**
 * A scrape answers while the store or Redis does not (an outage is when the metrics matter
 * most): every `/metrics`, the API's and the ops server's, answers 200 with what the process
 * can compute.
 *
 * - A gauge that reads shared state at a scrape (the store, Redis) reads it through
 *   `scrapeRead`: a read that fails, or gives no answer within `SCRAPE_READ_TIMEOUT_MS`,
 *   leaves the gauge at its last value and is counted in
 *   `sluice_metrics_unavailable_total{metric}`.
 * - `exposition` writes each metric on its own: one that still fails (a bug) is left out of
 *   that scrape and logged, never failing the others.
 */

import { createHash, timingSafeEqual } from 'node:crypto';
import { Counter, type Registry } from 'prom-client';

/** Longest wait for one gauge's read: well inside Prometheus' default 10 s scrape timeout. */
const SCRAPE_READ_TIMEOUT_MS = 3_000;

const UNAVAILABLE = 'sluice_metrics_unavailable_total';

/** The counter of failed reads (one per registry, however many gauges share it). */
function unavailableCounter(registry: Registry): Counter<'metric'> {
  const existing = registry.getSingleMetric(UNAVAILABLE);
  if (existing instanceof Counter) return existing as Counter<'metric'>;
  return new Counter({
    name: UNAVAILABLE,
    help:
      'Gauge reads at a scrape that failed or took longer than 3 s (the store or Redis could ' +
      'not answer), by gauge: the gauge kept its last value.',
    labelNames: ['metric'],
    registers: [registry],
  });
}

/**
 * The guard of `metric`'s reads on `registry`: `guard(read)` runs `read` (which reads, then
 * sets the gauge) and settles within `timeoutMs` whatever the read does.
 */
export function scrapeRead(
  registry: Registry,
  metric: string,
  timeoutMs = SCRAPE_READ_TIMEOUT_MS,
): (read: () => Promise<void>) => Promise<void> {
  const unavailable = unavailableCounter(registry);
  // From 0: Prometheus' increase() misses a series' first value.
  unavailable.inc({ metric }, 0);
  return async (read) => {
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<never>((_resolve, reject) => {
      timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
    });
    try {
      // A read that ends after the timeout still sets the gauge then: a fresh value.
      await Promise.race([read(), timedOut]);
    } catch {
      unavailable.inc({ metric });
    } finally {
      clearTimeout(timer);
    }
  };
}

/**
 * The registry's metrics in the text format, each on its own; `failed` hears of one left out.
 * The count of failed reads is written last, so it includes this scrape's.
 */
export async function exposition(
  registry: Registry,
  failed: (metric: string, err: unknown) => void,
): Promise<string> {
  const text = (name: string) =>
    registry.getSingleMetricAsString(name).catch((err: unknown) => {
      failed(name, err);
      return undefined;
    });
  const names = registry.getMetricsAsArray().map((metric) => metric.name);
  const parts = await Promise.all(names.filter((name) => name !== UNAVAILABLE).map(text));
  if (names.includes(UNAVAILABLE)) parts.push(await text(UNAVAILABLE));
  return `${parts.filter((p) => p !== undefined).join('\n\n')}\n`;
}

/**
 * Whether a scrape may read `/metrics` (`SLUICE_METRICS_TOKEN`): anyone when no token is set,
 * else only a request with `authorization: Bearer <token>` (the token compared in constant time).
 */
export function scrapeAllowed(authorization: string | undefined, token: string | undefined): boolean {
  if (token === undefined) return true;
  // The scheme is case-insensitive (RFC 9110 §11.1); the token is compared whole.
  const given = /^bearer (.*)$/is.exec(authorization ?? '')?.[1] ?? '';
  const digest = (text: string) => createHash('sha256').update(text).digest();
  return timingSafeEqual(digest(given), digest(token));
}
