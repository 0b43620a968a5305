// A peer of the peers harness: Sluice's distributed shape, driven over its API as a user's
// program would. It follows the harness's peer contract (README "Peer contract"): env
// WORKLOAD, SINK_URL, RUN_ID; the harness's own load generator (`runIngest` of its
// lib/common.mjs); external state named after RUN_ID; on SIGTERM it cleans up and prints
// `PEER_STATS {json}`.
//
// What it starts, as the repository's bench starts `sluice-distributed`
// (bench/src/targets/sluice-distributed.ts): the API, one rate limiter and two delivery
// workers (`node services/<name>/src/main.ts` with the repository's Node 24, each on a free
// port, default settings, loopback destinations allowed, warn logs), on a fresh Postgres
// database `sluice_peers_<RUN_ID>` and the Redis prefix `bench-<RUN_ID>` (BullMQ's keys under
// `bench-<RUN_ID>-bull`). Then, through `@sluice/client`: one tenant, one destination per
// workload destination pointing at the sink (its limit per second; 5 attempts, exponential
// from 1 s, as the harness's other peers), and every batch the generator hands over is posted
// at once: `events.sendBatch` (POST /v1/events/batch; the generator's chunks are ≤ 1000) or,
// for a batch of one, `events.send`.
//
// Sluice sends the event's payload as the webhook body and only its own headers, so the
// sink cannot get `x-event-id` / `x-created-at`; the payload (the harness's `makePayload`)
// carries the same two as `id` and `created_at`, and sink-body.mjs reads them from there.
//
// Where the harness is: PEERS_DIR, else the directory this file was started from (run.mjs
// starts `<harness>/peer-sluice-distributed.mjs`, a symlink to this file: prepare.sh).
//
//   PEERS_DIR=<harness> <harness>/node_modules/.bin/node run.mjs sluice-distributed latency
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createWriteStream, mkdirSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Sluice } from '@sluice/client';
import { Redis } from 'ioredis';
import pg from 'pg';
import { Agent, request } from 'undici';

const REPO = resolve(import.meta.dirname, '..', '..');
const NODE = process.env.SLUICE_NODE || join(REPO, 'node_modules', 'node', 'bin', 'node');
const PEERS_DIR = process.env.PEERS_DIR || dirname(resolve(process.argv[1]));
const { REDIS, loadWorkload, peerConfig, peerLifecycle, runIngest, makePayload, deleteKeys, nowMs, sleep } =
  await import(pathToFileURL(join(PEERS_DIR, 'lib', 'common.mjs')).href);

const SERVICES = [
  { name: 'api', script: 'services/api/src/main.ts' },
  { name: 'rate-limiter', script: 'services/rate-limiter/src/main.ts' },
  { name: 'worker-1', script: 'services/delivery-worker/src/main.ts' },
  { name: 'worker-2', script: 'services/delivery-worker/src/main.ts' },
];
const POSTGRES_URL = process.env.PEER_POSTGRES_URL || 'postgres://postgres@127.0.0.1:5432/postgres';
const START_TIMEOUT_MS = 30_000;
/** Within the harness's 8 s per clean-up step: SIGKILL past this. */
const STOP_TIMEOUT_MS = 6_000;

const w = loadWorkload();
const { sink, runId } = peerConfig();
const database = `sluice_peers_${runId}`;
const prefix = `bench-${runId}`;
// The services' logs beside the run's other logs (run.mjs writes the workload into the run's directory).
const logDir = process.env.WORKLOAD
  ? dirname(resolve(process.env.WORKLOAD))
  : join(tmpdir(), `sluice-peer-${runId}`);
mkdirSync(logDir, { recursive: true });

const stats = {
  peer: 'sluice-distributed',
  config: { database, prefix, services: SERVICES.map((s) => s.name), logDir },
  batches: 0,
  accepted: 0,
  rejected: 0,
  errors: 0,
  last_error: null,
};
const life = peerLifecycle('sluice-distributed', stats);

const databaseUrl = (name) => {
  const url = new URL(POSTGRES_URL);
  url.pathname = `/${name}`;
  return url.href;
};
async function onServer(fn) {
  const client = new pg.Client({ connectionString: databaseUrl('postgres') });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

const freePort = () =>
  new Promise((ok, fail) => {
    const s = createServer();
    s.once('error', fail);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => ok(port));
    });
  });

/** Starts one service; resolves once its /healthz answers 200. */
async function startService(s, env) {
  const port = await freePort();
  const log = createWriteStream(join(logDir, `${s.name}.log`));
  const child = spawn(NODE, [join(REPO, s.script)], {
    cwd: REPO,
    env: {
      ...process.env,
      PORT: String(port),
      HOST: '127.0.0.1',
      SLUICE_ALLOW_PRIVATE_NETWORKS: 'true',
      SLUICE_LOG_LEVEL: 'warn',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout.pipe(log);
  child.stderr.pipe(log);
  const exited = new Promise((ok) => child.once('exit', (code) => ok(code)));
  const p = { name: s.name, child, url: `http://127.0.0.1:${port}`, exited };
  const deadline = Date.now() + START_TIMEOUT_MS;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`${s.name} exited (${child.exitCode}): see ${logDir}`);
    try {
      const res = await request(`${p.url}/healthz`);
      await res.body.dump();
      if (res.statusCode === 200) return p;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`${s.name} did not answer /healthz within ${START_TIMEOUT_MS / 1000} s`);
    }
    await sleep(50);
  }
}

/** SIGTERM (each service drains), SIGKILL past STOP_TIMEOUT_MS; answers the exit code. */
async function stopService(p) {
  if (p.child.exitCode !== null) return p.child.exitCode;
  p.child.kill('SIGTERM');
  const code = await Promise.race([p.exited, sleep(STOP_TIMEOUT_MS).then(() => 'timeout')]);
  if (code !== 'timeout') return code;
  p.child.kill('SIGKILL');
  return p.exited;
}

// Clean-ups run in reverse order of registration: the services first, then the keys and the database.
life.onCleanup(async () => {
  const leftover = await onServer(async (c) => {
    await c.query(`DROP DATABASE IF EXISTS ${pg.escapeIdentifier(database)} WITH (FORCE)`);
    return (await c.query('SELECT 1 FROM pg_database WHERE datname = $1', [database])).rowCount !== 0;
  });
  stats.database_dropped = !leftover;
});
life.onCleanup(async () => {
  const redis = new Redis({ ...REDIS });
  stats.redis_keys_deleted =
    (await deleteKeys(redis, `${prefix}:*`)) + (await deleteKeys(redis, `${prefix}-bull:*`));
  redis.disconnect();
});

const processes = [];
life.onCleanup(async () => {
  const codes = await Promise.all(processes.map(stopService));
  stats.exit_codes = Object.fromEntries(processes.map((p, i) => [p.name, codes[i]]));
});

// ---- start the distributed shape
await onServer((c) => c.query(`CREATE DATABASE ${pg.escapeIdentifier(database)}`));
const adminToken = randomBytes(24).toString('hex');
const env = {
  DATABASE_URL: databaseUrl(database),
  REDIS_URL: `redis://${REDIS.host}:${REDIS.port}/0`,
  SLUICE_REDIS_PREFIX: prefix,
  // Every process of one installation seals and opens the signing secrets with one key.
  SLUICE_ENCRYPTION_KEY: `k${randomBytes(4).toString('hex')}:${randomBytes(32).toString('base64')}`,
};
const t0Start = nowMs();
// All at once: each migrates under an advisory lock, so the first one in does it.
const started = await Promise.allSettled(
  SERVICES.map((s) => startService(s, s.name === 'api' ? { ...env, SLUICE_ADMIN_TOKEN: adminToken } : env)),
);
for (const r of started) if (r.status === 'fulfilled') processes.push(r.value);
const failed = started.find((r) => r.status === 'rejected');
if (failed) {
  console.error('[sluice-distributed] start failed:', failed.reason?.message ?? failed.reason);
  process.kill(process.pid, 'SIGTERM'); // clean up through the lifecycle, then exit
  await new Promise(() => {});
}
stats.start_ms = Math.round(nowMs() - t0Start);
stats.pids = Object.fromEntries(processes.map((p) => [p.name, p.child.pid]));

// ---- the API's client, over undici's request on one keep-alive pool (as the bench drives it)
const agent = new Agent({ connections: 64, keepAliveTimeout: 10_000 });
const fetchOverPool = async (url, init) => {
  const res = await request(url, {
    method: init.method,
    headers: init.headers,
    body: init.body,
    signal: init.signal,
    dispatcher: agent,
  });
  const get = (name) => {
    const v = res.headers[name.toLowerCase()];
    return v === undefined ? null : Array.isArray(v) ? v.join(', ') : v;
  };
  return { status: res.statusCode, headers: { get }, text: () => res.body.text() };
};
life.onCleanup(() => agent.close());
const api = processes[0].url;
const admin = new Sluice({ baseUrl: api, token: adminToken, fetch: fetchOverPool, timeout: 120_000 });
const tenant = await admin.tenants.create({ name: `peers-${runId}` });
const client = admin.withToken(tenant.apiKey);

const setupStart = nowMs();
const ids = new Map();
const queue = [...w.destinations];
await Promise.all(
  Array.from({ length: 16 }, async () => {
    for (let d = queue.shift(); d; d = queue.shift()) {
      const created = await client.destinations.create({
        name: d.id,
        url: `${sink}/d/${encodeURIComponent(d.id)}${d.query ? `?${d.query}` : ''}`,
        rateLimit: { limit: d.limit_per_sec, period: 'second' },
        retry: { maxAttempts: 5, initialDelayMs: 1000, maxDelayMs: 60_000 },
        timeoutMs: 10_000,
      });
      ids.set(d.id, created.id);
    }
  }),
);
stats.setup_ms = Math.round(nowMs() - setupStart);

// ---- ingest: the harness's generator, each batch posted as it comes
const eventOf = (ev) => ({
  type: 'video.updated',
  payload: JSON.parse(makePayload(ev, w.payload_bytes)),
  destinationId: ids.get(ev.dest),
});
const post = async (batch) => {
  stats.batches++;
  try {
    if (batch.length === 1) await client.events.send(eventOf(batch[0]));
    else await client.events.sendBatch(batch.map(eventOf));
    stats.accepted += batch.length;
  } catch (err) {
    if (err?.status) stats.rejected += batch.length;
    else stats.errors++;
    stats.last_error = String(err?.message ?? err).slice(0, 300);
  }
};
// The API takes ≤ 1000 events per batch; a steady step that fell far behind can hand over more.
const submit = async (batch) => {
  for (let i = 0; i < batch.length; i += 1000) await post(batch.slice(i, i + 1000));
};
stats.ready_at = nowMs();
stats.ingest = await runIngest(w, sink, submit, { shouldStop: life.isStopping });
