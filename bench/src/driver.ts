/**
 * A driver process: runs one target (targets/*.ts) for one run and feeds it the workload —
 * the same generator for every target, so only the target differs. Forked by the runner
 * with the probe preloaded; speaks protocol.ts over IPC.
 *
 * Burst: chunks of ≤ 1000 events, each stamped just before its hand-over and awaited (the
 * target's own pace of taking events is part of its wall time). Steady: every step hands
 * over the events now due, stamped at hand-over, without waiting for the previous step
 * (at most MAX_OUTSTANDING steps outstanding; lag past the due time is reported); a step
 * when the next event is due, or every `stepMs` when the workload sets one (cost-curve).
 */

import { errorMessage, now, sleep } from './common.ts';
import type { AppliedChange, FromDriver, IngestStats, ToDriver } from './protocol.ts';
import type { CreateTarget, Target, TargetName } from './targets/target.ts';
import { type PlannedEvent, planEvents, type Workload } from './workload.ts';

const LOADERS: Record<TargetName, () => Promise<{ createTarget: CreateTarget }>> = {
  sluice: () => import('./targets/sluice.ts'),
  'sluice-distributed': () => import('./targets/sluice-distributed.ts'),
  'sluice-cluster': () => import('./targets/sluice-cluster.ts'),
  'bullmq-rlf': () => import('./targets/bullmq-rlf.ts'),
  ceiling: () => import('./targets/ceiling.ts'),
};

const CHUNK = 1_000;
const MAX_OUTSTANDING = 64;

function send(message: FromDriver): void {
  process.send?.(message);
}

async function ingest(target: Target, w: Workload, onT0: (t0: number) => void): Promise<IngestStats> {
  const plan = planEvents(w);
  let next = plan.next();
  const stats: IngestStats = { t0: 0, doneAt: 0, submitted: 0, accepted: 0, maxLagMs: 0, submitMs: 0 };
  const handOver = async (events: PlannedEvent[]): Promise<void> => {
    const createdAt = now();
    if (stats.t0 === 0) {
      stats.t0 = createdAt;
      onT0(createdAt);
    }
    stats.submitted += events.length;
    const accepted = await target.submit(events, createdAt);
    stats.accepted += accepted;
    stats.submitMs += now() - createdAt;
    if (w.ingest.mode === 'burst') {
      stats.chunksDoneMs ??= [];
      stats.chunksDoneMs.push(Math.round(now() - stats.t0));
    }
  };

  if (w.ingest.mode === 'burst') {
    while (!next.done) {
      const chunk: PlannedEvent[] = [];
      while (!next.done && chunk.length < CHUNK) {
        chunk.push(next.value);
        next = plan.next();
      }
      await handOver(chunk);
    }
  } else {
    const start = now();
    const outstanding = new Set<Promise<void>>();
    while (!next.done) {
      const t = now();
      const due: PlannedEvent[] = [];
      while (!next.done && start + next.value.offMs <= t && due.length < CHUNK * 10) {
        due.push(next.value);
        next = plan.next();
      }
      if (due.length > 0) {
        stats.maxLagMs = Math.max(stats.maxLagMs, t - (start + (due[0] as PlannedEvent).offMs));
        const p = handOver(due).finally(() => outstanding.delete(p));
        outstanding.add(p);
        if (outstanding.size >= MAX_OUTSTANDING) await Promise.race(outstanding);
      }
      if (!next.done) {
        // The next step: when the next event is due (at most 50 ms on), or on the workload's step.
        const step = w.ingest.stepMs;
        const at = step ? Math.ceil((now() - start + 1) / step) * step : next.value.offMs;
        await sleep(Math.max(0, Math.min(step ?? 50, start + at - now())));
      }
    }
    await Promise.all(outstanding);
  }
  stats.doneAt = now();
  return stats;
}

/**
 * Applies the workload's limit changes at t0 + atMs, each reported when acknowledged. A
 * destination's changes go one after another: the next is sent at its time or once the one
 * before is acknowledged, whichever is later. Sent while an earlier one is unanswered, two
 * PATCHes of one destination may be applied in either order (HTTP orders neither across
 * connections), and on a loaded machine they were: a lowering sent 1 s before a raise was
 * answered 0.7 s after it, and the destination ended at the lowered limit.
 */
function scheduleChanges(target: Target, w: Workload, t0: number, timers: NodeJS.Timeout[]): void {
  const limits = new Map(w.destinations.map((d) => [d.id, d.limit]));
  /** Per destination: its last change, once acknowledged or failed. */
  const previous = new Map<string, Promise<void>>();
  for (const c of [...w.changes].sort((a, b) => a.atMs - b.atMs)) {
    const from = limits.get(c.dest) as number;
    limits.set(c.dest, c.limit);
    const due = new Promise<void>((resolve) => {
      timers.push(setTimeout(resolve, Math.max(0, t0 + c.atMs - now())));
    });
    const done = Promise.all([due, previous.get(c.dest)]).then(async () => {
      const sentAt = now();
      try {
        await target.setLimit(c.dest, c.limit);
        const change: AppliedChange = { dest: c.dest, from, limit: c.limit, sentAt, appliedAt: now() };
        send({ kind: 'changed', change });
      } catch (err) {
        process.stderr.write(`limit change ${c.dest} → ${c.limit} failed: ${errorMessage(err)}\n`);
      }
    });
    previous.set(c.dest, done);
  }
}

let target: Target | undefined;
let workload: Workload | undefined;
const timers: NodeJS.Timeout[] = [];

async function handle(message: ToDriver): Promise<void> {
  switch (message.kind) {
    case 'setup': {
      const { createTarget } = await LOADERS[message.target]();
      workload = message.workload;
      target = await createTarget(message);
      const setup = await target.setup();
      send({ kind: 'ready', pids: target.pids(), groups: target.processGroups?.() ?? {}, setup });
      return;
    }
    case 'start': {
      const t = target as Target;
      const w = workload as Workload;
      const stats = await ingest(t, w, (t0) => scheduleChanges(t, w, t0, timers));
      send({ kind: 'ingested', stats });
      return;
    }
    case 'snapshot':
      send({ kind: 'snapshot', mark: message.mark, data: await (target as Target).snapshot() });
      return;
    case 'storage':
      send({ kind: 'storage', data: (await (target as Target).storage?.()) ?? null });
      return;
    case 'stop': {
      for (const timer of timers) clearTimeout(timer);
      const stats = target ? await target.stop() : {};
      send({ kind: 'stopped', stats });
      process.disconnect?.();
      setTimeout(() => process.exit(0), 100).unref();
      return;
    }
  }
}

process.on('message', (message: ToDriver) => {
  handle(message).catch((err: unknown) => {
    send({ kind: 'failed', error: err instanceof Error ? (err.stack ?? err.message) : String(err) });
    setTimeout(() => process.exit(1), 100);
  });
});
