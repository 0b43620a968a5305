/**
 * Driving a Sluice API — the single box, or the distributed shape's API service — ONLY
 * through its typed client, `@sluice/client`, as a user's program would: a tenant (admin
 * token; one per tenant the workload names, busy-tenant has two), one destination per
 * workload destination, then events — `events.sendBatch`
 * (≤ 1000 per call, all or nothing) for bursts and batched streams, `events.send` per event
 * for steady ingest — `destinations.update` for limit changes, and at the end
 * `destinations.stats` for Sluice's own compliance audit, reported beside the receiver's.
 *
 * The client sends through the `fetch` it is given (its `FetchLike`: `status`,
 * `headers.get()`, `text()`). Here that is undici's `request` over one pool of keep-alive
 * connections: the bench posts tens of thousands of events, a connection per request would
 * measure the handshakes, and undici's `fetch` costs the driver several times the CPU of
 * `request` per call (its WHATWG streams) — enough to make the driver lag its own plan in
 * the latency scenario on a small machine (docs/performance.md, How to measure).
 */

import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  type CreateDestinationInput,
  type FetchLike,
  type NewEvent,
  Sluice,
  SluiceError,
} from '@sluice/client';
import { Agent, type Dispatcher, request } from 'undici';
import { errorMessage } from '../common.ts';
import { destinationUrl, type PlannedEvent, payloadOf } from '../workload.ts';
import type { Target, TargetSetup } from './target.ts';

const EVENT_TYPE = 'bench.event';
/** Destinations created at once (the cost curve creates up to 100,000). */
const SETUP_CONCURRENCY = 64;
/** A batch of 1000 events into a loaded box may take long; the bench waits for it. */
const TIMEOUT_MS = 120_000;
/** The audit at stop reads one destination's stats per request, this many at once… */
const AUDIT_CONCURRENCY = 16;
/** …for at most this long (the cost curve has up to 100,000 destinations); the rest are skipped. */
const AUDIT_BUDGET_MS = 20_000;

/** A `fetch` for the client over undici's `request` on the connections of `agent()`. */
function pooledFetch(agent: () => Dispatcher): FetchLike {
  return async (url, init) => {
    const res = await request(url, {
      method: init.method as Dispatcher.HttpMethod,
      headers: init.headers,
      body: init.body,
      signal: init.signal,
      dispatcher: agent(),
    });
    const get = (name: string): string | null => {
      const value = res.headers[name.toLowerCase()];
      return value === undefined ? null : Array.isArray(value) ? value.join(', ') : value;
    };
    return { status: res.statusCode, headers: { get }, text: () => res.body.text() };
  };
}

/** Runs `fn` over `items` with at most `n` at once; stops taking items once `until()` is false. */
async function pool<T>(
  items: readonly T[],
  n: number,
  fn: (item: T) => Promise<void>,
  until: () => boolean = () => true,
): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length && until()) await fn(items[next++] as T);
  };
  await Promise.all(Array.from({ length: Math.min(n, items.length) }, worker));
}

/** Sluice's own view of the limit at the end of a run (`GET /v1/destinations/:id/stats`). */
interface ApiAudit {
  /** Destinations whose stats were read (all, unless the budget ran out). */
  audited: number;
  /** The most of `maxSentInAnyWindow ÷ rateLimit.limit` (the limit in force at the end). */
  maxSentRatio: number | null;
  /** Destinations whose `maxSentInAnyWindow` is over their limit. */
  over: number;
  /** Deliveries Sluice counts as delivered and dead over the run, summed. */
  delivered: number;
  dead: number;
}

export interface SluiceDriving extends Pick<Target, 'setup' | 'submit' | 'setLimit'> {
  /** Events the API refused or that could not be posted, for the target's stop statistics. */
  ingestStats(): { ingestRejected: number; ingestErrors: number; lastError: string | null };
  /** Reads every destination's stats (within a budget): Sluice's own compliance audit. */
  audit(): Promise<ApiAudit>;
  /** Closes the client's connections and opens new ones (the API was restarted on its address). */
  reconnect(): Promise<void>;
  /**
   * Reads every destination's overview, 500 a page: a restarted single box holds each in its
   * destination cache again, as the box that created it did (a first use would read it).
   */
  warm(): Promise<void>;
  /** Closes the client's connections. */
  close(): Promise<void>;
}

/** Drives the Sluice API at `baseUrl` for one workload, with the operator's `adminToken`. */
export function driveSluice(baseUrl: string, s: TargetSetup, adminToken: string): SluiceDriving {
  const { workload, receiverUrl, runId } = s;
  const newAgent = () => new Agent({ connections: 64, keepAliveTimeout: 10_000 });
  let agent = newAgent();
  const admin = new Sluice({
    baseUrl,
    token: adminToken,
    fetch: pooledFetch(() => agent),
    timeout: TIMEOUT_MS,
  });
  const tenants = new Map<string, Sluice>();
  const ids: string[] = new Array(workload.destinations.length);
  let setupAt = 0;
  let rejected = 0;
  let errors = 0;
  let lastError: string | null = null;
  const steadySingle = workload.ingest.mode === 'steady' && !workload.ingest.batched;

  /** The client of the tenant that owns the workload's destination `i`. */
  const clientOf = (i: number): Sluice => {
    const client = tenants.get(workload.destinations[i]?.tenant ?? '');
    if (client === undefined) throw new Error('setup() first');
    return client;
  };
  const eventOf = (e: PlannedEvent, createdAt: number): NewEvent =>
    BY_TYPE
      ? { type: `bench.d${e.dest}`, payload: payloadOf(e.id, createdAt, workload.payloadBytes) }
      : {
          type: EVENT_TYPE,
          payload: payloadOf(e.id, createdAt, workload.payloadBytes),
          destinationId: ids[e.dest] as string,
        };
  /** An answer that is not a 202: refused by the API (an answer) or not posted (none). */
  const failed = (err: unknown, count: number): void => {
    if (err instanceof SluiceError && err.status !== 0) {
      rejected += count;
      lastError = `${err.status} ${err.code}: ${err.message.slice(0, 200)}`;
    } else {
      errors++;
      lastError = errorMessage(err);
    }
  };

  return {
    async setup() {
      const started = performance.now();
      setupAt = Date.now();
      // One tenant per name the workload gives (isolation: a busy one beside a quiet one).
      for (const name of new Set(workload.destinations.map((d) => d.tenant ?? ''))) {
        const created = await admin.tenants.create({ name: `bench-${runId}${name ? `-${name}` : ''}` });
        tenants.set(name, admin.withToken(created.apiKey));
      }
      const indexes = workload.destinations.map((_, i) => i);
      await pool(indexes, SETUP_CONCURRENCY, async (i) => {
        const d = workload.destinations[i] as (typeof workload.destinations)[number];
        const destination = await clientOf(i).destinations.create({
          name: d.id,
          url: destinationUrl(receiverUrl, d),
          rateLimit: { limit: d.limit, period: 'second', ...(d.burst ? { burst: d.burst } : {}) },
          // Only when asked: a version of Sluice before adaptive pacing (--sluice-ref) refuses the field.
          ...(d.adaptive ? { adaptive: true } : {}),
          retry: {
            maxAttempts: workload.retry.attempts,
            initialDelayMs: workload.retry.initialDelayMs,
            maxDelayMs: workload.retry.maxDelayMs,
          },
          timeoutMs: d.timeoutMs ?? 10_000,
          ...(await destinationAuth()),
          ...routing(i),
          ...TRANSFORM,
        });
        ids[i] = destination.id;
      });
      return { setupS: (performance.now() - started) / 1_000 };
    },

    async submit(events, createdAt) {
      if (steadySingle) {
        const answers = await Promise.allSettled(
          events.map((e) => clientOf(e.dest).events.send(eventOf(e, createdAt))),
        );
        let accepted = 0;
        for (const a of answers) {
          if (a.status === 'fulfilled') accepted++;
          else failed(a.reason, 1);
        }
        return accepted;
      }
      // Each tenant's events in batches of ≤ 1000, one after the other; the tenants side by side.
      const byTenant = new Map<Sluice, PlannedEvent[]>();
      for (const e of events) {
        const client = clientOf(e.dest);
        const list = byTenant.get(client);
        if (list) list.push(e);
        else byTenant.set(client, [e]);
      }
      let accepted = 0;
      await Promise.all(
        [...byTenant].map(async ([client, list]) => {
          for (let i = 0; i < list.length; i += 1_000) {
            const chunk = list.slice(i, i + 1_000);
            try {
              await client.events.sendBatch(chunk.map((e) => eventOf(e, createdAt)));
              accepted += chunk.length;
            } catch (err) {
              failed(err, chunk.length);
            }
          }
        }),
      );
      return accepted;
    },

    async setLimit(dest, limit) {
      const i = workload.destinations.findIndex((d) => d.id === dest);
      await clientOf(i).destinations.update(ids[i] as string, { rateLimit: { limit, period: 'second' } });
    },

    ingestStats: () => ({ ingestRejected: rejected, ingestErrors: errors, lastError }),

    async audit() {
      const seconds = Math.min(86_400, Math.ceil((Date.now() - setupAt) / 1_000) + 1);
      const out: ApiAudit = { audited: 0, maxSentRatio: null, over: 0, delivered: 0, dead: 0 };
      const deadline = performance.now() + AUDIT_BUDGET_MS;
      await pool(
        ids.flatMap((id, i) => (id === undefined ? [] : [i])),
        AUDIT_CONCURRENCY,
        async (i) => {
          const stats = await clientOf(i).destinations.stats(ids[i] as string, { seconds });
          // A window of one period may hold the burst, where one is set.
          const cap = stats.rateLimit.burst ?? stats.rateLimit.limit;
          const ratio = stats.maxSentInAnyWindow / cap;
          out.audited++;
          out.maxSentRatio = Math.max(out.maxSentRatio ?? 0, Math.round(ratio * 1_000) / 1_000);
          if (stats.maxSentInAnyWindow > cap || (stats.bucketRefusals ?? 0) > 0) out.over++;
          out.delivered += stats.delivered;
          out.dead += stats.dead;
        },
        () => performance.now() < deadline,
      );
      return out;
    },

    async warm() {
      for (const client of tenants.values()) {
        let cursor: string | undefined;
        do {
          const page = await client.destinations.overview({ limit: 500, ...(cursor ? { cursor } : {}) });
          cursor = page.nextCursor ?? undefined;
        } while (cursor);
      }
    },

    async reconnect() {
      const old = agent;
      agent = newAgent();
      await old.destroy();
    },

    close: () => agent.close(),
  };
}

/**
 * `$BENCH_DESTINATION_AUTH`: every destination carries a credential, an experiment's knob as
 * `$BENCH_NODE_ARGS` is (a version of Sluice before `auth` refuses it):
 *
 * - `bearer`: a bearer token and a header of its own (the cost of a credential on each
 *   attempt, against the same run without);
 * - `oauth2`: OAuth2 client credentials against a token endpoint this process serves on
 *   loopback (tokens of `$BENCH_OAUTH_TTL` s, default 3600), which prints each request it
 *   gets: the token requests of a run, against its deliveries.
 */
async function destinationAuth(): Promise<Pick<CreateDestinationInput, 'auth' | 'headers'>> {
  const kind = process.env.BENCH_DESTINATION_AUTH;
  if (kind === 'bearer')
    return { auth: { type: 'bearer', token: 'bench-token-0123456789' }, headers: { 'X-Bench': 'on' } };
  if (kind !== 'oauth2') return {};
  return {
    auth: {
      type: 'oauth2_client_credentials',
      tokenUrl: await benchTokenEndpoint(),
      clientId: 'bench',
      clientSecret: 'bench-secret',
    },
  };
}

/**
 * `$BENCH_FANOUT=type`: each destination takes one event type of its own (`bench.d<i>`) and the
 * events are posted by type, without `destinationId`, so each goes through the fan-out — the
 * baseline of `$BENCH_DESTINATION_FILTER=5`, which gives every destination a filter of five
 * conditions its events all match (the cost of evaluating it, against the same fan-out
 * without). Experiments' knobs, as `$BENCH_NODE_ARGS` is.
 */
const BY_TYPE = process.env.BENCH_FANOUT === 'type' || process.env.BENCH_DESTINATION_FILTER === '5';

function routing(i: number): Pick<CreateDestinationInput, 'eventTypes' | 'filter'> {
  if (!BY_TYPE) return {};
  const type = `bench.d${i}`;
  if (process.env.BENCH_DESTINATION_FILTER !== '5') return { eventTypes: [type] };
  return {
    eventTypes: [type],
    filter: {
      type: { $in: [type, 'bench.event'] },
      'payload.bench.id': { $exists: true },
      'payload.bench.createdAt': { $gt: 0 },
      'payload.pad': { $exists: true },
      $or: [{ 'payload.bench.createdAt': { $lt: 1e15 } }, { 'payload.never': { $exists: true } }],
    },
  };
}

/**
 * `$BENCH_DESTINATION_TRANSFORM=trivial`: every destination with a transform that builds a
 * new payload of the fields the receiver reads (`bench`, `pad`) and the event's type, run at
 * each attempt in the sandbox: its cost per delivery against the same run without. An
 * experiment's knob, as `$BENCH_FANOUT` is.
 */
const TRANSFORM: Pick<CreateDestinationInput, 'transform'> =
  process.env.BENCH_DESTINATION_TRANSFORM === 'trivial'
    ? {
        transform: {
          code: 'function handler(w) { return { payload: { bench: w.payload.bench, pad: w.payload.pad, type: w.type } } }',
        },
      }
    : {};

let tokenEndpoint: Promise<string> | undefined;

/** The bench's own token endpoint (RFC 6749 §4.4), started once; its URL. */
function benchTokenEndpoint(): Promise<string> {
  tokenEndpoint ??= new Promise((resolve) => {
    let n = 0;
    const ttl = Number(process.env.BENCH_OAUTH_TTL ?? 3_600);
    const server = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        n++;
        console.error(`[bench] OAuth2 token requests: ${n}`);
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ access_token: `bench-at-${n}`, token_type: 'Bearer', expires_in: ttl }));
      });
    });
    server.listen(0, '127.0.0.1', () => {
      server.unref();
      resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}/oauth/token`);
    });
  });
  return tokenEndpoint;
}
