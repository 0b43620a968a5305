/**
 * The receiver: every destination of every target, in its own process (started under
 * `nice -n -10` when permitted, so that on two cores its arrival times are not delayed by
 * run-queue waits; receiver-client.ts records whether it was).
 *
 *   POST /d/<dest>[?fail=0.1&limit429=5&retry_after=1&delay_ms=50]
 *        records {t, dest, id, created, wid, status} and answers (200 unless a behaviour
 *        says otherwise). `t` is `performance.timeOrigin + performance.now()` when the
 *        request's headers were parsed (docs/design.md "How we measure"); `id` and `created` come
 *        from the JSON body (`bench.id`, `bench.createdAt`); `wid` is the `webhook-id` header.
 *   POST /control {"dest": "d000" | "*", "behaviour": {"fail": 0.2, …}}  behaviour at run time
 *   GET  /count[?prefix=h]   {requests, ok, uniqueOk[, uniqueOkPrefix]}: with a prefix, also
 *                 the distinct events answered 2xx whose destination's id starts with it
 *   GET  /dump?file=<path>   writes the NDJSON log, answers its own CPU and event-loop delay
 *   SIGTERM       writes the log to $RECEIVER_LOG (when set) and exits
 *
 * Behaviours (query string of the destination URL, overridden by /control):
 *   fail=p        answer 500 with probability p (seeded PRNG, $RECEIVER_SEED)
 *   limit429=n    enforce its own sliding 1 s limit of n accepted requests; past it answer
 *                 429 with Retry-After (retry_after=s, or the seconds until a slot frees, ≥ 1)
 *   delay_ms=ms   answer that much later (a slow receiver)
 *   hang_of=n     answer one request in n and never the others (an overloaded receiver:
 *                 recorded with status 0; the client's timeout ends them)
 *
 * Stdout: one line `RECEIVER_LISTENING <port>` once bound.
 */

import { writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { now, seededRandom } from './common.ts';

interface Behaviour {
  fail?: number;
  limit429?: number;
  retry_after?: number;
  delay_ms?: number;
  hang_of?: number;
}

const KEYS = ['fail', 'limit429', 'retry_after', 'delay_ms', 'hang_of'] as const;
/** Per destination: requests seen, for hang_of. */
const seen = new Map<string, number>();

const random = seededRandom(Number(process.env.RECEIVER_SEED ?? 1));
const controlled = new Map<string, Behaviour>();

// Columnar records: one entry per request, whatever its answer.
const T: number[] = [];
const DEST: string[] = [];
const ID: string[] = [];
const CREATED: (number | null)[] = [];
const WID: string[] = [];
const STATUS: number[] = [];
const okIds = new Set<string>();
let ok = 0;

/** Arrival times of accepted requests per destination, for limit429. */
const accepted = new Map<string, number[]>();
let open = 0;
let maxOpen = 0;
const cpu0 = process.cpuUsage();
const eld = monitorEventLoopDelay({ resolution: 10 });
eld.enable();

function behaviourOf(dest: string, query: string): Behaviour {
  const b: Behaviour = {};
  if (query) {
    const params = new URLSearchParams(query);
    for (const key of KEYS) {
      const v = params.get(key);
      if (v !== null) b[key] = Number(v);
    }
  }
  return { ...b, ...controlled.get('*'), ...controlled.get(dest) };
}

function decide(dest: string, t: number, b: Behaviour): { status: number; retryAfter?: string } {
  if ((b.fail ?? 0) > 0 && random() < (b.fail as number)) return { status: 500 };
  const limit = b.limit429 ?? 0;
  if (limit > 0) {
    let times = accepted.get(dest);
    if (times === undefined) {
      times = [];
      accepted.set(dest, times);
    }
    while (times.length > 0 && (times[0] as number) <= t - 1_000) times.shift();
    if (times.length >= limit) {
      const seconds =
        (b.retry_after ?? 0) > 0
          ? (b.retry_after as number)
          : Math.max(1, Math.ceil(((times[0] as number) + 1_000 - t) / 1_000));
      return { status: 429, retryAfter: String(seconds) };
    }
    times.push(t);
  }
  return { status: 200 };
}

function readBody(req: IncomingMessage, done: (body: string) => void): void {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => done(Buffer.concat(chunks).toString('utf8')));
}

function benchOf(body: string): { id: string; created: number | null } {
  try {
    const parsed = JSON.parse(body) as { bench?: { id?: unknown; createdAt?: unknown } };
    const id = typeof parsed.bench?.id === 'string' ? parsed.bench.id : '';
    const created = typeof parsed.bench?.createdAt === 'number' ? parsed.bench.createdAt : null;
    return { id, created };
  } catch {
    return { id: '', created: null };
  }
}

function onWebhook(req: IncomingMessage, res: ServerResponse, t: number, url: string): void {
  const q = url.indexOf('?');
  const dest = decodeURIComponent(q < 0 ? url.slice(3) : url.slice(3, q));
  const b = behaviourOf(dest, q < 0 ? '' : url.slice(q + 1));
  const n = seen.get(dest) ?? 0;
  seen.set(dest, n + 1);
  const hangs = (b.hang_of ?? 0) > 1 && n % (b.hang_of as number) !== 0;
  const answer = hangs ? { status: 0 } : decide(dest, t, b);
  const i = T.length;
  T.push(t);
  DEST.push(dest);
  ID.push('');
  CREATED.push(null);
  const wid = req.headers['webhook-id'];
  WID.push(typeof wid === 'string' ? wid : '');
  STATUS.push(answer.status);
  readBody(req, (body) => {
    const { id, created } = benchOf(body);
    ID[i] = id;
    CREATED[i] = created;
    if (answer.status === 200) {
      ok++;
      okIds.add(id);
    }
    if (hangs) return; // left open: the client's timeout ends it
    const send = (): void => {
      const headers: Record<string, string> = { 'content-length': '0' };
      if (answer.retryAfter) headers['retry-after'] = answer.retryAfter;
      res.writeHead(answer.status, headers);
      res.end();
    };
    if ((b.delay_ms ?? 0) > 0) setTimeout(send, b.delay_ms);
    else send();
  });
}

function writeLog(file: string): number {
  const lines: string[] = new Array(T.length);
  for (let i = 0; i < T.length; i++) {
    lines[i] = JSON.stringify({
      t: T[i],
      dest: DEST[i],
      id: ID[i],
      created: CREATED[i],
      wid: WID[i],
      status: STATUS[i],
    });
  }
  writeFileSync(file, lines.length > 0 ? `${lines.join('\n')}\n` : '');
  return lines.length;
}

function selfStats() {
  const cpu = process.cpuUsage(cpu0);
  return {
    requests: T.length,
    ok,
    uniqueOk: okIds.size,
    cpuS: (cpu.user + cpu.system) / 1e6,
    // The histogram records whole timer periods: the delay is what exceeds the resolution.
    eventLoopDelayP99Ms: Math.max(0, eld.percentile(99) / 1e6 - 10),
    eventLoopDelayMaxMs: Math.max(0, eld.max / 1e6 - 10),
    maxOpenConnections: maxOpen,
  };
}

function json(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

const server = createServer((req, res) => {
  const t = now();
  const url = req.url ?? '/';
  if (req.method === 'POST' && url.startsWith('/d/')) return onWebhook(req, res, t, url);
  if (req.method === 'GET' && (url === '/count' || url.startsWith('/count?'))) {
    const prefix = new URL(url, 'http://x').searchParams.get('prefix');
    const counts = { requests: T.length, ok, uniqueOk: okIds.size };
    if (prefix === null) return json(res, 200, counts);
    let uniqueOkPrefix = 0;
    for (const id of okIds) if (id.startsWith(prefix)) uniqueOkPrefix++;
    return json(res, 200, { ...counts, uniqueOkPrefix });
  }
  if (req.method === 'POST' && url === '/control') {
    return readBody(req, (body) => {
      const { dest, behaviour } = JSON.parse(body) as { dest: string; behaviour: Behaviour };
      controlled.set(dest, { ...controlled.get(dest), ...behaviour });
      json(res, 200, { ok: true });
    });
  }
  if (req.method === 'GET' && url.startsWith('/dump')) {
    const file = new URL(url, 'http://x').searchParams.get('file');
    if (!file) return json(res, 400, { error: 'pass ?file=' });
    const stats = selfStats(); // before the (costly) write
    const count = writeLog(file);
    return json(res, 200, { file, count, ...stats });
  }
  if (req.method === 'GET' && url === '/health') return json(res, 200, { ok: true });
  json(res, 404, { error: 'not found' });
});
server.keepAliveTimeout = 65_000;
server.headersTimeout = 66_000;
server.requestTimeout = 0;
server.on('connection', (socket) => {
  open++;
  if (open > maxOpen) maxOpen = open;
  socket.on('close', () => open--);
});

server.listen(Number(process.env.PORT ?? 0), '127.0.0.1', () => {
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  process.stdout.write(`RECEIVER_LISTENING ${port}\n`);
});

process.on('SIGTERM', () => {
  const file = process.env.RECEIVER_LOG;
  if (file) writeLog(file);
  process.exit(0);
});
