/**
 * Where the bench's records go and which it keeps.
 *
 * `results/runs.ndjson` (one summary per run) and `results/sessions.ndjson` (one per
 * `npm run bench`) are committed and hold only what BENCHMARKS.md shows: for each
 * scenario × target, the runs of the latest session that ran it without a `--label`, and
 * the same for each reported variant (`VARIANTS`). Earlier sessions stay in git's history.
 * The report prunes the two files to that after every session (`pruneRecords`), so a new
 * session replaces its cells' old runs instead of growing the files.
 *
 * A session under any other `--label` is a development or A/B run: its records go to
 * `results/dev/` (ignored by git) in the same two files, and its tables to
 * `results/dev/report.md`.
 */

import { appendFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { MachineInfo } from './machine.ts';
import { type Cells, type RunRecord, selectCells } from './report-rows.ts';

export interface SessionRecord {
  session: string;
  date: string;
  command: string;
  label: string | null;
  sluiceRef: string | null;
  sluiceDirty: boolean | null;
  sluiceEnv: Record<string, string>;
  machine: MachineInfo;
}

/**
 * The labels BENCHMARKS.md reports, each apart from the unlabelled runs, with what it
 * measures. Recording a new one in the committed files takes a line here.
 */
export const VARIANTS: Record<string, string> = {
  fanout:
    'Events posted by type, without destinationId (`BENCH_FANOUT=type`: each destination takes a type of its own), so each goes through the fan-out: the baseline of `filter`.',
  filter:
    'As `fanout`, with a filter of five conditions on every destination that its events all match (`BENCH_DESTINATION_FILTER=5`): the cost of evaluating a filter at ingest. Against `fanout` of the same day.',
  transform:
    'Every destination with a transform that builds a new payload of three fields (`BENCH_DESTINATION_TRANSFORM=trivial`), run at each attempt in the QuickJS sandbox on a transform thread: its cost per delivery. Against the unlabelled throughput runs of the same day.',
  'auth-bearer':
    'Every destination with a credential, `BENCH_DESTINATION_AUTH=bearer`: a bearer token and a header of its own on every attempt. Against the unlabelled throughput runs of the same day.',
  'auth-oauth2':
    'Every destination with OAuth2 client credentials, `BENCH_DESTINATION_AUTH=oauth2`: a token from a token endpoint the bench serves on loopback (tokens of an hour), cached and shared by the workers. Against the unlabelled throughput runs of the same day; the token requests of each run are in its driver log (`[bench] OAuth2 token requests`).',
  'cluster-ha':
    'The distributed shape on the Redis Cluster with a replica a master (`--cluster-replicas 1`), against one Redis, in a session of its own: what redundancy adds.',
};

export const RUNS_FILE = 'runs.ndjson';
export const SESSIONS_FILE = 'sessions.ndjson';

/** Whether a session's records are the committed ones: unlabelled, or a reported variant's. */
export const isReported = (label: string | null): boolean => label === null || Object.hasOwn(VARIANTS, label);

/** Where a session under `label` records its runs and itself. */
export const recordsDir = (resultsDir: string, label: string | null): string =>
  isReported(label) ? resultsDir : join(resultsDir, 'dev');

const lines = (file: string): string[] =>
  existsSync(file) ? readFileSync(file, 'utf8').split('\n').filter(Boolean) : [];

export function readRecords(dir: string): { runs: RunRecord[]; sessions: SessionRecord[] } {
  return {
    runs: lines(join(dir, RUNS_FILE)).map((l) => JSON.parse(l) as RunRecord),
    sessions: lines(join(dir, SESSIONS_FILE)).map((l) => JSON.parse(l) as SessionRecord),
  };
}

export function appendRecord(
  dir: string,
  file: typeof RUNS_FILE | typeof SESSIONS_FILE,
  record: object,
): void {
  mkdirSync(dir, { recursive: true });
  appendFileSync(join(dir, file), `${JSON.stringify(record)}\n`);
}

/** The report's cells: the unlabelled runs', and each reported variant's that has runs. */
export function reportedCells(runs: RunRecord[]): { cells: Cells; variants: [string, Cells][] } {
  return {
    cells: selectCells(runs),
    variants: Object.keys(VARIANTS)
      .map((label): [string, Cells] => [label, selectCells(runs, label)])
      .filter(([, cells]) => cells.size > 0),
  };
}

/**
 * The lines of the two files that the report uses, in their order and unchanged: every run
 * in one of its cells, and the sessions of those runs.
 */
export function prune(runLines: string[], sessionLines: string[]): { runs: string[]; sessions: string[] } {
  const runs = runLines.map((l) => JSON.parse(l) as RunRecord);
  const { cells, variants } = reportedCells(runs);
  const shown = new Set([cells, ...variants.map(([, c]) => c)].flatMap((c) => [...c.values()].flat()));
  const used = new Set([...shown].map((r) => r.session));
  return {
    runs: runLines.filter((_, i) => shown.has(runs[i] as RunRecord)),
    sessions: sessionLines.filter((l) => used.has((JSON.parse(l) as SessionRecord).session)),
  };
}

export interface Pruned {
  runs: { before: number; after: number };
  sessions: { before: number; after: number };
}

/** Rewrites `dir`'s two files to what the report uses (`prune`); a file already so is left untouched. */
export function pruneRecords(dir: string): Pruned {
  const runLines = lines(join(dir, RUNS_FILE));
  const sessionLines = lines(join(dir, SESSIONS_FILE));
  const kept = prune(runLines, sessionLines);
  const write = (file: string, all: string[], keep: string[]): void => {
    if (keep.length !== all.length) writeFileSync(join(dir, file), keep.map((l) => `${l}\n`).join(''));
  };
  write(RUNS_FILE, runLines, kept.runs);
  write(SESSIONS_FILE, sessionLines, kept.sessions);
  return {
    runs: { before: runLines.length, after: kept.runs.length },
    sessions: { before: sessionLines.length, after: kept.sessions.length },
  };
}
