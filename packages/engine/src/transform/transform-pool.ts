/**
 * Destinations' transforms, off the delivery loop (docs/adr/0017): a few threads, each with
 * the QuickJS sandbox, and a hard stop. QuickJS's interrupt stops a loop at its time limit,
 * but not a call inside a native function (an allocation loop of `new Array(1e6).fill(1)` ran
 * for seconds past a 50 ms interrupt, measured), so a watchdog reads which call each thread
 * runs and since when (a shared slot the thread writes), and past `hardStopMs` terminates the
 * thread — which stops WebAssembly wherever it is — fails that call, and gives the thread's
 * other calls to its replacement. Threads start with the first call: a process whose
 * destinations have no transform starts none.
 *
 * Calls wait here, in a queue per destination, and go to the threads round robin by
 * destination, one call of a destination at a time and at most `WINDOW` per thread: so a
 * destination's backlog never stands between another's call and a thread, and whatever a
 * destination's code does holds a thread for at most one call's hard stop at a time. A
 * transform that ran out of time or memory twice in a row is not run again for
 * `QUARANTINE_MS` (or until its code changes): its waiting calls fail at once.
 */

import { Worker } from 'node:worker_threads';
import type { SandboxLimits, SandboxResult } from './sandbox.ts';
import type {
  Call,
  FromTransformThread,
  ToTransformThread,
  TransformThreadData,
} from './transform-thread.ts';

export interface TransformPoolOptions extends SandboxLimits {
  threads: number;
  /** When a call still running is stopped by terminating its thread (default 2 × timeout + 100 ms). */
  hardStopMs?: number;
  onThreadExit?: (err: unknown) => void;
}

interface Pending {
  id: number;
  /** Its destination's id; a call without one (a check, a preview) has a key of its own. */
  key: string;
  call: Call;
  resolve(result: SandboxResult): void;
}

/** A started worker and the slot it writes its running call into. */
interface Spawned {
  worker: Worker;
  running: Thread['running'];
}

interface Thread {
  /** Null before the first call, and between a thread's end and its replacement's start. */
  worker: Worker | null;
  running: { id: Int32Array; since: BigInt64Array; buffer: SharedArrayBuffer };
  /** Sent and not answered, by call id. */
  held: Map<number, Pending>;
  outbox: [number, Call][];
}

/** Calls sent to one thread and not yet answered. */
const WINDOW = 16;
/** Failures in a row past a limit that quarantine a destination's transform. */
const STRIKES = 2;
const QUARANTINE_MS = 30_000;
const OUT_OF_LIMITS = /^(ran out of time|ran out of memory|stopped after)/;

const ENTRY = new URL('./transform-thread.ts', import.meta.url);

/** The slot a thread writes its running call's id and start into. */
function slot(): Thread['running'] {
  const buffer = new SharedArrayBuffer(16);
  return { id: new Int32Array(buffer, 0, 1), since: new BigInt64Array(buffer, 8, 1), buffer };
}

export class TransformPool {
  private readonly threads: Thread[] = [];
  private readonly limits: SandboxLimits;
  private readonly hardStopMs: number;
  private readonly onThreadExit: (err: unknown) => void;
  private readonly strikes = new Map<string, { code: string; count: number; until: number }>();
  /** Calls not yet sent, by destination (or call) key, in order. */
  private readonly queues = new Map<string, Pending[]>();
  /** Keys with waiting calls and none at a thread, in the order they go. */
  private ready: string[] = [];
  /** Keys with a call at a thread. */
  private readonly busy = new Set<string>();
  private seq = 0;
  private flushing = false;
  private closing = false;
  private started = false;
  private watchdog: NodeJS.Timeout | undefined;
  /** A started thread that takes the place of one terminated or ended. */
  private spare: Spawned | undefined;

  constructor(options: TransformPoolOptions) {
    this.limits = { timeoutMs: options.timeoutMs, memoryBytes: options.memoryBytes };
    this.hardStopMs = options.hardStopMs ?? 2 * options.timeoutMs + 100;
    this.onThreadExit = options.onThreadExit ?? (() => undefined);
    for (let i = 0; i < Math.max(1, options.threads); i++) {
      this.threads.push({ worker: null, running: slot(), held: new Map(), outbox: [] });
    }
  }

  /** Whether `code` compiles, runs its top level within the limits and defines `handler`. */
  check(code: string): Promise<SandboxResult> {
    return this.submit({ op: 'check', code });
  }

  /**
   * The handler's return value (JSON text) for `input`, the webhook as JSON text; `key` (a
   * destination's id) keeps its context between calls and counts its strikes.
   */
  run(key: string | undefined, code: string, input: string, at: number): Promise<SandboxResult> {
    return this.submit({ op: 'run', key, code, input, at });
  }

  async close(): Promise<void> {
    this.closing = true;
    clearInterval(this.watchdog);
    await Promise.all([...this.threads.map((t) => t.worker?.terminate()), this.spare?.worker.terminate()]);
    this.spare = undefined;
    const closed = { ok: false, message: 'the transform pool closed' } as const;
    for (const t of this.threads) for (const p of t.held.values()) p.resolve(closed);
    for (const queue of this.queues.values()) for (const p of queue) p.resolve(closed);
    this.queues.clear();
  }

  private submit(call: Call): Promise<SandboxResult> {
    if (this.closing) return Promise.resolve({ ok: false, message: 'the transform pool closed' });
    if (!this.started) {
      this.started = true;
      for (const t of this.threads) this.start(t);
    }
    const id = ++this.seq;
    const key = call.op === 'run' && call.key !== undefined ? call.key : `#${id}`;
    return new Promise((resolve) => {
      const queue = this.queues.get(key);
      const p: Pending = { id, key, call, resolve };
      if (queue !== undefined) queue.push(p);
      else {
        this.queues.set(key, [p]);
        if (!this.busy.has(key)) this.ready.push(key);
      }
      this.later();
    });
  }

  private later(): void {
    if (this.flushing) return;
    this.flushing = true;
    setImmediate(() => this.flush());
  }

  /** Why a call of `key` is not run (undefined: it is): its code is quarantined. */
  private quarantined(key: string, call: Call): string | undefined {
    if (call.op !== 'run') return undefined;
    const strike = this.strikes.get(key);
    if (strike === undefined || strike.code !== call.code || strike.until <= Date.now()) return undefined;
    const seconds = Math.ceil((strike.until - Date.now()) / 1_000);
    return `not run: it exceeded its limits in its last ${STRIKES} calls (it is run again ${seconds} s from now, or when its code changes)`;
  }

  private count(p: Pending, result: SandboxResult): void {
    if (p.call.op !== 'run' || p.call.key === undefined) return;
    const { key } = p;
    if (result.ok || !OUT_OF_LIMITS.test(result.message)) {
      this.strikes.delete(key);
      return;
    }
    const before = this.strikes.get(key);
    const n = before !== undefined && before.code === p.call.code ? before.count + 1 : 1;
    this.strikes.set(key, {
      code: p.call.code,
      count: n,
      until: n >= STRIKES ? Date.now() + QUARANTINE_MS : 0,
    });
  }

  /** A call answered: its destination's next may go. */
  private answered(p: Pending, result: SandboxResult): void {
    this.busy.delete(p.key);
    this.count(p, result);
    if (this.queues.has(p.key)) this.ready.push(p.key);
    p.resolve(result);
    this.later();
  }

  /** Hands waiting calls to the threads with room, one destination's at a time, round robin. */
  private flush(): void {
    this.flushing = false;
    for (;;) {
      let thread: Thread | undefined;
      for (const t of this.threads)
        if (
          t.worker !== null &&
          t.held.size < WINDOW &&
          (thread === undefined || t.held.size < thread.held.size)
        )
          thread = t;
      const key = thread === undefined ? undefined : this.ready.shift();
      if (thread === undefined || key === undefined) break;
      const queue = this.queues.get(key) as Pending[];
      const p = queue.shift() as Pending;
      if (queue.length === 0) this.queues.delete(key);
      const refused = this.quarantined(key, p.call);
      if (refused !== undefined) {
        if (this.queues.has(key)) this.ready.push(key);
        p.resolve({ ok: false, message: refused });
        continue;
      }
      this.busy.add(key);
      thread.held.set(p.id, p);
      thread.outbox.push([p.id, p.call]);
    }
    for (const t of this.threads) {
      if (t.outbox.length === 0 || t.worker === null) continue;
      t.worker.postMessage({ calls: t.outbox } satisfies ToTransformThread);
      t.outbox = [];
      this.watchdog ??= setInterval(() => this.watch(), Math.max(5, Math.floor(this.hardStopMs / 4)));
      this.watchdog.unref();
    }
  }

  /** Stops a call past its hard stop by ending its thread. */
  private watch(): void {
    let idle = true;
    for (const t of this.threads) {
      if (t.held.size > 0) idle = false;
      const id = Atomics.load(t.running.id, 0);
      if (id === 0 || t.worker === null) continue;
      const ranMs = Date.now() - Number(Atomics.load(t.running.since, 0));
      if (ranMs <= this.hardStopMs) continue;
      const p = t.held.get(id);
      t.held.delete(id);
      Atomics.store(t.running.id, 0, 0);
      if (p !== undefined)
        this.answered(p, {
          ok: false,
          message: `stopped after ${ranMs} ms (its limit is ${this.limits.timeoutMs} ms)`,
        });
      const worker = t.worker;
      t.worker = null;
      worker.removeAllListeners('exit');
      void worker.terminate();
      this.restart(t);
    }
    if (idle) {
      clearInterval(this.watchdog);
      this.watchdog = undefined;
    }
  }

  /**
   * A new worker for `t` — the spare, already loaded, when there is one (a thread's start,
   * ~90 ms measured, is then not in the way of the calls it is given) — with the calls its
   * last one had not answered.
   */
  private restart(t: Thread): void {
    if (this.closing) return;
    t.outbox = [...[...t.held].map(([id, p]): [number, Call] => [id, p.call]), ...t.outbox];
    this.start(t);
    this.flush();
  }

  private spawn(): Spawned {
    const running = slot();
    const worker = new Worker(ENTRY, {
      workerData: { limits: this.limits, running: running.buffer } satisfies TransformThreadData,
    });
    return { worker, running };
  }

  private start(t: Thread): void {
    const spawned = this.spare ?? this.spawn();
    this.spare = this.closing ? undefined : this.spawn();
    this.spare?.worker.unref();
    const { worker } = spawned;
    worker.ref();
    t.running = spawned.running;
    t.worker = worker;
    let failure: unknown;
    let answered = false;
    worker.on('message', (m: FromTransformThread) => {
      answered = true;
      for (const [id, result] of m.done) {
        const p = t.held.get(id);
        if (p === undefined) continue;
        t.held.delete(id);
        this.answered(p, result);
      }
    });
    worker.on('error', (err) => {
      failure = err;
    });
    worker.on('exit', (code) => {
      if (t.worker !== worker) return;
      t.worker = null;
      if (this.closing) return;
      this.onThreadExit(failure ?? new Error(`transform thread exited with code ${code}`));
      // The call it was running may be what ended it: it fails, the rest go to the next thread.
      const id = Atomics.load(t.running.id, 0);
      Atomics.store(t.running.id, 0, 0);
      const p = t.held.get(id);
      t.held.delete(id);
      if (p !== undefined)
        this.answered(p, {
          ok: false,
          message: `the transform thread ended during the call (exit code ${code})`,
        });
      // A thread that never answered (its module did not load) would fail every call again.
      if (!answered && id === 0) {
        const held = [...t.held.values()];
        t.held.clear();
        for (const q of held)
          this.answered(q, { ok: false, message: `the transform thread did not start (${String(failure)})` });
        t.outbox = [];
      }
      setTimeout(() => this.restart(t), 100).unref();
    });
  }
}
