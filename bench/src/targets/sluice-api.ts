/**
 * What both Sluice targets share — the single box (sluice.ts) and the distributed shape
 * (sluice-distributed.ts), whose API service serves the same HTTP API:
 *
 * - starting a Sluice process as its operator would (`node services/<name>/src/main.ts`,
 *   a free port, loopback destinations allowed, warn logs), with the bench's probe preloaded
 *   for its event-loop delay and `--cpu-prof` when profiling, and stopping it with SIGTERM;
 * - driving Sluice ONLY over its HTTP API: a tenant, one destination per workload
 *   destination, then events — `POST /v1/events/batch` (≤ 1000 per call, all or nothing)
 *   for bursts and batched streams, `POST /v1/events` per event for steady ingest — and
 *   `PATCH` for limit changes;
 * - reading a process's Prometheus text at `/metrics`.
 */

import { type ChildProcess, spawn } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Agent, request } from 'undici';
import { errorMessage, sleep } from '../common.ts';
import { destinationUrl, type PlannedEvent, payloadOf } from '../workload.ts';
import { parseMetrics, type SluiceMetrics } from './sluice-metrics.ts';
import type { Target, TargetOptions, TargetSetup } from './target.ts';

const PROBE = fileURLToPath(new URL('../probe.ts', import.meta.url));
const EVENT_TYPE = 'bench.event';
const SETUP_CONCURRENCY = 16;
const START_TIMEOUT_MS = 30_000;
const STOP_TIMEOUT_MS = 40_000;

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

// ---- Sluice processes ----

export interface SluiceProcess {
  /** `sluice`, `api`, `rate-limiter`, `worker-1`…: its log is `<name>.log`, its probe `<name>-probe.ndjson`. */
  readonly name: string;
  readonly child: ChildProcess;
  /** `http://127.0.0.1:<port>`. */
  readonly url: string;
  /** Resolves with the exit code once the process has exited. */
  readonly exited: Promise<number | null>;
}

export interface SpawnOptions {
  name: string;
  /** The service's entry point, relative to the Sluice checkout. */
  script: string;
  runDir: string;
  options: TargetOptions;
  /** Where `--cpu-prof` writes (when profiling). */
  profileDir: string;
  /** The process's own settings (PORT, the state it runs on, the admin token…). */
  env: Record<string, string>;
}

/** Starts one Sluice process on a free port; resolves once its /healthz answers 200. */
export async function startSluice(o: SpawnOptions): Promise<SluiceProcess> {
  const port = await freePort();
  const nodeArgs = ['--import', PROBE];
  if (o.options.profile) nodeArgs.push('--cpu-prof', `--cpu-prof-dir=${o.profileDir}`);
  const log = createWriteStream(join(o.runDir, `${o.name}.log`));
  const child = spawn(process.execPath, [...nodeArgs, join(o.options.sluiceRoot, o.script)], {
    cwd: o.options.sluiceRoot,
    env: {
      ...process.env,
      PORT: String(port),
      HOST: '127.0.0.1',
      SLUICE_ALLOW_PRIVATE_NETWORKS: 'true',
      SLUICE_LOG_LEVEL: 'warn',
      BENCH_PROBE_FILE: join(o.runDir, `${o.name}-probe.ndjson`),
      ...o.env,
      ...o.options.sluiceEnv,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout?.pipe(log);
  child.stderr?.pipe(log);
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const p: SluiceProcess = { name: o.name, child, url: `http://127.0.0.1:${port}`, exited };

  // Up when /healthz answers; a process that exits first is a failed start.
  const deadline = Date.now() + START_TIMEOUT_MS;
  for (;;) {
    if (child.exitCode !== null)
      throw new Error(`${o.name} exited (${child.exitCode}) at start: see ${o.runDir}/${o.name}.log`);
    try {
      const res = await request(`${p.url}/healthz`);
      await res.body.dump();
      if (res.statusCode === 200) return p;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`${o.name} did not answer /healthz within ${START_TIMEOUT_MS / 1_000} s`);
    }
    await sleep(50);
  }
}

/** SIGTERM (Sluice drains), SIGKILL past the timeout; answers the exit code. */
export async function stopSluice(p: SluiceProcess): Promise<number | null> {
  if (p.child.exitCode !== null) return p.child.exitCode;
  p.child.kill('SIGTERM');
  const timeout = sleep(STOP_TIMEOUT_MS).then(() => 'timeout' as const);
  const code = await Promise.race([p.exited, timeout]);
  if (code !== 'timeout') return code;
  p.child.kill('SIGKILL');
  return p.exited;
}

/** The process's Prometheus metrics, or null when it does not answer 200. */
export async function readMetrics(url: string): Promise<SluiceMetrics | null> {
  const res = await request(`${url}/metrics`);
  const text = await res.body.text();
  return res.statusCode === 200 ? parseMetrics(text) : null;
}

// ---- the HTTP API ----

export class SluiceApi {
  readonly base: string;
  readonly agent = new Agent({ connections: 64, keepAliveTimeout: 10_000 });
  token = '';

  constructor(base: string) {
    this.base = base;
  }

  async call<T>(
    method: string,
    path: string,
    body?: unknown,
    token = this.token,
  ): Promise<{ status: number; body: T }> {
    const res = await request(this.base + path, {
      method: method as 'GET',
      dispatcher: this.agent,
      headers: {
        authorization: `Bearer ${token}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
      headersTimeout: 120_000,
      bodyTimeout: 120_000,
    });
    const text = await res.body.text();
    const parsed = (
      text && res.headers['content-type']?.toString().includes('json') ? JSON.parse(text) : text
    ) as T;
    return { status: res.statusCode, body: parsed };
  }

  async expect<T>(status: number, method: string, path: string, body?: unknown, token?: string): Promise<T> {
    const res = await this.call<T>(method, path, body, token);
    if (res.status !== status) {
      throw new Error(
        `${method} ${path}: expected ${status}, got ${res.status} ${JSON.stringify(res.body).slice(0, 300)}`,
      );
    }
    return res.body;
  }
}

/** Runs `fn` over `items` with at most `n` at once. */
async function pool<T>(items: readonly T[], n: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) await fn(items[next++] as T);
  };
  await Promise.all(Array.from({ length: Math.min(n, items.length) }, worker));
}

export interface SluiceDriving extends Pick<Target, 'setup' | 'submit' | 'setLimit'> {
  /** Events the API refused or that could not be posted, for the target's stop statistics. */
  ingestStats(): { ingestRejected: number; ingestErrors: number; lastError: string | null };
}

/** Drives a Sluice API (single box or the distributed API service) for one workload. */
export function driveSluice(api: SluiceApi, s: TargetSetup, adminToken: string): SluiceDriving {
  const { workload, receiverUrl, runId } = s;
  const ids: string[] = new Array(workload.destinations.length);
  let rejected = 0;
  let errors = 0;
  let lastError: string | null = null;
  const steadySingle = workload.ingest.mode === 'steady' && !workload.ingest.batched;

  const eventOf = (e: PlannedEvent, createdAt: number) => ({
    type: EVENT_TYPE,
    payload: payloadOf(e.id, createdAt, workload.payloadBytes),
    destinationId: ids[e.dest] as string,
  });

  return {
    async setup() {
      const started = performance.now();
      const tenant = await api.expect<{ apiKey: string }>(
        201,
        'POST',
        '/v1/tenants',
        { name: `bench-${runId}` },
        adminToken,
      );
      api.token = tenant.apiKey;
      const indexes = workload.destinations.map((_, i) => i);
      await pool(indexes, SETUP_CONCURRENCY, async (i) => {
        const d = workload.destinations[i] as (typeof workload.destinations)[number];
        const created = await api.expect<{ id: string }>(201, 'POST', '/v1/destinations', {
          name: d.id,
          url: destinationUrl(receiverUrl, d),
          rateLimit: { limit: d.limit, period: 'second' },
          retry: {
            maxAttempts: workload.retry.attempts,
            initialDelayMs: workload.retry.initialDelayMs,
            maxDelayMs: workload.retry.maxDelayMs,
          },
          timeoutMs: 10_000,
        });
        ids[i] = created.id;
      });
      return { setupS: (performance.now() - started) / 1_000 };
    },

    async submit(events, createdAt) {
      try {
        if (steadySingle) {
          const answers = await Promise.all(
            events.map((e) => api.call('POST', '/v1/events', eventOf(e, createdAt))),
          );
          const accepted = answers.filter((a) => a.status === 202).length;
          rejected += events.length - accepted;
          return accepted;
        }
        let accepted = 0;
        for (let i = 0; i < events.length; i += 1_000) {
          const chunk = events.slice(i, i + 1_000);
          const body = JSON.stringify({ events: chunk.map((e) => eventOf(e, createdAt)) });
          const res = await api.call('POST', '/v1/events/batch', body);
          if (res.status === 202) accepted += chunk.length;
          else {
            rejected += chunk.length;
            lastError = `${res.status} ${JSON.stringify(res.body).slice(0, 200)}`;
          }
        }
        return accepted;
      } catch (err) {
        errors++;
        lastError = errorMessage(err);
        return 0;
      }
    },

    async setLimit(dest, limit) {
      const i = workload.destinations.findIndex((d) => d.id === dest);
      await api.expect(200, 'PATCH', `/v1/destinations/${ids[i]}`, {
        rateLimit: { limit, period: 'second' },
      });
    },

    ingestStats: () => ({ ingestRejected: rejected, ingestErrors: errors, lastError }),
  };
}
