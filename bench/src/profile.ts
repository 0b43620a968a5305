/**
 * Summarises a V8 CPU profile (`node --cpu-prof`, what `npm run bench -- --profile` gives
 * Sluice): self time by function and by package/module, so a run's cost has a name.
 *
 *   node bench/src/profile.ts <file.cpuprofile> [--top 25]
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
    const where = url
      ? `${url.replace(/^.*\/(node_modules|packages|services)\//, '$1/')}:${lineNumber + 1}`
      : '';
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

if (import.meta.main) {
  const { positionals, values } = parseArgs({
    allowPositionals: true,
    options: { top: { type: 'string', default: '25' } },
  });
  const file = positionals[0];
  if (!file) {
    process.stderr.write('usage: node bench/src/profile.ts <file.cpuprofile> [--top 25]\n');
    process.exit(2);
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
