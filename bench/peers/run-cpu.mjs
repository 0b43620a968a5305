// One run of the peers harness (its run.mjs, unchanged) with the whole machine's CPU counted
// over the run's delivery window.
//
//   node bench/peers/run-cpu.mjs --peers-dir <scratch harness> [--out <file.ndjson>] \
//        <peer> <scenario> [run.mjs's own arguments: --label x, --time-limit s, KEY=VALUE…]
//
// The harness samples the machine's busy % over its whole run (peer start → stop, the peer's
// own start included: for Sluice that is four services starting and migrating). Here the
// window is the delivery window the harness's analysis reports: the first event's creation
// (`first_create_ms`) → the last first 2xx at the sink (`last_delivery_ms`).
//
// Sampled while the run goes: /proc/stat every 100 ms (the machine's busy ticks: user, nice,
// system, irq, softirq — not idle, iowait or steal), and every 500 ms each process's utime +
// stime from /proc/<pid>/stat, grouped (postgres, redis-server, the sink, the peer, Sluice's
// services, the harness's runner, this sampler, everything else). Both are interpolated
// linearly at the window's edges. The headline, `cpu_s`, is the machine's busy time minus
// this sampler's own (measurement, not the system under test); `by_group.other` is what no
// group explains — another program on the machine shows there. `tasks_cpu_s` (every
// process's own CPU time, summed) and `idle_based_cpu_s` (window × cores − idle − steal) are
// cross-checks of the tick-sampled busy time.
//
// Appends one JSON line per run to --out (default <peers-dir>/results/machine-cpu.ndjson)
// and prints it.
import { execFileSync, spawn } from 'node:child_process';
import { appendFileSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { dirname, join, resolve } from 'node:path';

const argv = process.argv.slice(2);
const opt = (name) => {
  const i = argv.indexOf(name);
  if (i < 0) return undefined;
  const [, v] = argv.splice(i, 2);
  return v;
};
const peersDirArg = opt('--peers-dir') ?? process.env.PEERS_DIR;
if (!peersDirArg) {
  console.error('usage: run-cpu.mjs --peers-dir <harness> [--out file] <peer> <scenario> [run.mjs args]');
  process.exit(2);
}
const peersDir = resolve(peersDirArg);
const out = resolve(opt('--out') ?? join(peersDir, 'results', 'machine-cpu.ndjson'));
const [peer, scenario] = argv.filter((a) => !a.startsWith('--') && !a.includes('='));

const CLK_TCK = 100; // USER_HZ: 100 on every Linux the harness runs on
const now = () => performance.timeOrigin + performance.now();
const self = process.pid;

// ---- /proc/stat: the machine
function machine() {
  const f = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1).map(Number);
  const [user, nice, system, idle, iowait, irq, softirq, steal] = f;
  return { busy: user + nice + system + irq + softirq, idle: idle + iowait, steal: steal ?? 0 };
}

// ---- /proc/<pid>/stat: every process, grouped
const groupOf = new Map(); // `${pid}:${starttime}` -> group
function classify(pid, comm) {
  if (pid === self) return 'sampler';
  if (comm === 'postgres') return 'postgres';
  if (comm === 'redis-server') return 'redis-server';
  let cmd = '';
  try {
    cmd = readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ');
  } catch {
    return 'other';
  }
  if (/\/sink(-harness)?\.mjs\b/.test(cmd)) return 'sink';
  if (/\/peer-[\w-]+\.mjs\b/.test(cmd)) return 'peer';
  const service = /services\/([\w-]+)\/src\/main\.ts/.exec(cmd);
  if (service) return `sluice-${service[1]}`;
  if (/\brun\.mjs\b/.test(cmd)) return 'runner';
  return 'other';
}
const alive = new Map(); // key -> {group, ticks}
const held = new Map(); // group -> ticks of processes that exited
function processes() {
  const seen = new Set();
  const sums = {};
  for (const d of readdirSync('/proc')) {
    const c = d.charCodeAt(0);
    if (c < 48 || c > 57) continue;
    let s;
    try {
      s = readFileSync(`/proc/${d}/stat`, 'utf8');
    } catch {
      continue;
    }
    const close = s.lastIndexOf(')');
    const comm = s.slice(s.indexOf('(') + 1, close);
    const f = s.slice(close + 2).split(' ');
    const ticks = Number(f[11]) + Number(f[12]);
    const key = `${d}:${f[19]}`;
    let group = groupOf.get(key);
    if (group === undefined) {
      group = classify(Number(d), comm);
      groupOf.set(key, group);
    }
    seen.add(key);
    alive.set(key, { group, ticks });
  }
  for (const [key, p] of alive) {
    if (seen.has(key)) continue;
    held.set(p.group, (held.get(p.group) ?? 0) + p.ticks);
    alive.delete(key);
  }
  for (const [g, t] of held) sums[g] = t;
  for (const p of alive.values()) sums[p.group] = (sums[p.group] ?? 0) + p.ticks;
  return sums;
}

const mSamples = [];
const pSamples = [];
const sampleMachine = () => {
  const u = process.cpuUsage();
  mSamples.push({ t: now(), ...machine(), sampler: (u.user + u.system) / 1e6 });
};
// A group's sum only grows: an exited process's last ticks are held, and one born between
// two scans adds its ticks (all used since the previous scan) at the scan that first sees it.
const sampleProcesses = () => {
  const t = now();
  pSamples.push({ t, sums: processes() });
};
sampleMachine();
sampleProcesses();
const mTimer = setInterval(sampleMachine, 100);
const pTimer = setInterval(sampleProcesses, 500);

// ---- the run
const child = spawn(join(peersDir, 'node_modules', '.bin', 'node'), ['run.mjs', ...argv], {
  cwd: peersDir,
  env: { ...process.env, PEERS_DIR: peersDir },
  stdio: ['ignore', 'pipe', 'inherit'],
});
let line = '';
let buf = '';
child.stdout.on('data', (c) => {
  buf += c;
  for (let i = buf.indexOf('\n'); i >= 0; i = buf.indexOf('\n')) {
    const l = buf.slice(0, i);
    buf = buf.slice(i + 1);
    if (l.startsWith(`${peer} ${scenario}`)) line = l;
    else process.stdout.write(`${l}\n`);
  }
});
const code = await new Promise((ok) => child.on('close', ok));
clearInterval(mTimer);
clearInterval(pTimer);
sampleMachine();
sampleProcesses();
if (code !== 0 || !line) {
  console.error(`run.mjs exited ${code} without a result line`);
  process.exit(1);
}
const result = JSON.parse(line.slice(line.indexOf('{')));

// ---- integrate over [first_create_ms, last_delivery_ms]
function at(samples, t, get) {
  let i = samples.findIndex((s) => s.t >= t);
  if (i < 0) i = samples.length - 1;
  if (i === 0) return get(samples[0]);
  const a = samples[i - 1];
  const b = samples[i];
  const f = b.t === a.t ? 1 : Math.min(1, Math.max(0, (t - a.t) / (b.t - a.t)));
  return get(a) + f * (get(b) - get(a));
}
const from = result.first_create_ms;
const to = result.last_delivery_ms;
const r3 = (x) => Math.round(x * 1000) / 1000;
const delta = (samples, get) => at(samples, to, get) - at(samples, from, get);
const busyS = delta(mSamples, (s) => s.busy) / CLK_TCK;
const samplerS = delta(mSamples, (s) => s.sampler);
const groups = new Set(pSamples.flatMap((s) => Object.keys(s.sums)));
const byGroup = {};
for (const g of groups) {
  const v = delta(pSamples, (s) => s.sums[g] ?? 0) / CLK_TCK;
  if (v > 0.0005) byGroup[g] = r3(v);
}
const explained = Object.entries(byGroup)
  .filter(([g]) => g !== 'other')
  .reduce((n, [, v]) => n + v, 0);
const cpuS = busyS - samplerS;
const windowS = (to - from) / 1000;
// Cross-checks: the tick-sampled busy time above can miss work that runs between ticks. The
// scheduler's own per-process times (summed over every process, sampler aside), and the
// window's length × cores minus idle (idle is measured exactly on a tickless kernel).
const tasksS = Object.entries(byGroup)
  .filter(([g]) => g !== 'sampler')
  .reduce((n, [, v]) => n + v, 0);
const idleBasedS =
  windowS * cpus().length -
  (delta(mSamples, (s) => s.idle) + delta(mSamples, (s) => s.steal)) / CLK_TCK -
  samplerS;
let sluiceCommit = null;
try {
  sluiceCommit = execFileSync('git', ['rev-parse', 'HEAD'], {
    cwd: import.meta.dirname,
    encoding: 'utf8',
  }).trim();
} catch {
  // not a git checkout
}
const record = {
  peer,
  scenario,
  sluice_commit: sluiceCommit,
  label: result.label,
  date: result.date,
  run_id: result.run_id,
  log_dir: result.log_dir,
  cores: cpus().length,
  completed: result.completed,
  delivered: result.delivered,
  missing: result.missing,
  duplicates: result.duplicates,
  wall_s: result.wall_s,
  deliveries_per_s: result.deliveries_per_s,
  latency_ms: result.latency_ms,
  max_ratio: result.sliding.max_ratio,
  destinations_violating: result.sliding.destinations_violating,
  machine: {
    window_s: r3(windowS),
    cpu_s: r3(cpuS),
    cpu_ms_per_delivery: result.delivered ? r3((1000 * cpuS) / result.delivered) : null,
    busy_pct_of_machine: r3((100 * cpuS) / (windowS * cpus().length)),
    tasks_cpu_s: r3(tasksS),
    tasks_cpu_ms_per_delivery: result.delivered ? r3((1000 * tasksS) / result.delivered) : null,
    idle_based_cpu_s: r3(idleBasedS),
    busy_s: r3(busyS),
    sampler_s: r3(samplerS),
    steal_s: r3(delta(mSamples, (s) => s.steal) / CLK_TCK),
    by_group: byGroup,
    unexplained_s: r3(busyS - explained - (byGroup.other ?? 0)),
    samples: { machine: mSamples.length, processes: pSamples.length },
  },
  harness_cpu: result.cpu,
  peer_stats: result.peer_stats,
};
mkdirSync(dirname(out), { recursive: true });
appendFileSync(out, `${JSON.stringify(record)}\n`);
console.log(JSON.stringify(record));
