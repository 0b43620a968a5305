/**
 * Sluice under test: a single box in-process (`startBox`, or `harness` for a box plus a
 * receiver owned by one test), or as a child process on a data dir (`spawnBox`, for the
 * kill -9 test); a small API client over undici with its own connection pool, and the few
 * calls every test makes.
 */

import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:net';
import { createInterface } from 'node:readline';
import { after, type TestContext } from 'node:test';
import { fileURLToPath } from 'node:url';
import type {
  AcceptedEvent as Accepted,
  DeliveryWithAttempts as Delivery,
  DestinationWithSecret as Destination,
  NewEvent as EventInput,
} from '@sluice/client';
import { Agent, request } from 'undici';
import { assertNoLeaks } from './leaks.ts';
import { type Receiver, sleep, startReceiver } from './receiver.ts';
import { type BoxOptions, type ShapeBox, startShape, tempDir } from './shape.ts';

const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));

// ---- the API's shapes, as far as the tests read them ----

export interface ApiError {
  error: { code: string; message: string; details?: unknown };
}

export interface Tenant {
  id: string;
  name: string;
  apiKey: string;
}

export interface RateLimit {
  limit: number;
  period: 'second' | 'minute' | 'hour';
  /** A token bucket of this capacity refilled at `limit` per period. */
  burst?: number;
}

// The API's answers as the client's types have them (generated from the contract): the
// tests read them over raw HTTP too.
export type { Accepted, Delivery, Destination, EventInput };

/** An injected DNS lookup (node's `dns.lookup` signature), as the box takes it. */
export type Lookup = NonNullable<BoxOptions['lookup']>;

/** A lookup error as `dns.lookup` reports it. */
export function notFound(hostname: string): NodeJS.ErrnoException {
  return Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND', hostname });
}

// ---- the client ----

export interface ApiResponse<T> {
  status: number;
  body: T;
}

export interface Client {
  /** A JSON request; `token` becomes `Authorization: Bearer <token>` when given. */
  api<T = unknown>(method: string, path: string, body?: unknown, token?: string): Promise<ApiResponse<T>>;
  /** A request with a raw body and headers of the caller's choosing. */
  raw<T = unknown>(
    method: string,
    path: string,
    body: string | Buffer,
    headers: Record<string, string>,
  ): Promise<ApiResponse<T>>;
  close(): Promise<void>;
}

export function client(baseUrl: string): Client {
  const dispatcher = new Agent({ connections: 64, keepAliveTimeout: 1_000 });
  const send = async <T>(
    method: string,
    path: string,
    body: string | Buffer | undefined,
    headers: Record<string, string>,
  ): Promise<ApiResponse<T>> => {
    const res = await request(baseUrl + path, {
      method: method as 'GET',
      headers,
      ...(body === undefined ? {} : { body }),
      dispatcher,
      signal: AbortSignal.timeout(30_000),
    });
    const text = await res.body.text();
    let parsed: unknown = text;
    try {
      parsed = text === '' ? undefined : JSON.parse(text);
    } catch {
      // not JSON: keep the text
    }
    return { status: res.statusCode, body: parsed as T };
  };
  return {
    api: (method, path, body, token) => {
      const headers: Record<string, string> = {};
      if (token !== undefined) headers.authorization = `Bearer ${token}`;
      if (body !== undefined) headers['content-type'] = 'application/json';
      return send(method, path, body === undefined ? undefined : JSON.stringify(body), headers);
    },
    raw: (method, path, body, headers) => send(method, path, body, headers),
    close: async () => {
      if (!dispatcher.destroyed) await dispatcher.destroy();
    },
  };
}

// ---- Sluice in process, in the shape under test (helpers/shape.ts) ----

export interface TestBox extends Client {
  url: string;
  adminToken: string;
  isScheduled(destinationId: string): Promise<boolean>;
  /** SQL on the store (`?` placeholders). */
  query: ShapeBox['query'];
  close(): Promise<void>;
}

export { tempDir };

/** Sluice on fresh state; `close` stops it and removes the state. */
async function startBox(opts: BoxOptions = {}): Promise<TestBox> {
  const box = await startShape(opts);
  const c = client(box.url);
  return {
    ...c,
    url: box.url,
    adminToken: box.adminToken,
    isScheduled: (id) => box.isScheduled(id),
    query: box.query,
    close: async () => {
      await c.close();
      await box.close();
    },
  };
}

/**
 * A box and a receiver that belong to one test: both are closed, the data dir removed and
 * leaks checked when the test ends (a leaked server, socket or timer fails the test).
 * `opts` may be made from the receiver (settings that name one of its URLs).
 */
export async function harness(
  t: TestContext,
  opts: BoxOptions | ((rcv: Receiver) => BoxOptions) = {},
): Promise<{ box: TestBox; rcv: Receiver }> {
  const rcv = await startReceiver();
  const box = await startBox(typeof opts === 'function' ? opts(rcv) : opts).catch(async (err: unknown) => {
    await rcv.close();
    throw err;
  });
  t.after(async () => {
    await box.close();
    await rcv.close();
    await assertNoLeaks();
  });
  return { box, rcv };
}

export async function createTenant(c: Client, adminToken: string, name = 'acme'): Promise<Tenant> {
  const res = await c.api<Tenant>('POST', '/v1/tenants', { name }, adminToken);
  assert.equal(res.status, 201, `create tenant: ${JSON.stringify(res.body)}`);
  return res.body;
}

export async function createDestination(
  c: Client,
  key: string,
  body: Record<string, unknown>,
): Promise<Destination> {
  const res = await c.api<Destination>('POST', '/v1/destinations', body, key);
  assert.equal(res.status, 201, `create destination: ${JSON.stringify(res.body)}`);
  return res.body;
}

export async function postEvent(c: Client, key: string, event: EventInput): Promise<Accepted> {
  const res = await c.api<Accepted>('POST', '/v1/events', event, key);
  assert.equal(res.status, 202, `post event: ${JSON.stringify(res.body)}`);
  return res.body;
}

/** Posts events `concurrency` at a time; the answers come back in the events' order. */
export async function postEvents(
  c: Client,
  key: string,
  events: EventInput[],
  concurrency = 32,
): Promise<Accepted[]> {
  const out = new Array<Accepted>(events.length);
  let next = 0;
  const worker = async () => {
    while (next < events.length) {
      const i = next++;
      out[i] = await postEvent(c, key, events[i] as EventInput);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, events.length) }, worker));
  return out;
}

/** Posts events through `POST /v1/events/batch`, up to 1,000 a request, in order. */
export async function postBatches(c: Client, key: string, events: EventInput[]): Promise<Accepted[]> {
  const out: Accepted[] = [];
  for (let i = 0; i < events.length; i += 1_000) {
    const res = await c.api<{ data: Accepted[] }>(
      'POST',
      '/v1/events/batch',
      { events: events.slice(i, i + 1_000) },
      key,
    );
    assert.equal(res.status, 202, `post batch: ${JSON.stringify(res.body).slice(0, 500)}`);
    out.push(...res.body.data);
  }
  return out;
}

export async function getDelivery(c: Client, key: string, id: string): Promise<Delivery> {
  const res = await c.api<Delivery>('GET', `/v1/deliveries/${id}`, undefined, key);
  assert.equal(res.status, 200, `get delivery ${id}: ${JSON.stringify(res.body)}`);
  return res.body;
}

/** Polls `fn` until it returns a truthy value, and returns it; throws after `timeoutMs`. */
export async function waitUntil<T>(
  fn: () => T | Promise<T>,
  timeoutMs: number,
  what = 'the condition',
  intervalMs = 25,
): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await fn();
    if (value) return value as NonNullable<T>;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(intervalMs);
  }
}

// ---- the child-process single box ----

export interface ChildBox extends Client {
  url: string;
  port: number;
  adminToken: string;
  /** The last log lines (stdout and stderr), for failure messages. */
  logs: string[];
  /** SIGKILL, and wait for the process to be gone. */
  kill9(): Promise<void>;
  /** SIGTERM, and the exit code. */
  stop(): Promise<number | null>;
}

export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

export function randomToken(): string {
  return `adm_${randomBytes(24).toString('hex')}`;
}

function exited(child: ChildProcess): Promise<number | null> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(child.exitCode);
  return new Promise((resolve) => child.once('exit', (code) => resolve(code)));
}

/** A Sluice process: its last log lines, and how to end it. */
export interface ChildProcessHandle {
  /** The last log lines (stdout and stderr), for failure messages. */
  logs: string[];
  /** SIGKILL, and wait for the process to be gone. */
  kill9(): Promise<void>;
  /** SIGTERM, and the exit code. */
  stop(): Promise<number | null>;
}

/**
 * The services this test file started that have not exited. After the file's last test any
 * left (a test failed before its clean-up, and said so) are killed, so that the file ends
 * instead of waiting on them for ever.
 */
const running = new Set<ChildProcess>();
after(() => {
  for (const child of running) child.kill('SIGKILL');
});

/** `node <script>` from the repo root with `env`; resolves once it logs "listening". */
export async function spawnService(
  script: string,
  env: Record<string, string>,
  onLine?: (line: string) => void,
): Promise<ChildProcessHandle> {
  const child = spawn(process.execPath, [script], {
    cwd: REPO_ROOT,
    env: { ...process.env, HOST: '127.0.0.1', SLUICE_ALLOW_PRIVATE_NETWORKS: 'true', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  running.add(child);
  child.once('exit', () => running.delete(child));
  const logs: string[] = [];
  const keep = (line: string) => {
    logs.push(line);
    if (logs.length > 200) logs.shift();
  };
  createInterface({ input: child.stderr! }).on('line', keep);
  // Eight processes of a cluster start at once beside the other files on two cores: each
  // loads and strips its modules first, so a start may take tens of seconds there.
  const listening = new Promise<void>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`${script}: no "listening" log within 60 s:\n${logs.join('\n')}`)),
      60_000,
    );
    createInterface({ input: child.stdout! }).on('line', (line) => {
      keep(line);
      onLine?.(line);
      try {
        if ((JSON.parse(line) as { msg?: unknown }).msg === 'listening') {
          clearTimeout(timer);
          resolve();
        }
      } catch {
        // not a JSON log line
      }
    });
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`${script} exited (${code ?? signal}) before listening:\n${logs.join('\n')}`));
    });
  });
  try {
    await listening;
  } catch (err) {
    child.kill('SIGKILL');
    await exited(child);
    throw err;
  }
  return {
    logs,
    kill9: async () => {
      const gone = exited(child);
      child.kill('SIGKILL');
      await gone;
    },
    stop: async () => {
      const gone = exited(child);
      child.kill('SIGTERM');
      return gone;
    },
  };
}

/**
 * `node services/single/src/main.ts` on the state `env` names (`childState()`: a data dir,
 * or a database and a Redis prefix); resolves once it logs "listening".
 */
export async function spawnBox(opts: {
  env: Record<string, string>;
  port: number;
  adminToken: string;
}): Promise<ChildBox> {
  const child = await spawnService('services/single/src/main.ts', {
    ...opts.env,
    PORT: String(opts.port),
    SLUICE_ADMIN_TOKEN: opts.adminToken,
  });
  const url = `http://127.0.0.1:${opts.port}`;
  const c = client(url);
  return {
    ...c,
    url,
    port: opts.port,
    adminToken: opts.adminToken,
    logs: child.logs,
    kill9: async () => {
      await child.kill9();
      await c.close();
    },
    stop: async () => {
      const code = await child.stop();
      await c.close();
      return code;
    },
  };
}
