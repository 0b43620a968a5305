/**
 * The body of a delivery thread (`DeliveryThreads`): the HTTP side of each attempt — signing,
 * the undici request, the response excerpt — on its own core. It runs the same `Deliverer`
 * as the main thread would, with its own keep-alive pool.
 *
 * Messages, batched per turn in both directions:
 *   in:  { attempts: [id, request, nowSeconds, wantsWritten][] }
 *   out: { written: [id, at][], done: [id, report][] }
 *
 * Times are taken here, on the wall clock, where they happen (the report's `endedAt`, the
 * write's `at`), not when the main thread reads the message.
 */

import { parentPort, workerData } from 'node:worker_threads';
import { type AttemptReport, Deliverer, type DeliveryRequest, describeError } from './deliver.ts';

export interface ThreadSettings {
  allowPrivateNetworks: boolean;
  connections: number;
  proxy?: string | undefined;
}

export type AttemptMessage = [
  id: number,
  request: DeliveryRequest,
  nowSeconds: number,
  wantsWritten: boolean,
];

export interface ToThread {
  attempts?: AttemptMessage[];
  close?: true;
}

export interface FromThread {
  written: [id: number, at: number][];
  done: [id: number, report: AttemptReport][];
  closed?: true;
}

const port = parentPort;
if (port === null) throw new Error('delivery-thread.ts runs as a worker thread');
const settings = workerData as ThreadSettings;
const deliverer = new Deliverer(settings);

let out: FromThread = { written: [], done: [] };
let flushing = false;
const flush = () => {
  flushing = false;
  const batch = out;
  out = { written: [], done: [] };
  port.postMessage(batch);
};
const later = () => {
  if (flushing) return;
  flushing = true;
  setImmediate(flush);
};

port.on('message', (message: ToThread) => {
  for (const [id, request, nowSeconds, wantsWritten] of message.attempts ?? []) {
    const written = wantsWritten
      ? (at: number) => {
          out.written.push([id, at]);
          later();
        }
      : undefined;
    deliverer
      .attempt(request, nowSeconds, written)
      .catch(
        (err: unknown): AttemptReport => ({
          result: { kind: 'error', ...describeError(err) },
          responseExcerpt: null,
        }),
      )
      .then((report) => {
        out.done.push([id, report]);
        later();
      });
  }
  if (message.close) {
    void deliverer.close().then(() => port.postMessage({ written: [], done: [], closed: true }));
  }
});
