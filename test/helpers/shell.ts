/**
 * A guide's shell commands, run as a reader pastes them: the ```sh blocks of a markdown
 * file, each run with bash under `set -euo pipefail`, the variables and functions the blocks
 * define carried from one to the next through a state file (as one interactive shell keeps
 * them), and the commands a reader leaves running in another terminal (a server, a
 * receiver) run in the background, in their own process group, stopped at the end.
 */

import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { sleep } from './receiver.ts';

export interface Block {
  /** The `##` heading above the block (the title above the first one). */
  heading: string;
  /** 1-based line of the opening fence in the file. */
  line: number;
  code: string;
}

/** The ```sh blocks of a markdown text, in order. */
export function shBlocks(markdown: string): Block[] {
  const out: Block[] = [];
  let heading = '';
  let open: { line: number; lines: string[] } | undefined;
  for (const [i, line] of markdown.split('\n').entries()) {
    if (open) {
      if (line.startsWith('```')) {
        out.push({ heading, line: open.line, code: open.lines.join('\n') });
        open = undefined;
      } else open.lines.push(line);
    } else if (line === '```sh') open = { line: i + 1, lines: [] };
    else if (/^#{1,2} /.test(line)) heading = line.replace(/^#+ /, '');
  }
  assert.equal(open, undefined, `a block opened at line ${open?.line} is never closed`);
  return out;
}

/** The shell variables (UPPER_CASE) a block assigns. */
const assigned = (code: string): string[] => [...code.matchAll(/^\s*([A-Z][A-Z0-9_]*)=/gm)].map((m) => m[1]!);

interface Run {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** `bash -c script` in its own process group, killed (with its children) past `timeoutMs`. */
function bash(
  script: string,
  env: Record<string, string>,
  cwd: string,
  opts: { args?: string[]; timeoutMs?: number } = {},
): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn('bash', ['-c', script, 'guide', ...(opts.args ?? [])], { env, cwd, detached: true });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (s: string) => (stdout += s));
    child.stderr.setEncoding('utf8').on('data', (s: string) => (stderr += s));
    const timer = setTimeout(() => {
      if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
    }, opts.timeoutMs ?? 20_000);
    child.once('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr });
    });
  });
}

/** One interactive shell's worth of state: blocks run in it see what earlier ones set. */
export interface Session {
  /** The state file (`GUIDE_STATE` in the blocks): `source` it to see what they set. */
  state: string;
  /** Runs a block after the state so far, and keeps what it defined. */
  run(code: string, timeoutMs?: number): Promise<Run>;
  /** Runs a script after the state so far, keeping nothing (to read variables, call functions). */
  read(script: string, args?: string[]): Promise<Run>;
  /** The values of variables the blocks set. */
  vars(...names: string[]): Promise<Record<string, string>>;
}

/** A session whose state file lives in `dir`; `env` is the whole environment bash gets. */
export async function session(dir: string, env: Record<string, string>, cwd = dir): Promise<Session> {
  const state = join(dir, 'state.sh');
  await writeFile(state, '');
  const names = new Set<string>();
  const withState = { ...env, GUIDE_STATE: state };
  const read: Session['read'] = (script, args = []) =>
    bash(`source "$GUIDE_STATE"\n${script}`, withState, cwd, { args });
  return {
    state,
    run: (code, timeoutMs) => {
      for (const name of assigned(code)) names.add(name);
      // Keep what the block defined for the next one: its variables and every function.
      const save = `{ declare -p ${[...names].join(' ')} 2>/dev/null; declare -f; } > "$GUIDE_STATE.next" || true
mv "$GUIDE_STATE.next" "$GUIDE_STATE"`;
      return bash(`set -euo pipefail\nsource "$GUIDE_STATE"\n${code}\n${save}\n`, withState, cwd, {
        timeoutMs,
      });
    },
    read,
    vars: async (...wanted) => {
      const print = wanted.map((name) => `printf '%s\\0' "$${name}"`).join('; ');
      const run = await read(print);
      assert.equal(run.code, 0, run.stderr);
      const values = run.stdout.split('\0');
      return Object.fromEntries(wanted.map((name, i) => [name, values[i] ?? '']));
    },
  };
}

/** A command left running, as in another terminal. */
export interface Background {
  /** Its output so far (stdout and stderr), line by line; the last 500 lines. */
  lines: string[];
  /** Whether bash is still running. */
  alive(): boolean;
  /** Resolves with the first line (already printed or to come) that matches. */
  waitFor(pattern: RegExp, timeoutMs: number, what: string): Promise<string>;
  /** SIGTERM to its process group, SIGKILL after 10 s; resolves once every process of it is gone. */
  stop(): Promise<void>;
}

/** `bash -c script` in the background, in its own process group. */
export function background(script: string, env: Record<string, string>, cwd: string): Background {
  const child: ChildProcess = spawn('bash', ['-c', script], {
    env,
    cwd,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines: string[] = [];
  const keep = (line: string) => {
    lines.push(line);
    if (lines.length > 500) lines.shift();
  };
  createInterface({ input: child.stdout! }).on('line', keep);
  createInterface({ input: child.stderr! }).on('line', keep);
  const group = (signal: NodeJS.Signals | 0): boolean => {
    try {
      if (child.pid !== undefined) process.kill(-child.pid, signal);
      return true;
    } catch {
      return false; // the group is gone
    }
  };
  const alive = () => child.exitCode === null && child.signalCode === null;
  return {
    lines,
    alive,
    waitFor: async (pattern, timeoutMs, what) => {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const found = lines.find((l) => pattern.test(l));
        if (found !== undefined) return found;
        if (!alive()) {
          throw new Error(
            `exited (${child.exitCode ?? child.signalCode}) before ${what}:\n${lines.join('\n')}`,
          );
        }
        if (Date.now() > deadline) throw new Error(`no ${what} within ${timeoutMs} ms:\n${lines.join('\n')}`);
        await sleep(50);
      }
    },
    stop: async () => {
      // Every process of the group (bash, npm, node and what node started) drains and exits.
      group('SIGTERM');
      const deadline = Date.now() + 10_000;
      while (group(0) && Date.now() < deadline) await sleep(50);
      group('SIGKILL');
      while (group(0)) await sleep(50);
    },
  };
}
