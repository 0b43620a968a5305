/**
 * Summarises a V8 CPU profile (`node --cpu-prof`, what `npm run bench -- --profile` gives
 * Sluice): self time by function and by package/module, so a run's cost has a name.
 *
 *   node bench/src/profile.ts <file.cpuprofile> [--top 25] [--turns 15]
 *
 * `--turns MS`: the main thread's busy stretches instead — runs of samples with no idle one
 * between them, i.e. what held the event loop and for how long (a tick due meanwhile waits
 * that long): their distribution, and in those of MS or more, where the time went, by
 * function and by the outermost Sluice frame that led there. `--from S --to S` keep the
 * samples of those seconds from the profile's start (e.g. the run, without start-up and
 * set-up); `--timeline` prints each second's busy milliseconds, to find them.
 */

import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
  children?: number[];
}

interface CpuProfile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

interface ProfileSummary {
  totalMs: number;
  functions: { name: string; where: string; selfMs: number; pct: number }[];
  modules: { module: string; selfMs: number; pct: number }[];
}

/** The package or area a script belongs to: `fastify`, `@sluice/engine`, `node:internal`… */
function moduleOf(url: string): string {
  if (url === '') return '(native / VM)';
  const nm = url.lastIndexOf('/node_modules/');
  if (nm >= 0) {
    const rest = url.slice(nm + 14).split('/');
    return rest[0]?.startsWith('@') ? `${rest[0]}/${rest[1]}` : (rest[0] ?? url);
  }
  const pkg = /\/(packages|services)\/([^/]+)\/src\/([^/]+)$/.exec(url);
  if (pkg) return `sluice ${pkg[2]}/${pkg[3]}`;
  if (url.startsWith('node:')) return url.split('/')[0] ?? url;
  return url.replace(/^file:\/\//, '');
}

/** `packages/engine/src/tick/tick.ts:86`: a frame's script, from the package on, and line. */
const whereOf = (url: string, lineNumber: number): string =>
  url ? `${url.replace(/^.*\/(node_modules|packages|services)\//, '$1/')}:${lineNumber + 1}` : '';

function summarise(profile: CpuProfile, top = 25): ProfileSummary {
  const selfUs = new Map<number, number>();
  profile.samples.forEach((id, i) => {
    selfUs.set(id, (selfUs.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0));
  });
  const byFunction = new Map<string, { name: string; where: string; us: number }>();
  const byModule = new Map<string, number>();
  let total = 0;
  for (const node of profile.nodes) {
    const us = selfUs.get(node.id) ?? 0;
    if (us === 0) continue;
    total += us;
    const { functionName, url, lineNumber } = node.callFrame;
    const name = functionName || '(anonymous)';
    const where = whereOf(url, lineNumber);
    const k = `${name}@${where}`;
    const entry = byFunction.get(k) ?? { name, where, us: 0 };
    entry.us += us;
    byFunction.set(k, entry);
    const m = moduleOf(url);
    byModule.set(m, (byModule.get(m) ?? 0) + us);
  }
  const pct = (us: number): number => Math.round((1_000 * us) / total) / 10;
  return {
    totalMs: Math.round(total / 1_000),
    functions: [...byFunction.values()]
      .sort((a, b) => b.us - a.us)
      .slice(0, top)
      .map((f) => ({ name: f.name, where: f.where, selfMs: Math.round(f.us / 1_000), pct: pct(f.us) })),
    modules: [...byModule.entries()]
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([module, us]) => ({ module, selfMs: Math.round(us / 1_000), pct: pct(us) })),
  };
}

interface TurnsSummary {
  /** Busy stretches by length: how many reached each bound (ms), and the time in them. */
  histogram: { atLeastMs: number; count: number; ms: number }[];
  longMs: number;
  functions: { name: string; where: string; ms: number }[];
  entries: { name: string; where: string; ms: number }[];
}

/** Seconds from the profile's start: only samples in [from, to) count. */
interface Span {
  from: number;
  to: number;
}

function turns(profile: CpuProfile, thresholdMs: number, top: number, span: Span): TurnsSummary {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const idle = (id: number): boolean => byId.get(id)?.callFrame.functionName === '(idle)';
  /** The outermost frame of Sluice's own code on a sample's stack. */
  const entryOf = (id: number): ProfileNode | undefined => {
    let found: ProfileNode | undefined;
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
      const n = byId.get(at);
      if (n && /\/(packages|services)\/[^/]+\/src\//.test(n.callFrame.url)) found = n;
    }
    return found;
  };
  const runs: { us: number; samples: number[]; deltas: number[] }[] = [];
  let run: { us: number; samples: number[]; deltas: number[] } | null = null;
  let at = 0;
  profile.samples.forEach((id, i) => {
    at += profile.timeDeltas[i] ?? 0;
    const us = profile.timeDeltas[i + 1] ?? 0; // a sample's time is the gap to the next one
    if (idle(id) || at < span.from * 1e6 || at >= span.to * 1e6) {
      run = null;
      return;
    }
    if (run === null) {
      run = { us: 0, samples: [], deltas: [] };
      runs.push(run);
    }
    run.us += us;
    run.samples.push(id);
    run.deltas.push(us);
  });
  const bounds = [1, 5, 10, 15, 20, 30, 50, 100, 250];
  const histogram = bounds.map((b) => {
    const over = runs.filter((r) => r.us >= b * 1_000);
    return { atLeastMs: b, count: over.length, ms: Math.round(over.reduce((a, r) => a + r.us, 0) / 1_000) };
  });
  const fns = new Map<string, { name: string; where: string; us: number }>();
  const entries = new Map<string, { name: string; where: string; us: number }>();
  let longUs = 0;
  const add = (m: typeof fns, n: ProfileNode | undefined, us: number): void => {
    const name = n ? n.callFrame.functionName || '(anonymous)' : '(no Sluice frame)';
    const where = n ? whereOf(n.callFrame.url, n.callFrame.lineNumber) : '';
    const k = `${name}@${where}`;
    const e = m.get(k) ?? { name, where, us: 0 };
    e.us += us;
    m.set(k, e);
  };
  for (const r of runs) {
    if (r.us < thresholdMs * 1_000) continue;
    longUs += r.us;
    r.samples.forEach((id, i) => {
      const us = r.deltas[i] ?? 0;
      add(fns, byId.get(id), us);
      add(entries, entryOf(id), us);
    });
  }
  const ranked = (m: typeof fns) =>
    [...m.values()]
      .sort((a, b) => b.us - a.us)
      .slice(0, top)
      .map((e) => ({ name: e.name, where: e.where, ms: Math.round(e.us / 1_000) }));
  return { histogram, longMs: Math.round(longUs / 1_000), functions: ranked(fns), entries: ranked(entries) };
}

function printTurns(t: TurnsSummary, thresholdMs: number): void {
  process.stdout.write('busy stretches of the main thread (no idle sample between):\n');
  for (const h of t.histogram)
    process.stdout.write(
      `  ≥ ${String(h.atLeastMs).padStart(3)} ms: ${String(h.count).padStart(7)}  (${h.ms} ms in them)\n`,
    );
  process.stdout.write(`\nin those of ${thresholdMs} ms or more (${t.longMs} ms), by function:\n`);
  for (const f of t.functions)
    process.stdout.write(`  ${String(f.ms).padStart(7)} ms  ${f.name}  ${f.where}\n`);
  process.stdout.write('\n…and by the outermost Sluice frame under it:\n');
  for (const f of t.entries)
    process.stdout.write(`  ${String(f.ms).padStart(7)} ms  ${f.name}  ${f.where}\n`);
}

/** Each second of the profile: how many milliseconds of it the thread was not idle. */
function printTimeline(profile: CpuProfile): void {
  const idleIds = new Set(
    profile.nodes.filter((n) => n.callFrame.functionName === '(idle)').map((n) => n.id),
  );
  const busy: number[] = [];
  let at = 0;
  profile.samples.forEach((id, i) => {
    at += profile.timeDeltas[i] ?? 0;
    const second = Math.floor(at / 1e6);
    busy[second] = (busy[second] ?? 0) + (idleIds.has(id) ? 0 : (profile.timeDeltas[i + 1] ?? 0) / 1_000);
  });
  process.stdout.write('busy ms in each second from the start:\n');
  for (let s = 0; s < busy.length; s += 10)
    process.stdout.write(
      `  ${String(s).padStart(4)} s: ${busy
        .slice(s, s + 10)
        .map((ms) => String(Math.round(ms ?? 0)).padStart(4))
        .join(' ')}\n`,
    );
}

if (import.meta.main) {
  const { positionals, values } = parseArgs({
    allowPositionals: true,
    options: {
      top: { type: 'string', default: '25' },
      turns: { type: 'string' },
      from: { type: 'string', default: '0' },
      to: { type: 'string', default: 'Infinity' },
      timeline: { type: 'boolean', default: false },
    },
  });
  const file = positionals[0];
  if (!file) {
    process.stderr.write('usage: node bench/src/profile.ts <file.cpuprofile> [--top 25] [--turns 15]\n');
    process.exit(2);
  }
  if (values.turns !== undefined || values.timeline) {
    const profile = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
    if (values.timeline) printTimeline(profile);
    const span = { from: Number(values.from), to: Number(values.to) };
    if (values.turns !== undefined)
      printTurns(turns(profile, Number(values.turns), Number(values.top), span), Number(values.turns));
    process.exit(0);
  }
  const s = summarise(JSON.parse(readFileSync(file, 'utf8')) as CpuProfile, Number(values.top));
  process.stdout.write(`${s.totalMs} ms of samples\n\nself time by module:\n`);
  for (const m of s.modules)
    process.stdout.write(
      `  ${String(m.pct).padStart(5)} %  ${String(m.selfMs).padStart(7)} ms  ${m.module}\n`,
    );
  process.stdout.write('\nself time by function:\n');
  for (const f of s.functions) {
    process.stdout.write(
      `  ${String(f.pct).padStart(5)} %  ${String(f.selfMs).padStart(7)} ms  ${f.name}  ${f.where}\n`,
    );
  }
}
