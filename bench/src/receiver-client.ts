/**
 * Starts the receiver (receiver.ts) in its own process, under `nice -n -10` when the system
 * permits it (otherwise at normal priority; `nice` records which, read back from /proc),
 * and talks to it: counts, run-time behaviour, the NDJSON dump.
 */

import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Agent, request } from 'undici';
import { waitForLine } from './common.ts';
import { niceOf } from './procstat.ts';

const RECEIVER = fileURLToPath(new URL('./receiver.ts', import.meta.url));

export interface ReceiverCount {
  requests: number;
  ok: number;
  uniqueOk: number;
  /** With a prefix: the distinct events answered 2xx of the destinations whose id starts with it. */
  uniqueOkPrefix?: number;
}

export interface ReceiverDump extends ReceiverCount {
  file: string;
  count: number;
  cpuS: number;
  eventLoopDelayP99Ms: number;
  eventLoopDelayMaxMs: number;
  maxOpenConnections: number;
}

export class ReceiverProcess {
  readonly url: string;
  readonly pid: number;
  /** The receiver's nice value as the kernel reports it (-10 when `nice` was permitted). */
  readonly nice: number | null;
  private readonly child: ChildProcess;
  private readonly agent = new Agent({ connections: 2, keepAliveTimeout: 5_000 });

  private constructor(child: ChildProcess, port: number) {
    this.child = child;
    this.pid = child.pid as number;
    this.url = `http://127.0.0.1:${port}`;
    this.nice = niceOf(this.pid);
  }

  static async start(options: { seed?: number; nice?: boolean } = {}): Promise<ReceiverProcess> {
    const node = [process.execPath, RECEIVER];
    const useNice = options.nice !== false && existsSync('/usr/bin/nice');
    const [command, ...args] = useNice ? ['nice', '-n', '-10', ...node] : node;
    const child = spawn(command as string, args, {
      env: { ...process.env, PORT: '0', RECEIVER_SEED: String(options.seed ?? 1) },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    // `nice` warns on stderr when it may not raise the priority, then runs the command anyway.
    child.stderr?.resume();
    const port = Number(
      await waitForLine(child.stdout as NonNullable<typeof child.stdout>, 'RECEIVER_LISTENING', 10_000),
    );
    return new ReceiverProcess(child, port);
  }

  private async call<T>(method: 'GET' | 'POST', path: string, body?: unknown): Promise<T> {
    const res = await request(this.url + path, {
      method,
      dispatcher: this.agent,
      body: body === undefined ? undefined : JSON.stringify(body),
      headers: body === undefined ? {} : { 'content-type': 'application/json' },
    });
    const text = await res.body.text();
    if (res.statusCode !== 200) throw new Error(`receiver ${method} ${path}: ${res.statusCode} ${text}`);
    return JSON.parse(text) as T;
  }

  count(prefix?: string): Promise<ReceiverCount> {
    return this.call('GET', prefix === undefined ? '/count' : `/count?prefix=${encodeURIComponent(prefix)}`);
  }

  /** Changes a destination's behaviour (`*` for all) from now on. */
  control(dest: string, behaviour: Record<string, number>): Promise<unknown> {
    return this.call('POST', '/control', { dest, behaviour });
  }

  dump(file: string): Promise<ReceiverDump> {
    return this.call('GET', `/dump?file=${encodeURIComponent(file)}`);
  }

  async stop(): Promise<void> {
    await this.agent.close();
    if (this.child.exitCode !== null) return;
    const exited = new Promise((resolve) => this.child.once('exit', resolve));
    this.child.kill('SIGTERM');
    await exited;
  }
}
