/**
 * The body of a transform thread (`TransformPool`): calls of destinations' transforms in the
 * QuickJS sandbox, one at a time, in the order they came.
 *
 * Messages: the calls come in batches, each answer goes as soon as it is made (the pool
 * keeps only a few calls at a thread, so that a call that comes later waits behind few):
 *   in:  { calls: [id, call][] }
 *   out: { done: [id, result][] }
 *
 * Before each call the thread writes its id and start into the shared `running` slot, so the
 * pool's watchdog knows which call to stop and since when, without a message per call.
 *
 * A call the sandbox itself failed (not the guest's error: the engine's, such as a runtime it
 * could not free) is answered, and then the thread ends, so that a new one, with a WebAssembly
 * instance of its own, takes the next calls instead of one whose heap may be left in pieces.
 */

import { parentPort, workerData } from 'node:worker_threads';
import { Sandbox, type SandboxLimits, type SandboxResult } from './sandbox.ts';

export type Call =
  | { op: 'check'; code: string }
  | { op: 'run'; key?: string | undefined; code: string; input: string; at: number };

/**
 * A call as sent: a run of a destination whose code this thread was sent before comes
 * without it (a transform's code may be 64 KiB, sent with each call it was most of the message).
 */
export type WireCall = Call | { op: 'run'; key: string; input: string; at: number };

export interface TransformThreadData {
  limits: SandboxLimits;
  /** Int32 [0]: the running call's id (0: none); BigInt64 [1]: when it started (ms). */
  running: SharedArrayBuffer;
}

export interface ToTransformThread {
  calls: [id: number, call: WireCall][];
  /** Forget the code sent before: the calls that follow carry theirs again. */
  forget?: true;
}

export interface FromTransformThread {
  done: [id: number, result: SandboxResult][];
}

const port = parentPort;
if (port === null) throw new Error('transform-thread.ts runs as a worker thread');
const data = workerData as TransformThreadData;
const runningId = new Int32Array(data.running, 0, 1);
const runningSince = new BigInt64Array(data.running, 8, 1);
const sandbox = await Sandbox.load(data.limits);
/** Each destination's code as last sent (the pool sends it again when it changes). */
const codes = new Map<string, string>();

function codeOf(call: Extract<WireCall, { op: 'run' }>): string | undefined {
  if (!('code' in call)) return codes.get(call.key);
  if (call.key !== undefined) codes.set(call.key, call.code);
  return call.code;
}

port.on('message', (message: ToTransformThread) => {
  if (message.forget) codes.clear();
  for (const [id, call] of message.calls) {
    Atomics.store(runningSince, 0, BigInt(Date.now()));
    Atomics.store(runningId, 0, id);
    let result: SandboxResult;
    try {
      if (call.op === 'check') result = sandbox.check(call.code);
      else {
        const code = codeOf(call);
        result =
          code === undefined
            ? { ok: false, message: 'the sandbox was not sent the code', host: true }
            : sandbox.run(call.key, code, call.input, call.at);
      }
    } catch (err) {
      Atomics.store(runningId, 0, 0);
      const failed = `the sandbox failed: ${err instanceof Error ? err.message : String(err)}`;
      port.postMessage({
        done: [[id, { ok: false, message: failed, host: true }]],
      } satisfies FromTransformThread);
      // The calls after it in this message go to the next thread (the pool's restart).
      process.exit(1);
    }
    Atomics.store(runningId, 0, 0);
    port.postMessage({ done: [[id, result]] } satisfies FromTransformThread);
  }
});
