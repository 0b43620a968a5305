/**
 * Preloaded into a measured process (`node --import bench/src/probe.ts …`): every
 * $BENCH_PROBE_MS (default 1000) it appends one line to $BENCH_PROBE_FILE with the
 * event-loop delay of the interval (p50/p99/max, ms), RSS and heap (MB) and the CPU the process
 * has used so far (ms). This is how the bench sees inside Sluice's process without touching
 * Sluice's code. Costs one timer a second
 * and the histogram's 10 ms timer. The main thread only: a worker thread (the single box's
 * delivery and checkpoint threads) runs preloads too, and would pay for a probe of its own and
 * write its own loop's delay into the main thread's series. With $BENCH_CALLS_FILE set it also
 * counts the process's Redis commands and Postgres statements (calls-probe.ts).
 *
 * The histogram's timer wakes the process 100 times a second, which costs as much as an idle
 * Sluice process itself (docs/performance.md, How to measure). So while `idle.pause` exists
 * in the probe file's directory (the cost curve's idle tail, `pauseProbes`) the histogram is
 * off and the lines carry no delay: what the tail measures is the process, not its probe.
 */

import { appendFileSync, existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { isMainThread } from 'node:worker_threads';

/** While this file exists in a run's directory, its probes leave the event loop alone. */
export const PROBE_PAUSE_FILE = 'idle.pause';

const file = process.env.BENCH_PROBE_FILE;
if (file && isMainThread) {
  const resolutionMs = 10;
  const histogram = monitorEventLoopDelay({ resolution: resolutionMs });
  histogram.enable();
  // The histogram records whole timer periods: the delay is what exceeds the resolution.
  const delay = (ns: number): number => Math.round(Math.max(0, ns / 1e6 - resolutionMs) * 100) / 100;
  const cpuMs = (): number => {
    const { user, system } = process.cpuUsage();
    return (user + system) / 1_000;
  };
  const pauseFile = join(dirname(file), PROBE_PAUSE_FILE);
  let paused = false;
  const timer = setInterval(
    () => {
      const memory = process.memoryUsage();
      const line = {
        t: performance.timeOrigin + performance.now(),
        ...(paused
          ? {}
          : {
              eldP50: delay(histogram.percentile(50)),
              eldP99: delay(histogram.percentile(99)),
              eldMax: delay(histogram.max),
            }),
        rssMb: Math.round(memory.rss / 1e5) / 10,
        heapMb: Math.round(memory.heapUsed / 1e5) / 10,
        // Every thread's CPU so far (user + system), to follow the idle tail second by second.
        cpuMs: Math.round(cpuMs()),
      };
      histogram.reset();
      const pause = existsSync(pauseFile);
      if (pause !== paused) {
        paused = pause;
        if (pause) histogram.disable();
        else histogram.enable();
      }
      try {
        appendFileSync(file, `${JSON.stringify(line)}\n`);
      } catch {
        // the run's directory is gone: nothing to report to
      }
    },
    Number(process.env.BENCH_PROBE_MS ?? 1_000),
  );
  timer.unref();
}

if (process.env.BENCH_CALLS_FILE && isMainThread) await import('./calls-probe.ts');
