/**
 * What both Sluice targets share — the single box (sluice.ts) and the distributed shape
 * (sluice-distributed.ts), whose API service serves the same HTTP API:
 *
 * - starting a Sluice process as its operator would (`node services/<name>/src/main.ts`,
 *   a free port, loopback destinations allowed, warn logs), with the bench's probe preloaded
 *   for its event-loop delay and `--cpu-prof` when profiling, and stopping it with SIGTERM;
 * - reading a process's Prometheus text at `/metrics`.
 *
 * The operational endpoints (`/healthz`, `/metrics`: outside the API, the latter not JSON)
 * are read with undici here; the API itself is driven only through `@sluice/client`
 * (sluice-client.ts).
 */

import { type ChildProcess, spawn } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { request } from 'undici';
import { freePort, sleep } from '../common.ts';
import { parseMetrics, type SluiceMetrics } from './sluice-metrics.ts';
import type { TargetOptions } from './target.ts';

const PROBE = fileURLToPath(new URL('../probe.ts', import.meta.url));
const START_TIMEOUT_MS = 30_000;
const STOP_TIMEOUT_MS = 40_000;

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
  /** The process's own settings (the state it runs on, the admin token…). */
  env: Record<string, string>;
  /** Listen on this port (a restart keeps its address); else a free one. */
  port?: number;
}

/** Starts one Sluice process on a free port; resolves once its /healthz answers 200. */
export async function startSluice(o: SpawnOptions): Promise<SluiceProcess> {
  const port = o.port ?? (await freePort());
  const nodeArgs = ['--import', PROBE];
  if (o.options.profile) nodeArgs.push('--cpu-prof', `--cpu-prof-dir=${o.profileDir}`);
  // $BENCH_NODE_ARGS: Node/V8 flags for every Sluice process (`--trace-gc`, a heap size…),
  // which NODE_OPTIONS does not all allow; an experiment's, never a default.
  if (process.env.BENCH_NODE_ARGS) nodeArgs.push(...process.env.BENCH_NODE_ARGS.split(' '));
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
