/**
 * A programmable webhook receiver on 127.0.0.1:0: one server for many destinations, told
 * apart by path (`/d/<name>`). Every request is recorded with its arrival time, taken when
 * its headers are parsed (docs/design.md "How we measure"); each path answers from a script of
 * replies, then with its default status, after an optional delay.
 *
 * The server runs in a worker thread (`receiver-worker.ts`) with its own event loop, so an
 * in-process Sluice that blocks the main thread cannot skew the arrival times. Arrival times
 * are `performance.timeOrigin + performance.now()`, which agree across threads. The worker
 * reports (`Report`) every arrival, its body and its answer; the main thread mirrors them
 * here and sends behaviour changes (`Command`), each acknowledged before its promise resolves.
 */

import type { IncomingHttpHeaders } from 'node:http';
import { Worker } from 'node:worker_threads';

export interface Arrival {
  /** Milliseconds since the epoch, at header parse. */
  at: number;
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  /** The raw body, as UTF-8; set once `complete` is true. */
  body: string;
  complete: boolean;
  /** The status answered, or null while no answer has been written. */
  status: number | null;
}

/** One scripted answer: a status alone, or with headers, a body and a delay. */
export type Reply =
  | number
  | { status: number; headers?: Record<string, string>; body?: string; delayMs?: number };

/**
 * An unannounced capacity: a path that accepts at most `limit` requests in any sliding window
 * of `periodMs` (counting the ones it accepted, by arrival) and answers the rest `429` with
 * `Retry-After: retryAfter` — a receiver's own rate limiter.
 */
export interface Capacity {
  limit: number;
  periodMs: number;
  retryAfter: string;
}

/**
 * A hostile receiver, instead of the path's replies: `slow` answers 200 after 20 s; `hang`
 * never answers; `drip` answers 200
 * and then a byte of body a second, never ending; `reset` destroys the connection once the
 * request is in; `huge` streams a body of 50 MB; `flaky` answers 200 to one request in
 * four and never answers the other three (an overloaded receiver).
 */
export type Hostility = 'slow' | 'hang' | 'drip' | 'reset' | 'huge' | 'flaky';

export type Command =
  | { kind: 'script'; seq: number; path: string; replies: Reply[] }
  | { kind: 'default'; seq: number; path: string; status: number }
  | { kind: 'delay'; seq: number; path: string; delayMs: number }
  | { kind: 'capacity'; seq: number; path: string; capacity: Capacity | null }
  | { kind: 'hostile'; seq: number; path: string; hostility: Hostility | null }
  | { kind: 'close'; seq: number };

export type Report =
  | { kind: 'listening'; port: number }
  | { kind: 'arrival'; i: number; at: number; method: string; path: string; headers: IncomingHttpHeaders }
  | { kind: 'body'; i: number; body: string }
  | { kind: 'status'; i: number; status: number }
  | { kind: 'ack'; seq: number };

/** Milliseconds since the epoch, on the same clock as arrival times. */
export function now(): number {
  return performance.timeOrigin + performance.now();
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

type Distribute<C> = C extends { seq: number } ? Omit<C, 'seq'> : never;

export class Receiver {
  readonly port: number;
  readonly origin: string;
  readonly #worker: Worker;
  readonly #arrivals: Arrival[] = [];
  readonly #acks = new Map<number, () => void>();
  #seq = 0;

  constructor(worker: Worker, port: number) {
    this.#worker = worker;
    this.port = port;
    this.origin = `http://127.0.0.1:${port}`;
    worker.on('message', (report: Report) => {
      switch (report.kind) {
        case 'arrival': {
          const { i, kind: _, ...rest } = report;
          this.#arrivals[i] = { ...rest, body: '', complete: false, status: null };
          break;
        }
        case 'body':
          Object.assign(this.#arrivals[report.i]!, { body: report.body, complete: true });
          break;
        case 'status':
          this.#arrivals[report.i]!.status = report.status;
          break;
        case 'ack':
          this.#acks.get(report.seq)?.();
          this.#acks.delete(report.seq);
          break;
      }
    });
  }

  /** The path of a named destination, and its full URL. */
  path(name: string): string {
    return `/d/${name}`;
  }

  url(name: string): string {
    return this.origin + this.path(name);
  }

  /** Appends scripted replies for a path; once they are used up, the path's default answers. */
  script(path: string, replies: Reply[]): Promise<void> {
    return this.#command({ kind: 'script', path, replies });
  }

  setDefault(path: string, status: number): Promise<void> {
    return this.#command({ kind: 'default', path, status });
  }

  setDelay(path: string, delayMs: number): Promise<void> {
    return this.#command({ kind: 'delay', path, delayMs });
  }

  /** Refuses what goes over `capacity` with 429 (null: no capacity). */
  setCapacity(path: string, capacity: Capacity | null): Promise<void> {
    return this.#command({ kind: 'capacity', path, capacity });
  }

  /** Makes a path hostile; null: its replies again, and its slow, hanging and dripping answers cut. */
  setHostile(path: string, hostility: Hostility | null): Promise<void> {
    return this.#command({ kind: 'hostile', path, hostility });
  }

  /** Requests to a path (all paths when omitted), in arrival order. */
  arrivals(path?: string): Arrival[] {
    const all = this.#arrivals.filter((a) => a !== undefined);
    return path === undefined ? all : all.filter((a) => a.path === path);
  }

  /** The `webhook-id`s answered with a 2xx, on a path (all paths when omitted). */
  deliveredIds(path?: string): Set<string> {
    const ids = new Set<string>();
    for (const a of this.arrivals(path)) {
      if (a.status !== null && a.status >= 200 && a.status < 300) ids.add(String(a.headers['webhook-id']));
    }
    return ids;
  }

  /** Arrival times of a path, sorted. */
  times(path: string): number[] {
    return this.arrivals(path)
      .map((a) => a.at)
      .sort((a, b) => a - b);
  }

  /** Resolves once `predicate` holds (checked every 10 ms); rejects after `timeoutMs`. */
  async waitFor(predicate: () => boolean, timeoutMs: number, what = 'the receiver condition'): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!predicate()) {
      if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
      await sleep(10);
    }
  }

  async close(): Promise<void> {
    const exited = new Promise<void>((resolve) => this.#worker.once('exit', () => resolve()));
    let timer: NodeJS.Timeout | undefined;
    const giveUp = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, 5_000);
    });
    await Promise.race([this.#command({ kind: 'close' }), giveUp]);
    clearTimeout(timer);
    await this.#worker.terminate();
    await exited;
  }

  #command(cmd: Distribute<Command>): Promise<void> {
    const seq = this.#seq++;
    return new Promise((resolve) => {
      this.#acks.set(seq, resolve);
      this.#worker.postMessage({ ...cmd, seq });
    });
  }
}

export async function startReceiver(): Promise<Receiver> {
  const worker = new Worker(new URL('./receiver-worker.ts', import.meta.url));
  const port = await new Promise<number>((resolve, reject) => {
    worker.once('error', reject);
    worker.once('message', (report: Report) => {
      if (report.kind === 'listening') resolve(report.port);
      else reject(new Error(`receiver worker said ${report.kind} before listening`));
    });
  });
  return new Receiver(worker, port);
}
