// Markdown tables from run-cpu.mjs's records: every run, then per scenario the medians of
// each peer and their ratios.
//
//   node bench/peers/report.mjs <machine-cpu.ndjson> [--label-prefix peers-cpu] [--base bullmq-rlf]
import { readFileSync } from 'node:fs';

const argv = process.argv.slice(2);
const opt = (name, def) => {
  const i = argv.indexOf(name);
  if (i < 0) return def;
  const [, v] = argv.splice(i, 2);
  return v;
};
const prefix = opt('--label-prefix', '');
const base = opt('--base', 'bullmq-rlf');
const [file] = argv;
if (!file) {
  console.error('usage: report.mjs <machine-cpu.ndjson> [--label-prefix p] [--base peer]');
  process.exit(2);
}
const records = readFileSync(file, 'utf8')
  .split('\n')
  .filter(Boolean)
  .map((l) => JSON.parse(l))
  .filter((r) => (r.label ?? '').startsWith(prefix));

const median = (xs) => {
  const s = xs.filter((x) => x != null).sort((a, b) => a - b);
  if (!s.length) return null;
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};
/** Every process's own CPU time summed (sampler aside): older records have only the groups. */
const tasksS = (r) =>
  r.machine.tasks_cpu_s ??
  Object.entries(r.machine.by_group)
    .filter(([g]) => g !== 'sampler')
    .reduce((n, [, v]) => n + v, 0);
const f = (x, d = 2) => (x == null ? '—' : Number(x).toFixed(d));
const row = (cells) => `| ${cells.join(' | ')} |`;

const scenarios = [...new Set(records.map((r) => r.scenario))];
const peers = [...new Set(records.map((r) => r.peer))];
const lines = [];
for (const sc of scenarios) {
  lines.push(`### ${sc}`, '');
  lines.push(
    row([
      'peer',
      'median CPU ms / delivery (/proc/stat)',
      'median CPU ms / delivery (per process, summed)',
      'median deliveries/s',
      'median p99 ms',
      'worst ratio (max over runs)',
      'delivered',
      'runs',
    ]),
    row(['---', '--:', '--:', '--:', '--:', '--:', '--:', '--:']),
  );
  const med = {};
  for (const p of peers) {
    const rs = records.filter((r) => r.scenario === sc && r.peer === p);
    if (!rs.length) continue;
    med[p] = {
      cpu: median(rs.map((r) => r.machine.cpu_ms_per_delivery)),
      tasks: median(rs.map((r) => (1000 * tasksS(r)) / r.delivered)),
      dps: median(rs.map((r) => r.deliveries_per_s)),
      p99: median(rs.map((r) => r.latency_ms.p99)),
      ratio: Math.max(...rs.map((r) => r.max_ratio)),
    };
    const delivered = rs.map((r) => `${r.delivered}${r.completed ? '' : ' (incomplete)'}`).join(', ');
    lines.push(
      row([
        `\`${p}\``,
        f(med[p].cpu, 3),
        f(med[p].tasks, 3),
        f(med[p].dps, 0),
        f(med[p].p99, 1),
        f(med[p].ratio),
        delivered,
        rs.length,
      ]),
    );
  }
  const b = med[base];
  for (const p of peers) {
    if (p === base || !med[p] || !b) continue;
    lines.push(
      '',
      `\`${p}\` ÷ \`${base}\` (medians): CPU per delivery ${f(med[p].cpu / b.cpu)} × ` +
        `(per process, summed: ${f(med[p].tasks / b.tasks)} ×), ` +
        `deliveries/s ${f(med[p].dps / b.dps)} ×, p99 latency ${f(med[p].p99 / b.p99)} ×.`,
    );
  }
  lines.push('', 'Every run (CPU: whole machine over the delivery window, minus the sampler):', '');
  lines.push(
    row([
      'peer',
      'label',
      'window s',
      'CPU s',
      'per process s',
      'ms / delivery',
      'machine busy %',
      'deliveries/s',
      'p50 ms',
      'p99 ms',
      'worst ratio',
      'steal s',
      'other s',
      'by process group (s)',
    ]),
    row(['---', '---', '--:', '--:', '--:', '--:', '--:', '--:', '--:', '--:', '--:', '--:', '--:', '---']),
  );
  for (const r of records.filter((x) => x.scenario === sc)) {
    const m = r.machine;
    const groups = Object.entries(m.by_group)
      .filter(([g]) => g !== 'other' && g !== 'sampler')
      .sort((a, c) => c[1] - a[1])
      .map(([g, v]) => `${g} ${f(v)}`)
      .join(', ');
    lines.push(
      row([
        `\`${r.peer}\``,
        r.label ?? '',
        f(m.window_s),
        f(m.cpu_s),
        f(tasksS(r)),
        f(m.cpu_ms_per_delivery, 3),
        f(m.busy_pct_of_machine, 0),
        f(r.deliveries_per_s, 0),
        f(r.latency_ms.p50, 1),
        f(r.latency_ms.p99, 1),
        f(r.max_ratio),
        f(m.steal_s),
        f(m.by_group.other ?? 0),
        groups,
      ]),
    );
  }
  lines.push('');
}
console.log(lines.join('\n'));
