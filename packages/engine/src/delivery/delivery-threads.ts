/**
 * The HTTP side of attempts on their own threads, so a process that also keeps the store,
 * the ticks and the API (the single box) uses a second core for what the ceiling baseline
 * shows is most of a request's cost: the undici request and its socket writes (a loopback
 * write runs the receiver's TCP receive path in the writer's context), the signature, the
 * response. Everything with state stays on the main thread: the pace, the window, the
 * completion writes.
 *
 * The thread stamps when a request was written and when its attempt ended (the wall clock is
 * one for all threads); the main thread records them when the message arrives. A message
 * late to arrive only keeps a send in the window longer meanwhile (docs/design.md I2: over-count,
 * never under-count), and a send's occupancy ends from the attempt's real end, not from
 * when a busy main thread got round to reading it.
 *
 * A thread that dies (it should not: every attempt's failure is a report) fails the attempts
 * it held with `delivery_thread_failed` — each is retried like any failed request, with the
 * same `webhook-id` — and a new thread takes its place.
 */

import { Worker } from 'node:worker_threads';
import type { AttemptReport, AttemptTransport, DeliveryRequest } from './deliver.ts';
import type { AttemptMessage, FromThread, ThreadSettings, ToThread } from './delivery-thread.ts';

export const THREAD_FAILED = 'delivery_thread_failed';

export interface DeliveryThreadsOptions {
  allowPrivateNetworks: boolean;
  /** Most open connections per origin over all threads (at least the most requests in flight). */
  connections: number;
  threads: number;
  /** `SLUICE_EGRESS_PROXY` (DelivererOptions.proxy). */
  proxy?: string | undefined;
  onThreadExit?: (err: unknown) => void;
}

interface Pending {
  resolve(report: AttemptReport): void;
  written: ((at: number) => void) | undefined;
  thread: Thread;
}

interface Thread {
  /** Null between a thread's death and its replacement's start. */
  worker: Worker | null;
  outbox: AttemptMessage[];
  held: number;
  /** Deaths in a row of threads that ended within RESPAWN_QUIET_MS of their start. */
  quickDeaths: number;
  respawn: NodeJS.Timeout | undefined;
}

/** A thread that lived this long is not failing at start: its replacement starts at once. */
const RESPAWN_QUIET_MS = 5_000;
const RESPAWN_MAX_MS = 30_000;

const ENTRY = new URL('./delivery-thread.ts', import.meta.url);

export class DeliveryThreads implements AttemptTransport {
  private readonly threads: Thread[] = [];
  private readonly pending = new Map<number, Pending>();
  private readonly settings: ThreadSettings;
  private readonly onThreadExit: (err: unknown) => void;
  private seq = 0;
  private flushing = false;
  private closing = false;

  constructor(options: DeliveryThreadsOptions) {
    const count = Math.max(1, options.threads);
    this.settings = {
      allowPrivateNetworks: options.allowPrivateNetworks,
      connections: Math.max(1, Math.ceil(options.connections / count)),
      proxy: options.proxy,
    };
    this.onThreadExit = options.onThreadExit ?? (() => undefined);
    for (let i = 0; i < count; i++) {
      const thread: Thread = { worker: null, outbox: [], held: 0, quickDeaths: 0, respawn: undefined };
      this.start(thread);
      this.threads.push(thread);
    }
  }

  attempt(req: DeliveryRequest, nowSeconds: number, written?: (at: number) => void): Promise<AttemptReport> {
    if (this.closing) return Promise.reject(new Error('delivery threads are closed'));
    const id = ++this.seq;
    // The live thread holding fewest; one waiting to be replaced only when none is live.
    const load = (t: Thread) => (t.worker === null ? Number.POSITIVE_INFINITY : t.held);
    let thread = this.threads[0] as Thread;
    for (const t of this.threads) if (load(t) < load(thread)) thread = t;
    thread.held++;
    thread.outbox.push([id, req, nowSeconds, written !== undefined]);
    if (!this.flushing) {
      this.flushing = true;
      setImmediate(() => this.flush());
    }
    return new Promise((resolve) => this.pending.set(id, { resolve, written, thread }));
  }

  /** After the last attempt resolved: each thread closes its pool, then ends. */
  async close(): Promise<void> {
    this.closing = true;
    await Promise.all(
      this.threads.map((t) => {
        clearTimeout(t.respawn);
        const worker = t.worker;
        if (worker === null) return undefined;
        return new Promise<void>((resolve) => {
          worker.once('exit', () => resolve());
          worker.on('message', (m: FromThread) => {
            if (m.closed) void worker.terminate();
          });
          worker.postMessage({ close: true } satisfies ToThread);
        });
      }),
    );
  }

  private flush(): void {
    this.flushing = false;
    for (const t of this.threads) {
      if (t.outbox.length === 0 || t.worker === null) continue;
      t.worker.postMessage({ attempts: t.outbox } satisfies ToThread);
      t.outbox = [];
    }
  }

  /**
   * Starts the thread's worker. When it dies, the attempts it held fail and a new worker
   * takes its place — at once, or, when workers keep dying at start (a broken deployment),
   * after a delay that doubles up to RESPAWN_MAX_MS; attempts meanwhile wait in the outbox.
   */
  private start(thread: Thread): void {
    const worker = new Worker(ENTRY, { workerData: this.settings });
    const startedAt = Date.now();
    thread.worker = worker;
    let failure: unknown;
    worker.on('message', (m: FromThread) => this.receive(m));
    worker.on('error', (err) => {
      failure = err;
    });
    worker.on('exit', (code) => {
      thread.worker = null;
      if (this.closing) return;
      this.onThreadExit(failure ?? new Error(`delivery thread exited with code ${code}`));
      const message = `the delivery thread ended before the response (exit code ${code})`;
      for (const [id, p] of this.pending) {
        if (p.thread !== thread || thread.outbox.some((a) => a[0] === id)) continue;
        this.pending.delete(id);
        p.resolve({
          result: { kind: 'error', code: THREAD_FAILED, message },
          responseExcerpt: null,
          endedAt: Date.now(),
        });
      }
      thread.held = thread.outbox.length;
      thread.quickDeaths = Date.now() - startedAt < RESPAWN_QUIET_MS ? thread.quickDeaths + 1 : 0;
      const delay = thread.quickDeaths <= 1 ? 0 : Math.min(RESPAWN_MAX_MS, 250 * 2 ** thread.quickDeaths);
      thread.respawn = setTimeout(() => {
        thread.respawn = undefined;
        if (this.closing) return;
        this.start(thread);
        this.flush();
      }, delay);
    });
  }

  private receive(m: FromThread): void {
    for (const [id, at] of m.written) this.pending.get(id)?.written?.(at);
    for (const [id, report] of m.done) {
      const p = this.pending.get(id);
      if (p === undefined) continue;
      this.pending.delete(id);
      p.thread.held--;
      p.resolve(report);
    }
  }
}
