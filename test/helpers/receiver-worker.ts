/**
 * The receiver's HTTP server, in a worker thread of its own so that its arrival times are
 * not skewed by whatever blocks the test's main thread (where an in-process Sluice runs):
 * a real destination is another machine. It reports every request to the main thread
 * (`receiver.ts`) and takes its per-path behaviour from there. Protocol in `receiver.ts`.
 */

import type { ServerResponse } from 'node:http';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { parentPort } from 'node:worker_threads';
import type { Capacity, Command, Hostility, Reply, Report } from './receiver.ts';

interface Behaviour {
  script: Reply[];
  status: number;
  delayMs: number;
  capacity: Capacity | null;
  /** Arrival times of the requests accepted under the capacity, oldest first. */
  accepted: number[];
  hostility: Hostility | null;
  /** Requests it answered as hostile (`flaky` answers every fourth). */
  hostileSeen: number;
  /** Its slow, hanging and dripping answers, cut when it is no longer hostile. */
  open: Set<ServerResponse>;
}

const HUGE_BYTES = 50 * 1024 * 1024;
const CHUNK = Buffer.alloc(64 * 1024, 'x');

/** Answers as a hostile receiver does (`Hostility`). */
function hostile(r: Behaviour, res: ServerResponse, i: number): void {
  const seen = r.hostileSeen++;
  switch (r.hostility) {
    case 'flaky':
      if (seen % 4 === 0) {
        res.writeHead(200, { 'content-type': 'text/plain' });
        res.end('ok');
        send({ kind: 'status', i, status: 200 });
        return;
      }
      r.open.add(res);
      res.on('close', () => r.open.delete(res));
      return;
    case 'reset':
      res.socket?.destroy();
      return;
    case 'slow':
    case 'hang': {
      r.open.add(res);
      const timer =
        r.hostility === 'slow'
          ? setTimeout(() => {
              res.writeHead(200, { 'content-type': 'text/plain' });
              res.end('slow');
            }, 20_000)
          : undefined;
      if (timer) timers.add(timer);
      res.on('close', () => {
        if (timer) {
          clearTimeout(timer);
          timers.delete(timer);
        }
        r.open.delete(res);
      });
      return;
    }
    case 'drip': {
      r.open.add(res);
      res.writeHead(200, { 'content-type': 'text/plain' });
      const timer = setInterval(() => res.write('.'), 1_000);
      timers.add(timer);
      res.on('close', () => {
        clearInterval(timer);
        timers.delete(timer);
        r.open.delete(res);
      });
      return;
    }
    case 'huge': {
      res.writeHead(200, { 'content-type': 'text/plain', 'content-length': String(HUGE_BYTES) });
      let sent = 0;
      const pump = () => {
        while (sent < HUGE_BYTES && !res.destroyed) {
          sent += CHUNK.length;
          if (!res.write(CHUNK)) return void res.once('drain', pump);
        }
        res.end();
      };
      pump();
      return;
    }
  }
}

const port = parentPort!;
const send = (report: Report) => port.postMessage(report);
const routes = new Map<string, Behaviour>();
const timers = new Set<NodeJS.Timeout>();
let count = 0;

function route(path: string): Behaviour {
  let r = routes.get(path);
  if (r === undefined) {
    r = {
      script: [],
      status: 200,
      delayMs: 0,
      capacity: null,
      accepted: [],
      hostility: null,
      hostileSeen: 0,
      open: new Set(),
    };
    routes.set(path, r);
  }
  return r;
}

/** Over the path's capacity at `at`: the 429 to answer (the request is not counted). */
function overCapacity(path: string, at: number): { status: number; headers: Record<string, string> } | null {
  const r = route(path);
  if (r.capacity === null) return null;
  const { limit, periodMs, retryAfter } = r.capacity;
  while (r.accepted.length > 0 && (r.accepted[0] as number) <= at - periodMs) r.accepted.shift();
  if (r.accepted.length >= limit) return { status: 429, headers: { 'retry-after': retryAfter } };
  r.accepted.push(at);
  return null;
}

function next(path: string): {
  status: number;
  headers: Record<string, string>;
  body: string;
  delayMs: number;
} {
  const r = route(path);
  const reply = r.script.shift();
  if (reply === undefined) return { status: r.status, headers: {}, body: '', delayMs: r.delayMs };
  if (typeof reply === 'number') return { status: reply, headers: {}, body: '', delayMs: r.delayMs };
  return {
    status: reply.status,
    headers: reply.headers ?? {},
    body: reply.body ?? '',
    delayMs: reply.delayMs ?? r.delayMs,
  };
}

const server = createServer({ keepAliveTimeout: 60_000 });
server.on('request', (req, res) => {
  // Headers are parsed: this is the arrival (docs/design.md "How we measure").
  const at = performance.timeOrigin + performance.now();
  const i = count++;
  const path = new URL(req.url ?? '/', 'http://127.0.0.1').pathname;
  send({ kind: 'arrival', i, at, method: req.method ?? '', path, headers: req.headers });
  const refused = overCapacity(path, at);
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('end', () => {
    send({ kind: 'body', i, body: Buffer.concat(chunks).toString('utf8') });
    if (route(path).hostility !== null) return hostile(route(path), res, i);
    const reply = refused ? { ...refused, body: 'over capacity', delayMs: 0 } : next(path);
    const answer = () => {
      if (res.destroyed) return;
      res.writeHead(reply.status, { 'content-type': 'text/plain', ...reply.headers });
      res.end(reply.body);
      send({ kind: 'status', i, status: reply.status });
    };
    if (reply.delayMs <= 0) return answer();
    const timer = setTimeout(() => {
      timers.delete(timer);
      answer();
    }, reply.delayMs);
    timers.add(timer);
  });
});

port.on('message', (cmd: Command) => {
  switch (cmd.kind) {
    case 'script':
      route(cmd.path).script.push(...cmd.replies);
      break;
    case 'default':
      route(cmd.path).status = cmd.status;
      break;
    case 'delay':
      route(cmd.path).delayMs = cmd.delayMs;
      break;
    case 'capacity':
      route(cmd.path).capacity = cmd.capacity;
      route(cmd.path).accepted = [];
      break;
    case 'hostile': {
      const r = route(cmd.path);
      r.hostility = cmd.hostility;
      if (cmd.hostility === null) for (const res of r.open) res.socket?.destroy();
      break;
    }
    case 'close':
      for (const timer of timers) clearTimeout(timer);
      server.close(() => {
        send({ kind: 'ack', seq: cmd.seq });
        port.close();
      });
      server.closeAllConnections();
      return;
  }
  send({ kind: 'ack', seq: cmd.seq });
});

server.listen(0, '127.0.0.1', () =>
  send({ kind: 'listening', port: (server.address() as AddressInfo).port }),
);
