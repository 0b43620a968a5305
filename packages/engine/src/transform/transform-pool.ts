/**
 * Destinations' transforms, off the delivery loop (docs/adr/0017): a few threads, each with
 * the QuickJS sandbox, and a hard stop. QuickJS's interrupt stops a loop at its time limit,
 * but not a call inside a native function (an allocation loop of `new Array(1e6).fill(1)` ran
 * for seconds past a 50 ms interrupt, measured), so a watchdog reads which call each thread
 * runs and since when (a shared slot the thread writes). A call past twice its time sets its
 * thread aside, the thread's other calls going to a spare thread, already loaded; past
 * `hardStopMs` the set-aside thread is terminated — which stops WebAssembly wherever it is —
 * and the call fails. Threads start with the first call: a process whose destinations have no
 * transform starts none.
 *
 * Calls wait here, in a queue per destination, and go to the threads round robin by tenant
 * and then by destination, a few calls of a destination at a time (one while its last call
 * failed: `PER_KEY`) and at most `WINDOW` per thread: so a destination's backlog, or a tenant's many destinations, never stand between
 * another tenant's call and a thread for more than its turn, and whatever a destination's
 * code does holds a thread for at most one call's hard stop at a time. A
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
  WireCall,
} from './transform-thread.ts';

export interface TransformPoolOptions extends SandboxLimits {
  threads: number;
  /**
   * When a call still running is stopped by terminating its thread, on the wall clock
   * (default 4 × timeout + 100 ms: room for a machine busy enough to give the thread little CPU).
   */
  hardStopMs?: number;
  onThreadExit?: (err: unknown) => void;
  /** A call was stopped by terminating its thread (`key`: its destination, when it has one). */
  onStopped?: (key: string | undefined, ranMs: number) => void;
}

interface Pending {
  id: number;
  /** Its destination's id; a call without one (a check, a preview) has a key of its own. */
  key: string;
  /** Its tenant: whose turn it takes. */
  group: string;
  call: Call;
  resolve(result: SandboxResult): void;
}

/** A started worker and the slot it writes its running call into. */
interface Spawned {
  worker: Worker;
  running: Thread['running'];
  /** It ended while it was the spare. */
  exited: boolean;
}

/** A thread set aside with the one call it is running. */
interface Retired {
  worker: Worker;
  p: Pending;
  /** When the call started (ms). */
  since: number;
}

interface Thread {
  /** Null before the first call, and between a thread's end and its replacement's start. */
  worker: Worker | null;
  running: { id: Int32Array; since: BigInt64Array; buffer: SharedArrayBuffer };
  /** Sent and not answered, by call id. */
  held: Map<number, Pending>;
  outbox: [number, WireCall][];
  /** The code its worker was last sent for each destination (its next calls go without it). */
  sentCode: Map<string, string>;
  /** Its worker is to forget the code it was sent, before the next calls. */
  forget: boolean;
}

/**
 * Calls sent to one thread and not yet answered: enough that a thread does not wait for the
 * main thread between calls, few enough that a call arriving later waits behind few.
 */
const WINDOW = 4;
/**
 * Calls of one destination at the threads at once once its last call answered well (one
 * until then, and again after any failure): a job's deliveries need not wait for each
 * other's round trip, and a destination whose code misbehaves holds one call at a time.
 */
const PER_KEY = 4;
/** Destinations whose code a thread keeps between calls (the pool then has it forget them all). */
const KEPT_CODES = 10_000;
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
  private readonly onStopped: (key: string | undefined, ranMs: number) => void;
  private readonly strikes = new Map<string, { code: string; count: number; until: number }>();
  /** Calls not yet sent, by destination (or call) key, in order. */
  private readonly queues = new Map<string, Pending[]>();
  /** Keys whose next call may go now, by tenant, the tenants in the order of their turns. */
  private readonly ready = new Map<string, string[]>();
  /** The keys in `ready`. */
  private readonly readyKeys = new Set<string>();
  /** Calls of a key at a thread. */
  private readonly inflight = new Map<string, number>();
  /** Keys whose last call answered well: they may have `PER_KEY` at the threads, the others one. */
  private readonly trusted = new Set<string>();
  private seq = 0;
  private flushing = false;
  private closing = false;
  private started = false;
  private watchdog: NodeJS.Timeout | undefined;
  /** A started thread that takes the place of one retired or ended. */
  private spare: Spawned | undefined;
  /** Threads set aside with a call past its time (`watch`), until it answers or its hard stop. */
  private readonly retired = new Set<Retired>();

  constructor(options: TransformPoolOptions) {
    this.limits = { timeoutMs: options.timeoutMs, memoryBytes: options.memoryBytes };
    this.hardStopMs = options.hardStopMs ?? 4 * options.timeoutMs + 100;
    this.onThreadExit = options.onThreadExit ?? (() => undefined);
    this.onStopped = options.onStopped ?? (() => undefined);
    for (let i = 0; i < Math.max(1, options.threads); i++) {
      this.threads.push({
        worker: null,
        running: slot(),
        held: new Map(),
        outbox: [],
        sentCode: new Map(),
        forget: false,
      });
    }
  }

  /** Whether `code` compiles, runs its top level within the limits and defines `handler`. */
  check(code: string, group?: string): Promise<SandboxResult> {
    return this.submit({ op: 'check', code }, group);
  }

  /**
   * The handler's return value (JSON text) for `input`, the webhook as JSON text; `key` (a
   * destination's id) keeps its context between calls and counts its strikes; `group` (its
   * tenant) is whose turn the call takes.
   */
  run(
    key: string | undefined,
    code: string,
    input: string,
    at: number,
    group?: string,
  ): Promise<SandboxResult> {
    return this.submit({ op: 'run', key, code, input, at }, group);
  }

  async close(): Promise<void> {
    this.closing = true;
    clearInterval(this.watchdog);
    await Promise.all([
      ...this.threads.map((t) => t.worker?.terminate()),
      ...[...this.retired].map((r) => r.worker.terminate()),
      this.spare?.worker.terminate(),
    ]);
    this.spare = undefined;
    const closed = { ok: false, message: 'the transform pool closed', host: true } as const;
    for (const t of this.threads) for (const p of t.held.values()) p.resolve(closed);
    for (const r of this.retired) r.p.resolve(closed);
    this.retired.clear();
    for (const queue of this.queues.values()) for (const p of queue) p.resolve(closed);
    this.queues.clear();
  }

  private submit(call: Call, group?: string): Promise<SandboxResult> {
    if (this.closing) return Promise.resolve({ ok: false, message: 'the transform pool closed', host: true });
    if (!this.started) {
      this.started = true;
      for (const t of this.threads) this.start(t);
    }
    const id = ++this.seq;
    const key = call.op === 'run' && call.key !== undefined ? call.key : `#${id}`;
    return new Promise((resolve) => {
      const queue = this.queues.get(key);
      const p: Pending = { id, key, group: group ?? key, call, resolve };
      if (queue !== undefined) queue.push(p);
      else this.queues.set(key, [p]);
      this.readyAgain(key);
      this.later();
    });
  }

  /** `p`'s destination has a call to send: it takes its place in its tenant's turn. */
  private makeReady(p: Pending): void {
    this.readyKeys.add(p.key);
    const keys = this.ready.get(p.group);
    if (keys === undefined) this.ready.set(p.group, [p.key]);
    else keys.push(p.key);
  }

  /** The next destination whose call goes: the first tenant's first, that tenant then last in line. */
  private nextReady(): string | undefined {
    for (const [group, keys] of this.ready) {
      const key = keys.shift();
      this.ready.delete(group);
      if (keys.length > 0) this.ready.set(group, keys);
      if (key !== undefined) this.readyKeys.delete(key);
      return key;
    }
    return undefined;
  }

  /** The next call of `key`, if it has one and room at the threads, goes in its tenant's turn. */
  private readyAgain(key: string): void {
    const next = this.queues.get(key)?.[0];
    if (next === undefined || this.readyKeys.has(key)) return;
    if ((this.inflight.get(key) ?? 0) < (this.trusted.has(key) ? PER_KEY : 1)) this.makeReady(next);
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
    const n = (this.inflight.get(p.key) ?? 1) - 1;
    if (n > 0) this.inflight.set(p.key, n);
    else this.inflight.delete(p.key);
    if (!result.ok) this.trusted.delete(p.key);
    else if (p.call.op === 'run' && p.call.key !== undefined) {
      if (this.trusted.size >= 100_000) this.trusted.clear();
      this.trusted.add(p.key);
    }
    this.count(p, result);
    this.readyAgain(p.key);
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
      const key = thread === undefined ? undefined : this.nextReady();
      if (thread === undefined || key === undefined) break;
      const queue = this.queues.get(key) as Pending[];
      const p = queue.shift() as Pending;
      if (queue.length === 0) this.queues.delete(key);
      const refused = this.quarantined(key, p.call);
      if (refused !== undefined) {
        this.readyAgain(key);
        p.resolve({ ok: false, message: refused });
        continue;
      }
      this.inflight.set(key, (this.inflight.get(key) ?? 0) + 1);
      thread.held.set(p.id, p);
      thread.outbox.push([p.id, this.wire(thread, p.call)]);
      this.readyAgain(key);
    }
    for (const t of this.threads) {
      if (t.outbox.length === 0 || t.worker === null) continue;
      t.worker.postMessage({
        calls: t.outbox,
        ...(t.forget ? { forget: true } : {}),
      } satisfies ToTransformThread);
      t.outbox = [];
      t.forget = false;
      this.watchdog ??= setInterval(() => this.watch(), Math.max(5, Math.floor(this.limits.timeoutMs / 2)));
      this.watchdog.unref();
    }
  }

  /**
   * `call` as sent to `t`: a run without its code when `t`'s worker has it. The worker keeps
   * what it is sent until the pool tells it to forget (`forget`, with the next calls), so the
   * two never disagree on what it holds.
   */
  private wire(t: Thread, call: Call): WireCall {
    if (call.op !== 'run' || call.key === undefined) return call;
    if (t.sentCode.get(call.key) === call.code)
      return { op: 'run', key: call.key, input: call.input, at: call.at };
    if (!t.sentCode.has(call.key) && t.sentCode.size >= KEPT_CODES) {
      t.sentCode.clear();
      t.forget = true;
    }
    t.sentCode.set(call.key, call.code);
    return call;
  }

  /**
   * A call past twice its time on the wall clock is set aside with its thread (`retire`): the
   * thread's other calls go to a new thread at once, so they wait behind it that long at most.
   * A retired thread still finishing its call inside the hard stop answers it; past the hard
   * stop it is ended and the call fails.
   */
  private watch(): void {
    const now = Date.now();
    for (const t of this.threads) {
      const id = Atomics.load(t.running.id, 0);
      if (id === 0 || t.worker === null) continue;
      const p = t.held.get(id);
      const ranMs = now - Number(Atomics.load(t.running.since, 0));
      // One thread set aside at a time; more only at the hard stop: on a machine too busy to
      // run the threads, calls run long without being stuck, and setting each aside would only
      // start more threads.
      const due = this.retired.size === 0 ? 2 * this.limits.timeoutMs : this.hardStopMs;
      if (p !== undefined && ranMs > due) this.retire(t, p);
    }
    for (const r of this.retired) {
      const ranMs = now - r.since;
      if (ranMs <= this.hardStopMs) continue;
      this.retired.delete(r);
      void r.worker.terminate();
      this.onStopped(r.p.call.op === 'run' ? r.p.call.key : undefined, ranMs);
      this.answered(r.p, {
        ok: false,
        message: `stopped after ${ranMs} ms (its limit is ${this.limits.timeoutMs} ms)`,
      });
    }
    if (this.retired.size === 0 && this.threads.every((t) => t.held.size === 0)) {
      clearInterval(this.watchdog);
      this.watchdog = undefined;
    }
  }

  /** `t`'s worker keeps only the call `p` it is running; a new worker takes `t`'s other calls. */
  private retire(t: Thread, p: Pending): void {
    const worker = t.worker as Worker;
    t.held.delete(p.id);
    t.worker = null;
    worker.removeAllListeners('message');
    worker.removeAllListeners('exit');
    const r: Retired = { worker, p, since: Number(Atomics.load(t.running.since, 0)) };
    this.retired.add(r);
    worker.on('message', (m: FromTransformThread) => {
      for (const [id, result] of m.done) {
        if (id !== p.id || !this.retired.delete(r)) continue;
        void worker.terminate();
        this.answered(p, result);
      }
    });
    worker.on('exit', (code) => {
      if (this.retired.delete(r))
        this.answered(p, {
          ok: false,
          message: `the transform thread ended during the call (exit code ${code})`,
          host: true,
        });
    });
    this.restart(t);
  }

  /**
   * A new worker for `t` — the spare, already loaded, when there is one (a thread's start,
   * ~90 ms measured, is then not in the way of the calls it is given) — with the calls its
   * last one had not answered.
   */
  private restart(t: Thread): void {
    if (this.closing) return;
    // Every call sent or waiting to be sent is in `held`: all of them, in full, to the new worker.
    t.outbox = [...t.held].map(([id, p]): [number, WireCall] => [id, p.call]);
    this.start(t);
    this.flush();
  }

  private spawn(): Spawned {
    const running = slot();
    const worker = new Worker(ENTRY, {
      workerData: { limits: this.limits, running: running.buffer } satisfies TransformThreadData,
    });
    return { worker, running, exited: false };
  }

  /** A spare started now, ready for the next retire or restart; one that fails is let go. */
  private spawnSpare(): void {
    if (this.closing) return;
    const spare = this.spawn();
    spare.worker.unref();
    // Until a thread takes it over, its failures are only logged: it is replaced when used.
    spare.worker.on('error', (err) => this.onThreadExit(err));
    spare.worker.once('exit', () => {
      spare.exited = true;
    });
    this.spare = spare;
  }

  private start(t: Thread): void {
    const taken = this.spare !== undefined && !this.spare.exited ? this.spare : undefined;
    const spawned = taken ?? this.spawn();
    if (taken !== undefined) taken.worker.removeAllListeners();
    this.spare = undefined;
    this.spawnSpare();
    const { worker } = spawned;
    worker.ref();
    t.running = spawned.running;
    t.worker = worker;
    // A new worker has no code yet: each destination's next call carries it.
    t.sentCode = new Map();
    t.forget = false;
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
          host: true,
        });
      // A thread that never answered (its module did not load) would fail every call again.
      if (!answered && id === 0) {
        const held = [...t.held.values()];
        t.held.clear();
        for (const q of held)
          this.answered(q, {
            ok: false,
            message: `the transform thread did not start (${String(failure)})`,
            host: true,
          });
        t.outbox = [];
      }
      setTimeout(() => this.restart(t), 100).unref();
    });
  }
}
