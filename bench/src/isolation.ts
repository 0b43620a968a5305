/**
 * An isolation scenario (slow-receiver, busy-tenant) on one target: two runs from scratch —
 * the measured destinations alone, then the same traffic beside the noise — and one record,
 * the beside run's, with both runs' measured latency side by side (`isolation`). The alone
 * run's full record stays in its own directory (`alone/result.json`).
 */

import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { newRunId, round } from './common.ts';
import type { MeasuredLatency } from './measured.ts';
import { type RunOptions, runOnce } from './run.ts';
import { aloneOf } from './workload.ts';

export interface IsolationResult {
  alone: MeasuredLatency | null;
  beside: MeasuredLatency | null;
  /** The beside p99 ÷ the alone p99 (a lower bound when the beside p99 is one). */
  p99Ratio: number | null;
  aloneRunId: string;
}

export async function runIsolation(o: RunOptions): Promise<Record<string, unknown>> {
  const aloneDir = join(o.runDir, 'alone');
  const besideDir = join(o.runDir, 'beside');
  mkdirSync(aloneDir, { recursive: true });
  mkdirSync(besideDir, { recursive: true });
  const aloneRunId = newRunId();
  o.log('  alone:');
  const alone = await runOnce({ ...o, workload: aloneOf(o.workload), runDir: aloneDir, runId: aloneRunId });
  writeFileSync(join(aloneDir, 'result.json'), JSON.stringify(alone, null, 1));
  o.log(`    ${measuredLine(alone.measured as MeasuredLatency | null)}`);
  o.log('  beside the noise:');
  const beside = await runOnce({ ...o, runDir: besideDir });
  o.log(`    ${measuredLine(beside.measured as MeasuredLatency | null)}`);
  const a = (alone.measured as MeasuredLatency | null) ?? null;
  const b = (beside.measured as MeasuredLatency | null) ?? null;
  const ratio = a?.p99Ms && typeof b?.p99Ms === 'number' ? b.p99Ms / a.p99Ms : null;
  const isolation: IsolationResult = {
    alone: a,
    beside: b,
    p99Ratio: round(ratio),
    aloneRunId,
  };
  return { ...beside, isolation };
}

function measuredLine(m: MeasuredLatency | null): string {
  if (m === null) return 'nothing measured';
  const p99 = `${m.p99AtLeast ? '> ' : ''}${m.p99Ms}`;
  return `measured ${m.delivered}/${m.events} · p50 ${m.p50Ms} p99 ${p99} ms · ${m.late} late (> ${m.lateAfterS} s or not delivered)`;
}
