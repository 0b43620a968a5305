/**
 * What every process of a run costs, read from /proc (Linux): CPU seconds (utime + stime of
 * /proc/<pid>/stat), resident memory (VmRSS) and its peak (VmHWM of /proc/<pid>/status),
 * and the machine's busy and steal time (/proc/stat; steal = time the hypervisor ran
 * someone else on our vCPUs). The sampler keeps a series per process so that a phase (the
 * delivery, the idle tail) can be measured between two marks and RSS followed over time.
 *
 * A *group* is a set of processes whose pids come and go during a run — the Postgres
 * backends serving one database, one per pooled connection, opened and closed as the pools
 * please: the children of one parent whose command line contains a string, found again at
 * every sample. Its CPU is the sum over every member ever seen (a member that exited keeps
 * what it used until its last sample), its RSS the sum over the members alive (shared
 * memory counted once per member: an upper bound).
 */

import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { now } from './common.ts';

const CLK_TCK = (() => {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK']).toString().trim()) || 100;
  } catch {
    return 100;
  }
})();

function statFields(pid: number): string[] | null {
  try {
    const s = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return s.slice(s.lastIndexOf(')') + 2).split(' ');
  } catch {
    return null;
  }
}

/** CPU seconds the process has used so far (user + system), or null when it is gone. */
function cpuSeconds(pid: number): number | null {
  const f = statFields(pid);
  return f ? (Number(f[11]) + Number(f[12])) / CLK_TCK : null;
}

/** The process's nice value, or null. */
export function niceOf(pid: number): number | null {
  const f = statFields(pid);
  return f ? Number(f[16]) : null;
}

/** The children of `pid` (Linux `/proc/<pid>/task/<pid>/children`), or [] when it is not readable. */
function childrenOf(pid: number): number[] {
  try {
    return readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8')
      .trim()
      .split(/\s+/)
      .filter(Boolean)
      .map(Number);
  } catch {
    return [];
  }
}

function cmdlineOf(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ');
  } catch {
    return '';
  }
}

/** The parent pid of a process (field 4 of /proc/<pid>/stat), or null when it is not visible. */
export function parentOf(pid: number): number | null {
  const f = statFields(pid);
  return f ? Number(f[1]) : null;
}

/** Processes found again at every sample: the children of `parentPid` whose command line contains `cmdlineIncludes`. */
export interface ProcessGroup {
  parentPid: number;
  cmdlineIncludes: string;
}

/** VmRSS and VmHWM (peak RSS) in MB, or null when the process is gone. */
function memoryMb(pid: number): { rss: number; hwm: number } | null {
  try {
    const s = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = (key: string): number => Number(new RegExp(`^${key}:\\s+(\\d+)`, 'm').exec(s)?.[1] ?? 0);
    return { rss: kb('VmRSS') / 1024, hwm: kb('VmHWM') / 1024 };
  } catch {
    return null;
  }
}

export interface MachineTicks {
  idle: number;
  steal: number;
  total: number;
}

function machineTicks(): MachineTicks {
  const line = readFileSync('/proc/stat', 'utf8').split('\n')[0] ?? '';
  const f = line.trim().split(/\s+/).slice(1, 9).map(Number);
  const idle = (f[3] ?? 0) + (f[4] ?? 0);
  const steal = f[7] ?? 0;
  return { idle, steal, total: f.reduce((a, b) => a + b, 0) };
}

/** Busy and steal % of all cores together between two readings (100 % = every core). */
function machineUse(a: MachineTicks, b: MachineTicks): { busyPct: number; stealPct: number } {
  const total = b.total - a.total;
  if (total <= 0) return { busyPct: 0, stealPct: 0 };
  const idle = b.idle - a.idle;
  const steal = b.steal - a.steal;
  return { busyPct: 100 * (1 - (idle + steal) / total), stealPct: (100 * steal) / total };
}

export interface Sample {
  t: number;
  cpuS: number | null;
  rssMb: number | null;
}

export interface ProcessCost {
  pid: number;
  cpuS: number | null;
  /** CPU % of one core over the phase. */
  cpuPct: number | null;
  /** Most CPU % of one core in any span of about 1 s of the phase. */
  maxCpuPct: number | null;
  peakRssMb: number | null;
  /** VmHWM: the process's peak RSS since it started (only for processes the run started). */
  hwmMb: number | null;
}

/** A group's members: CPU of the members that exited, and the last reading of each one alive. */
class GroupState {
  readonly spec: ProcessGroup;
  private retiredCpuS = 0;
  private readonly live = new Map<number, number>();

  constructor(spec: ProcessGroup) {
    this.spec = spec;
  }

  /** Finds the members again; answers the group's CPU so far and its members' RSS now. */
  read(): { cpuS: number; rssMb: number; members: number } {
    const now = new Map<number, { cpuS: number; rssMb: number }>();
    for (const pid of childrenOf(this.spec.parentPid)) {
      if (!cmdlineOf(pid).includes(this.spec.cmdlineIncludes)) continue;
      const cpuS = cpuSeconds(pid);
      if (cpuS !== null) now.set(pid, { cpuS, rssMb: memoryMb(pid)?.rss ?? 0 });
    }
    for (const [pid, cpuS] of this.live) {
      const current = now.get(pid);
      // Gone, or the pid was reused by a new process: what it used stays counted.
      if (current === undefined || current.cpuS < cpuS) {
        this.retiredCpuS += cpuS;
        this.live.delete(pid);
      }
    }
    let cpuS = this.retiredCpuS;
    let rssMb = 0;
    for (const [pid, m] of now) {
      this.live.set(pid, m.cpuS);
      cpuS += m.cpuS;
      rssMb += m.rssMb;
    }
    return { cpuS, rssMb, members: now.size };
  }
}

/** Samples named processes at a fixed interval; `cost(from, to)` measures a phase. */
export class ProcSampler {
  readonly series = new Map<
    string,
    { pid: number; samples: Sample[]; hwmMb: number | null; group?: GroupState }
  >();
  private timer: NodeJS.Timeout | undefined;
  private readonly machine: { t: number; ticks: MachineTicks }[] = [];

  add(name: string, pid: number): void {
    this.series.set(name, { pid, samples: [], hwmMb: null });
  }

  /** A group of processes under one name (its pid is the parent's; no VmHWM). */
  addGroup(name: string, group: ProcessGroup): void {
    this.series.set(name, { pid: group.parentPid, samples: [], hwmMb: null, group: new GroupState(group) });
  }

  start(intervalMs: number): void {
    this.sample();
    this.timer = setInterval(() => this.sample(), intervalMs);
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.sample();
  }

  /** Samples every process now; answers the time of the sample (use it as a mark). */
  sample(): number {
    const t = now();
    for (const s of this.series.values()) {
      if (s.group) {
        const g = s.group.read();
        s.samples.push({ t, cpuS: g.cpuS, rssMb: g.members > 0 ? g.rssMb : null });
        continue;
      }
      const memory = memoryMb(s.pid);
      s.samples.push({ t, cpuS: cpuSeconds(s.pid), rssMb: memory?.rss ?? null });
      if (memory) s.hwmMb = memory.hwm;
    }
    this.machine.push({ t, ticks: machineTicks() });
    return t;
  }

  /** Cost of each process between two times (nearest samples inside the phase). */
  cost(from: number, to: number): Record<string, ProcessCost> {
    const out: Record<string, ProcessCost> = {};
    for (const [name, s] of this.series) {
      const inside = s.samples.filter((x) => x.t >= from - 1 && x.t <= to + 1 && x.cpuS !== null);
      const first = inside[0];
      const last = inside[inside.length - 1];
      let maxPct: number | null = null;
      // Over spans of at least 1 s: a shorter one holds too few clock ticks to mean anything.
      for (let i = 0, j = 0; i < inside.length; i++) {
        const a = inside[i] as Sample;
        while (j < inside.length && (inside[j] as Sample).t - a.t < 990) j++;
        if (j >= inside.length) break;
        const b = inside[j] as Sample;
        const pct = (100 * ((b.cpuS as number) - (a.cpuS as number))) / ((b.t - a.t) / 1_000);
        if (maxPct === null || pct > maxPct) maxPct = pct;
      }
      const cpuS = first && last ? (last.cpuS as number) - (first.cpuS as number) : null;
      const seconds = first && last ? (last.t - first.t) / 1_000 : 0;
      const rss = inside.map((x) => x.rssMb).filter((x): x is number => x !== null);
      out[name] = {
        pid: s.pid,
        cpuS,
        cpuPct: cpuS !== null && seconds > 0 ? (100 * cpuS) / seconds : null,
        maxCpuPct: maxPct,
        peakRssMb: rss.length > 0 ? Math.max(...rss) : null,
        hwmMb: s.hwmMb,
      };
    }
    return out;
  }

  machineUse(from: number, to: number): { busyPct: number; stealPct: number } | null {
    const inside = this.machine.filter((m) => m.t >= from - 1 && m.t <= to + 1);
    const a = inside[0];
    const b = inside[inside.length - 1];
    return a && b && b !== a ? machineUse(a.ticks, b.ticks) : null;
  }
}
