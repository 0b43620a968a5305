/**
 * Where BENCHMARKS.md's figures come from. The sessions of the runs it shows are numbered in
 * the order they ran (`#1`…); the targets' table names beside each figure the sessions it
 * was measured in, each scenario's table the same, and the sessions' table gives each one's
 * date, Sluice commit, machine and command.
 */

import { median, round } from './common.ts';
import type { SessionRecord } from './records.ts';
import { type Cells, type RunRecord, SHORT_NAMES } from './report-rows.ts';
import type { IssueTarget } from './report-targets.ts';
import { TARGETS, type TargetName } from './targets/target.ts';

/** The shown sessions, in the order they ran, each with its number. */
export type Numbered = Map<string, { n: number; record: SessionRecord }>;

export function numberSessions(sessions: SessionRecord[], runs: RunRecord[]): Numbered {
  const shown = new Set(runs.map((r) => r.session));
  const numbered: Numbered = new Map();
  for (const record of sessions)
    if (shown.has(record.session)) numbered.set(record.session, { n: numbered.size + 1, record });
  return numbered;
}

const day = (record: SessionRecord): string => record.date.slice(0, 10);
const ref = (record: SessionRecord): string =>
  `\`${record.sluiceRef}\`${record.sluiceDirty ? ' + uncommitted changes' : ''}`;

/** The sessions of these runs, by number, in the order they ran. */
function sessionsOf(runs: RunRecord[], numbered: Numbered) {
  const ids = new Set(runs.map((r) => r.session));
  return [...numbered.values()].filter((s) => ids.has(s.record.session));
}

/** `#2, 2026-11-26, `0b7e9d5``; more than two: their numbers and the days they span. */
function sessionsText(runs: RunRecord[], numbered: Numbered): string {
  const of = sessionsOf(runs, numbered);
  const first = of[0];
  const last = of[of.length - 1];
  if (!first || !last) return '–';
  if (of.length <= 2) return of.map((s) => `#${s.n}, ${day(s.record)}, ${ref(s.record)}`).join('; ');
  return `${of.map((s) => `#${s.n}`).join(', ')} (${day(first.record)} to ${day(last.record)})`;
}

export function targetsTable(cells: Cells, targets: IssueTarget[], numbered: Numbered): string[] {
  const out = ['| target | latest measured (median of runs) | met? | session |', '|---|---|---|---|'];
  for (const t of targets) {
    const r = t.judge(cells);
    const met = r.met === null ? 'not run' : r.met ? 'yes' : '**no**';
    out.push(`| ${t.target} | ${r.measured} | ${met} | ${sessionsText(t.runs(cells), numbered)} |`);
  }
  return out;
}

/** Under a scenario's heading: the session of each of its columns (the targets shown). */
export function scenarioSessions(
  cells: Cells,
  scenarios: string[],
  numbered: Numbered,
  targets: readonly TargetName[] = TARGETS,
): string {
  const columns = (s: { record: SessionRecord }): string[] =>
    targets
      .filter((t) =>
        scenarios.some((scenario) =>
          (cells.get(`${scenario}/${t}`) ?? []).some((r) => r.session === s.record.session),
        ),
      )
      .map((t) => SHORT_NAMES[t]);
  const runs = scenarios.flatMap((scenario) => targets.flatMap((t) => cells.get(`${scenario}/${t}`) ?? []));
  const of = sessionsOf(runs, numbered);
  if (of.length === 1) return `Session #${of[0]?.n} (see [Sessions](#sessions)).`;
  return `Sessions (see [Sessions](#sessions)): ${of.map((s) => `#${s.n} (${columns(s).join(', ')})`).join('; ')}.`;
}

const fmt = (x: number | null): string => (x === null ? '–' : String(round(x, 1)));
/** The sessions' one value, or each value with the sessions that had it. */
function distinct(values: (string | null | undefined)[], absent = 'not reachable'): string {
  const by = new Map<string, number[]>();
  values.forEach((v, i) => {
    by.set(v ?? absent, [...(by.get(v ?? absent) ?? []), i + 1]);
  });
  if (by.size === 1) return [...by.keys()].join('');
  return [...by.entries()].map(([v, ns]) => `${v} (${ns.map((n) => `#${n}`).join(', ')})`).join('; ');
}

/** The sessions' table, then the software they ran (each value every session had). */
export function sessionsSection(numbered: Numbered, runs: RunRecord[], distributed: boolean): string[] {
  const sessions = [...numbered.values()];
  if (sessions.length === 0) return [];
  const out = [
    '## Sessions',
    '',
    'Every figure above and below is from one of these sessions: the latest that ran its scenario on its target. CPU steal: the hypervisor running others on our vCPUs during the session’s runs shown here.',
    '',
    '| # | date (UTC) | Sluice | machine | CPU steal % (median, worst) | command |',
    '|---|---|---|---|---|---|',
  ];
  for (const { n, record: s } of sessions) {
    const m = s.machine;
    const steal = runs.filter((r) => r.session === s.session).map((r) => r.machine?.stealPct ?? 0);
    const env = Object.keys(s.sluiceEnv).length > 0 ? ` with ${JSON.stringify(s.sluiceEnv)}` : '';
    out.push(
      `| ${n} | ${s.date.slice(0, 16).replace('T', ' ')} | ${ref(s)}${env} | ${m.cores} cores, ${m.cpuModel}, ${m.memoryGiB} GiB RAM, Linux ${m.kernel ?? '?'} | ${fmt(median(steal))}, ${fmt(steal.length ? Math.max(...steal) : null)} | \`${s.command}\` |`,
    );
  }
  const machines = sessions.map((s) => s.record.machine);
  const libraries = [...new Set(machines.flatMap((m) => Object.keys(m.libraries)))];
  const nices = [...new Set(runs.map((r) => r.receiver?.nice))];
  out.push(
    '',
    `- **Node** ${distinct(machines.map((m) => m.node))}; **Redis** ${distinct(machines.map((m) => m.redis))}; **Postgres** ${distributed ? distinct(machines.map((m) => m.postgres)) : 'not used (no distributed runs)'}`,
    `- **Libraries**: ${libraries
      .map(
        (l) =>
          `${l} ${distinct(
            machines.map((m) => m.libraries[l]),
            'not recorded',
          )}`,
      )
      .join(', ')}`,
    `- **Sluice**: single box (SQLite)${distributed ? '; distributed: the API, one rate limiter and two delivery workers as separate processes on Postgres + Redis' : ''}; default settings unless the session says otherwise`,
    `- **Receiver** nice value: ${nices.join(', ')} (−10 = it ran under \`nice -n -10\`)`,
    '',
  );
  return out;
}
