/**
 * A destination's transform run in QuickJS compiled to WebAssembly (docs/adr/0017): the
 * guest's heap is a WebAssembly memory, and it is given no host function, so it has no
 * network, file, timer or host object; its clock and its `Math.random` are fixed per call.
 * This file runs on a transform thread (transform-thread.ts); the hard stop of a call that
 * the interrupt cannot reach is the pool's (transform-pool.ts).
 *
 * A context is made per destination and code (a runtime of its own, with its own memory
 * limit) and kept for its next calls: a fresh context costs ~200 µs of the ~250 µs a call
 * would take, measured. A context that failed in any way is thrown away, and the least
 * recently used goes past `KEPT_CONTEXTS`. State a transform keeps at its top level may so
 * live on between its calls, never into another destination's.
 */

import variant from '@jitl/quickjs-wasmfile-release-sync';
import {
  newQuickJSWASMModuleFromVariant,
  type QuickJSContext,
  type QuickJSHandle,
  type QuickJSRuntime,
  type QuickJSWASMModule,
} from 'quickjs-emscripten-core';

export interface SandboxLimits {
  /** The interrupt's deadline: the CPU time of the call's thread (SLUICE_TRANSFORM_TIMEOUT_MS). */
  timeoutMs: number;
  /** The guest heap's limit (SLUICE_TRANSFORM_MEMORY_BYTES). */
  memoryBytes: number;
}

/** What a call gave: the handler's return value as JSON text, or why there is none. */
export type SandboxResult =
  | { ok: true; output: string }
  /** `host`: the sandbox or its thread failed, not the guest's code (it may go well again). */
  | { ok: false; message: string; line?: number; host?: true };

/**
 * This thread's CPU time (µs): the limit is the call's own work, not the moments a busy
 * machine gave the thread none (~0.5 µs a reading, measured; the interrupt reads it every
 * few thousand instructions).
 */
function cpuMicros(): number {
  const { user, system } = process.threadCpuUsage();
  return user + system;
}

/**
 * Contexts kept on a thread: 64, fewer when each may use more (every runtime on a thread lives
 * in one WebAssembly memory, which does not shrink): at most 512 MiB of their limits together.
 */
const keptContexts = (memoryBytes: number) =>
  Math.max(4, Math.min(64, Math.floor((512 * 1024 * 1024) / memoryBytes)));
const STACK_BYTES = 256 * 1_024;
const FILE = 'transform.js';
const WARM_UP = '{"type":"sluice.warm","payload":{"a":[1,"b",{"c":null}]},"headers":{}}';

/**
 * Evaluated in each new context before the tenant's code: the clock and `Math.random` fixed
 * per call, and the function that calls the handler. It keeps its own JSON functions, so a
 * transform that replaces the global ones changes only its own output.
 */
const PRELUDE = `(function () {
  const RealDate = Date, parse = JSON.parse, stringify = JSON.stringify;
  let now = 0, seed = 0;
  function FixedDate(...args) {
    if (!new.target) return new RealDate(now).toString();
    return args.length === 0 ? new RealDate(now) : new RealDate(...args);
  }
  FixedDate.now = () => now;
  FixedDate.parse = RealDate.parse;
  FixedDate.UTC = RealDate.UTC;
  FixedDate.prototype = RealDate.prototype;
  // No way back to the real clock: not through a date's constructor, nor the real Date's now.
  Object.defineProperty(RealDate.prototype, 'constructor', { value: FixedDate, writable: true, configurable: true });
  RealDate.now = FixedDate.now;
  globalThis.Date = FixedDate;
  Math.random = function random() {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return function call(handler, input, at) {
    now = at;
    seed = at | 0;
    const out = handler(parse(input));
    if (out !== null && typeof out === 'object' && typeof out.then === 'function')
      throw new TypeError('handler returned a Promise: it must return the webhook (it runs synchronously)');
    const text = stringify(out);
    return text === undefined ? 'null' : text;
  };
})()`;

interface Kept {
  code: string;
  runtime: QuickJSRuntime;
  context: QuickJSContext;
  call: QuickJSHandle;
  handler: QuickJSHandle;
  /** The running call's interrupt deadline (µs of this thread's CPU time, `cpuMicros`). */
  deadline: number;
}

/** `error` as the tenant reads it: its name and message, and the line of its code it names. */
function failure(context: QuickJSContext, error: QuickJSHandle): { message: string; line?: number } {
  let e: unknown;
  try {
    e = context.dump(error);
  } catch {
    // Describing it needed memory the guest had used up.
    return { message: 'ran out of memory' };
  } finally {
    error.dispose();
  }
  if (e === null || typeof e !== 'object') return { message: `threw ${String(e)}` };
  const { name, message, stack, lineNumber } = e as Record<string, unknown>;
  const text =
    message === 'interrupted'
      ? 'ran out of time'
      : message === 'out of memory'
        ? 'ran out of memory'
        : `${typeof name === 'string' ? name : 'Error'}: ${typeof message === 'string' ? message : String(e)}`;
  const at = typeof stack === 'string' ? /transform\.js:(\d+)/.exec(stack)?.[1] : undefined;
  const line = typeof lineNumber === 'number' ? lineNumber : at === undefined ? undefined : Number(at);
  return line === undefined ? { message: text } : { message: text, line };
}

export class Sandbox {
  private readonly qjs: QuickJSWASMModule;
  private readonly limits: SandboxLimits;
  /** By destination id, least recently used first (a Map keeps insertion order). */
  private readonly kept = new Map<string, Kept>();

  private constructor(qjs: QuickJSWASMModule, limits: SandboxLimits) {
    this.qjs = qjs;
    this.limits = limits;
  }

  /**
   * Loads the WebAssembly module (once per thread) and runs a call through it, so that a
   * thread's first real call is not the one that pays for compiling the engine's code.
   */
  static async load(limits: SandboxLimits): Promise<Sandbox> {
    // The package's types are read as CommonJS, its ESM build (what Node loads) exports the variant as default.
    const built = variant as unknown as Parameters<typeof newQuickJSWASMModuleFromVariant>[0];
    const sandbox = new Sandbox(await newQuickJSWASMModuleFromVariant(built), limits);
    sandbox.run(undefined, 'function handler(w) { return { payload: w.payload } }', WARM_UP, 0);
    return sandbox;
  }

  /** Whether `code` compiles, runs its top level within the limits and defines `handler`. */
  check(code: string): SandboxResult {
    const made = this.make(code);
    if ('message' in made) return { ok: false, ...made };
    this.dispose(made);
    return { ok: true, output: '' };
  }

  /**
   * Calls the handler of `code` with `input` (the webhook as JSON text) at `at` (the clock
   * the guest reads). `key` keeps the context for the key's next call of the same code;
   * without one the context is made for this call only (a preview's code, not yet saved).
   */
  run(key: string | undefined, code: string, input: string, at: number): SandboxResult {
    let kept = key === undefined ? undefined : this.kept.get(key);
    if (kept !== undefined && kept.code !== code) {
      this.forget(key as string);
      kept = undefined;
    }
    if (kept === undefined) {
      const made = this.make(code);
      if ('message' in made) return { ok: false, ...made };
      kept = made;
    } else this.kept.delete(key as string);
    const { context } = kept;
    kept.deadline = cpuMicros() + this.limits.timeoutMs * 1_000;
    const args = [context.newString(input), context.newNumber(at)];
    const result = context.callFunction(kept.call, context.undefined, kept.handler, ...args);
    for (const a of args) a.dispose();
    if (result.error) {
      const failed = failure(context, result.error);
      this.dispose(kept);
      return { ok: false, ...failed };
    }
    const output = context.getString(result.value);
    result.value.dispose();
    if (key === undefined) this.dispose(kept);
    else {
      this.kept.set(key, kept);
      if (this.kept.size > keptContexts(this.limits.memoryBytes))
        this.forget(this.kept.keys().next().value as string);
    }
    return { ok: true, output };
  }

  /** A runtime and context with the prelude and `code` evaluated, and its `handler`. */
  private make(code: string): Kept | { message: string; line?: number } {
    const runtime = this.qjs.newRuntime();
    runtime.setMemoryLimit(this.limits.memoryBytes);
    runtime.setMaxStackSize(STACK_BYTES);
    const kept = { code, runtime, deadline: cpuMicros() + this.limits.timeoutMs * 1_000 } as Kept;
    runtime.setInterruptHandler(() => cpuMicros() > kept.deadline);
    const context = runtime.newContext();
    kept.context = context;
    const prelude = context.evalCode(PRELUDE, 'sluice.js');
    if (prelude.error) {
      const failed = failure(context, prelude.error);
      context.dispose();
      runtime.dispose();
      return failed;
    }
    kept.call = prelude.value;
    // The limit is the tenant's code's own: not the context's making nor the prelude.
    kept.deadline = cpuMicros() + this.limits.timeoutMs * 1_000;
    const top = context.evalCode(code, FILE);
    if (top.error) {
      const failed = failure(context, top.error);
      this.dispose(kept, false);
      return failed;
    }
    top.value.dispose();
    const handler = context.evalCode('typeof handler === "function" ? handler : undefined', 'sluice.js');
    if (handler.error || context.typeof(handler.value) !== 'function') {
      if (handler.error) handler.error.dispose();
      else handler.value.dispose();
      this.dispose(kept, false);
      return { message: 'defines no function handler(webhook)' };
    }
    kept.handler = handler.value;
    return kept;
  }

  private forget(key: string): void {
    const kept = this.kept.get(key);
    this.kept.delete(key);
    if (kept !== undefined) this.dispose(kept);
  }

  private dispose(kept: Kept, withHandler = true): void {
    if (withHandler) kept.handler.dispose();
    kept.call.dispose();
    kept.context.dispose();
    kept.runtime.dispose();
  }
}
