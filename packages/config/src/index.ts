/**
 * Settings from the environment, shared by every service: the pieces each service's one
 * zod schema is built from, and the parse that stops a bad start with a message naming
 * each variable and what it expected (CONTRIBUTING.md "House style").
 */

import { KEYRING_FORMAT, parseKeyring } from '@sluice/core';
import { z } from 'zod';

export class ConfigError extends Error {}

/** `true`/`false` (or `1`/`0`). */
export const bool = z.enum(['true', 'false', '1', '0']).transform((v) => v === 'true' || v === '1');

/** An integer in [min, max]. */
export const int = (min: number, max: number) => z.coerce.number().int().min(min).max(max);

const url = (protocols: string[], example: string) =>
  z.string().refine(
    (value) => {
      try {
        return protocols.includes(new URL(value).protocol);
      } catch {
        return false;
      }
    },
    `a ${protocols.join(' or ')} URL such as ${example}`,
  );

const postgresUrl = url(['postgres:', 'postgresql:'], 'postgres://user@host:5432/sluice');
const redisUrl = url(['redis:', 'rediss:'], 'redis://host:6379/0');

/** What every service reads. */
export const common = {
  HOST: z.string().min(1).default('127.0.0.1'),
  SLUICE_LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  SLUICE_SHUTDOWN_TIMEOUT_MS: int(0, 600_000).default(25_000),
  /**
   * Most destinations one process keeps in its cache; the least recently used leave it and
   * are read from the store again on their next use.
   */
  SLUICE_DESTINATION_CACHE_SIZE: int(1, 10_000_000).default(100_000),
  /**
   * When set, `/metrics` answers only a scrape with `authorization: Bearer <it>` (401 else):
   * the API's port is reachable by tenants, and the metrics tell of every tenant's traffic.
   */
  SLUICE_METRICS_TOKEN: z.string().min(16, 'at least 16 characters').optional(),
};

/** How a destination's window is judged; every process that paces deliveries reads it. */
const pacing = {
  SLUICE_WINDOW_MARGIN_MS: int(0, 10_000).default(5),
  SLUICE_ARRIVAL_BOUND_MS: int(0, 60_000).default(250),
};

/** What every process that opens the Postgres store reads. */
const pool = {
  SLUICE_PG_POOL_SIZE: int(1, 1_000).default(10),
  /** Connections each process opens at start, before it is ready, and keeps through a lull. */
  SLUICE_PG_POOL_MIN: int(0, 1_000).default(3),
};

/** Every Redis key of one installation starts with it (several may share a Redis). */
const redisPrefix = z
  .string()
  .regex(/^[A-Za-z0-9_-]{1,64}$/, 'letters, digits, _ and -, at most 64')
  .default('sluice');

/**
 * How Sluice's Redis is laid out (docs/scaling.md): `SLUICE_REDIS_CLUSTER` makes `REDIS_URL` a
 * seed node of a Redis Cluster; `SLUICE_SCHEDULE_SHARDS` splits the schedule, the pace state
 * and the delivery queue by destination into that many hash-tagged shards, which a cluster
 * spreads over its masters. Every process of one installation must have the same values.
 */
const redisLayout = {
  SLUICE_REDIS_CLUSTER: bool.default(false),
  SLUICE_SCHEDULE_SHARDS: int(1, 1_024).default(1),
};

/**
 * `SLUICE_ENCRYPTION_KEY`: the keys that seal the signing secrets at rest, as a keyring
 * (@sluice/core's secret box; docs/operations.md "The encryption key").
 */
const encryptionKey = z.string().transform((text, ctx) => {
  try {
    return parseKeyring(text);
  } catch (err) {
    ctx.addIssue({ code: 'custom', message: `${(err as Error).message}; expected ${KEYRING_FORMAT}` });
    return z.NEVER;
  }
});

/** What every service of the distributed shape reads. */
export const distributed = {
  DATABASE_URL: postgresUrl,
  SLUICE_ENCRYPTION_KEY: encryptionKey,
  REDIS_URL: redisUrl,
  SLUICE_REDIS_PREFIX: redisPrefix,
  ...redisLayout,
  ...pool,
  ...pacing,
};

/**
 * The single box's view of the distributed settings: both URLs optional, paired by
 * `checkShape` (neither: the single box on SQLite; both: the distributed shape).
 */
export const eitherShape = {
  ...distributed,
  DATABASE_URL: postgresUrl.optional(),
  REDIS_URL: redisUrl.optional(),
  /** Unset: `npm start` keeps one in its data directory, generated on the first start. */
  SLUICE_ENCRYPTION_KEY: encryptionKey.optional(),
};

/**
 * `DATABASE_URL` and `REDIS_URL` go together (a zod `superRefine` over a schema with
 * `eitherShape`): one alone is an error naming the other.
 */
export function checkShape(
  c: { DATABASE_URL?: string | undefined; REDIS_URL?: string | undefined },
  ctx: z.RefinementCtx,
): void {
  if ((c.DATABASE_URL === undefined) === (c.REDIS_URL === undefined)) return;
  ctx.addIssue({
    code: 'custom',
    path: [c.DATABASE_URL === undefined ? 'DATABASE_URL' : 'REDIS_URL'],
    message: 'required when the other of DATABASE_URL/REDIS_URL is set (neither: the single box on SQLite)',
  });
}

/** Whether a config of `eitherShape` names both URLs: the distributed shape. */
export function isDistributed<
  C extends { DATABASE_URL?: string | undefined; REDIS_URL?: string | undefined },
>(c: C): c is C & { DATABASE_URL: string; REDIS_URL: string } {
  return c.DATABASE_URL !== undefined && c.REDIS_URL !== undefined;
}

/**
 * Outbound requests: to private, loopback and link-local addresses (off: SSRF protection), and
 * how tenants share a pool of request slots.
 */
export const network = {
  SLUICE_ALLOW_PRIVATE_NETWORKS: bool.default(false),
  /**
   * Every delivery through this HTTP proxy (a CONNECT tunnel), so receivers can allow a fixed
   * set of source addresses; a destination's host is still resolved and checked first.
   */
  SLUICE_EGRESS_PROXY: url(['http:', 'https:'], 'http://proxy.internal:3128').optional(),
  /**
   * A request in flight this long or longer is not quick (docs/operations.md "Tenants' shares
   * of the delivery slots"): a tenant holds at most its share of a pool's request slots
   * (the pool ÷ (tenants with work + 1)) and takes more only while none of its requests in
   * flight there has gone this long.
   */
  SLUICE_TENANT_QUICK_MS: int(1, 3_600_000).default(1_000),
};

/**
 * What the HTTP API reads (both shapes): the size limits of what it accepts, and the tenant
 * quotas that apply where the operator set none for a tenant (unset: no quota).
 */
export const ingest = {
  SLUICE_MAX_PAYLOAD_BYTES: int(1, 64 * 1024 * 1024).default(256 * 1024),
  /**
   * Most levels a payload nests. At most 1,000: `JSON.stringify` overflows the stack past
   * ~4,400 levels, and the limit keeps well clear of it whatever the stack already holds.
   */
  SLUICE_MAX_PAYLOAD_DEPTH: int(1, 1_000).default(100),
  SLUICE_MAX_REQUEST_BYTES: int(1, 256 * 1024 * 1024).default(8 * 1024 * 1024),
  SLUICE_TENANT_EVENTS_PER_SECOND: int(1, 1_000_000_000).optional(),
  SLUICE_TENANT_PENDING_EVENTS: int(1, 1_000_000_000).optional(),
  /** Previews (`POST /v1/destinations/:id/preview`) a tenant may ask for a second, in all replicas. */
  SLUICE_TENANT_PREVIEWS_PER_SECOND: int(1, 1_000).default(5),
  /** Events of a type not in the event-type catalog refused (`400 unknown_event_type`). */
  SLUICE_EVENT_TYPES_STRICT: bool.default(false),
  /**
   * Where users reach the API (the portal links' `url` starts with it); unset: the address
   * each request came to, as the request saw it.
   */
  SLUICE_PUBLIC_URL: url(['http:', 'https:'], 'https://hooks.example.com')
    .refine((v) => {
      const u = URL.parse(v);
      return u === null || (u.search === '' && u.hash === '' && u.username === '' && u.password === '');
    }, 'an address without a query, a fragment or credentials (links append /portal/#token=…)')
    .transform((v) => v.replace(/\/+$/, ''))
    .optional(),
  /** Who may frame the portal (`/portal/`): CSP `frame-ancestors` sources. */
  SLUICE_PORTAL_FRAME_ANCESTORS: z
    .string()
    .trim()
    .min(1)
    .refine(
      (v) => v.split(/\s+/).every((source) => CSP_SOURCE.test(source)),
      "space-separated CSP sources such as 'self' https://app.example.com (no ; nor ,)",
    )
    // One header line: the sources joined by single spaces, whatever separated them.
    .transform((v) => v.split(/\s+/).join(' '))
    .default("'self'"),
};

/** One source of a CSP `frame-ancestors` list: a keyword, a scheme, or a host with an optional scheme, port and path. */
const CSP_SOURCE =
  /^(?:'self'|'none'|[a-z][a-z0-9+.-]*:|(?:[a-z][a-z0-9+.-]*:\/\/)?(?:\*\.)?[a-z0-9.-]+(?::(?:\d{1,5}|\*))?(?:\/[A-Za-z0-9\-._~%!$&()*+=:@/]*)?|\*)$/i;

/**
 * Destinations' transforms (docs/adr/0017), read by every process that runs them: the
 * delivery (the single box, the delivery workers) and the API (the check on write, the
 * preview).
 */
export const transforms = {
  /** A call's CPU time, past which the sandbox interrupts it (its hard stop: 4× + 100 ms of wall time). */
  SLUICE_TRANSFORM_TIMEOUT_MS: int(1, 10_000).default(50),
  /** The sandbox heap of one destination's transform. */
  SLUICE_TRANSFORM_MEMORY_BYTES: int(1024 * 1024, 1024 * 1024 * 1024).default(16 * 1024 * 1024),
  /** Threads that run transforms in one process (each with its own sandbox). */
  SLUICE_TRANSFORM_THREADS: int(1, 64).default(1),
  /** The most a transform's payload may be: the same limit as a posted one. */
  SLUICE_MAX_PAYLOAD_BYTES: ingest.SLUICE_MAX_PAYLOAD_BYTES,
};

/** `transforms` as the engine's `TransformsOptions`. */
export function transformOptions(c: {
  SLUICE_TRANSFORM_TIMEOUT_MS: number;
  SLUICE_TRANSFORM_MEMORY_BYTES: number;
  SLUICE_TRANSFORM_THREADS: number;
  SLUICE_MAX_PAYLOAD_BYTES: number;
}) {
  return {
    timeoutMs: c.SLUICE_TRANSFORM_TIMEOUT_MS,
    memoryBytes: c.SLUICE_TRANSFORM_MEMORY_BYTES,
    threads: c.SLUICE_TRANSFORM_THREADS,
    maxPayloadBytes: c.SLUICE_MAX_PAYLOAD_BYTES,
  };
}

/** The operator-wide tenant quotas as @sluice/core's `TenantQuota` (null: none). */
export function quotaDefaults(c: {
  SLUICE_TENANT_EVENTS_PER_SECOND?: number | undefined;
  SLUICE_TENANT_PENDING_EVENTS?: number | undefined;
}): { eventsPerSecond: number | null; pendingEvents: number | null } {
  return {
    eventsPerSecond: c.SLUICE_TENANT_EVENTS_PER_SECOND ?? null,
    pendingEvents: c.SLUICE_TENANT_PENDING_EVENTS ?? null,
  };
}

/** The settings of `ingest` and `network` as @sluice/api's `ApiConfig` (the portal's too). */
export function apiConfig(c: {
  SLUICE_ALLOW_PRIVATE_NETWORKS: boolean;
  SLUICE_MAX_PAYLOAD_BYTES: number;
  SLUICE_MAX_PAYLOAD_DEPTH: number;
  SLUICE_MAX_REQUEST_BYTES: number;
  SLUICE_EVENT_TYPES_STRICT: boolean;
  SLUICE_PUBLIC_URL?: string | undefined;
  SLUICE_PORTAL_FRAME_ANCESTORS?: string | undefined;
  SLUICE_METRICS_TOKEN?: string | undefined;
}) {
  return {
    metricsToken: c.SLUICE_METRICS_TOKEN,
    publicUrl: c.SLUICE_PUBLIC_URL,
    portalFrameAncestors: c.SLUICE_PORTAL_FRAME_ANCESTORS,
    allowPrivateNetworks: c.SLUICE_ALLOW_PRIVATE_NETWORKS,
    maxPayloadBytes: c.SLUICE_MAX_PAYLOAD_BYTES,
    maxPayloadDepth: c.SLUICE_MAX_PAYLOAD_DEPTH,
    maxRequestBytes: c.SLUICE_MAX_REQUEST_BYTES,
    eventTypesStrict: c.SLUICE_EVENT_TYPES_STRICT,
  };
}

/** What the processes that sweep and delete old deliveries read (the rate limiter, the single box). */
export const sweeping = {
  SLUICE_SWEEP_INTERVAL_MS: int(100, 3_600_000).default(5_000),
  /**
   * The backstop: a claimed delivery that nothing holds (in no job of the delivery queue; in
   * the single box, not in the process) returns to pending after this, whatever else runs.
   */
  SLUICE_LEASE_MS: int(1_000, 86_400_000).default(120_000),
  /**
   * Distributed shape: a claimed delivery in no job of the delivery queue, of a destination
   * whose tick is not running (its tick died before publishing it), returns to pending after
   * this: no request of it started.
   */
  SLUICE_UNSTARTED_LEASE_MS: int(1_000, 86_400_000).default(5_000),
  /** Delivered and cancelled deliveries older than this many days are deleted. */
  SLUICE_RETENTION_DAYS: int(1, 3650).default(14),
};

/** What every process that runs ticks reads (the rate limiter, the API, the single box). */
export const ticking = {
  /**
   * How long before its window has room a tick held back by the window runs (docs/adr/0012);
   * 0: never ahead. What the window will have room for within the lead is published then,
   * each request to start when its slot frees (core `publishAhead`): the tick, the claim, the
   * publish and a worker's pick-up take place inside the lead instead of after the slot frees,
   * where they would lengthen every window cycle of a backlogged destination (ADR 0012 says
   * by how much).
   */
  SLUICE_TICK_LEAD_MS: int(0, 1_000).default(100),
  /**
   * Most requests of one destination in flight at once, whatever its rate, once it is seen to
   * answer slowly (the fair bound's ceiling, docs/adr/0014): k slow receivers hold at most
   * k × this many of the delivery slots. A destination's maxConcurrency is a tighter cap.
   */
  SLUICE_DESTINATION_MAX_IN_FLIGHT: int(1, 100_000).default(16),
  /** Distributed shape: most deliveries in one delivery-queue job (the ticks of one turn share jobs). */
  SLUICE_JOB_DELIVERIES: int(1, 1_000).default(10),
  /**
   * Distributed shape: the lease a running tick holds (renewed every third of it). A process
   * that dies mid-tick leaves it; another takes the tick over once it expires, and the sweeper
   * returns what that tick claimed and never published (docs/operations.md, "What a killed
   * process leaves").
   */
  SLUICE_TICK_LEASE_MS: int(1_000, 600_000).default(5_000),
};

/**
 * What BullMQ's delivery workers read (the delivery worker, the single box on the distributed
 * shape): a job whose worker has not renewed its lock for `SLUICE_JOB_LOCK_MS` (renewed every
 * half of it) is found by a stalled check (every `SLUICE_STALLED_INTERVAL_MS`) and handed to
 * another worker, so a dead worker's jobs come back within their sum (docs/operations.md,
 * "What a killed process leaves"). A worker whose event loop stalls longer than the lock loses its jobs too.
 */
export const jobs = {
  SLUICE_JOB_LOCK_MS: int(1_000, 600_000).default(4_000),
  SLUICE_STALLED_INTERVAL_MS: int(100, 600_000).default(1_000),
};

/** What the distributed API reads beyond the HTTP settings. */
export const api = {
  /**
   * The API runs the tick an accepted event wakes when it is due now and none is running,
   * instead of kicking a rate limiter (docs/adr/0013); false: it only wakes.
   */
  SLUICE_API_TICKS: bool.default(true),
};

/** The pool's kept connections fit in it (a zod `superRefine` over a schema with both). */
export function checkPool(
  c: { SLUICE_PG_POOL_SIZE: number; SLUICE_PG_POOL_MIN: number },
  ctx: z.RefinementCtx,
): void {
  if (c.SLUICE_PG_POOL_MIN > c.SLUICE_PG_POOL_SIZE)
    ctx.addIssue({
      code: 'custom',
      path: ['SLUICE_PG_POOL_MIN'],
      message: 'must be at most SLUICE_PG_POOL_SIZE',
    });
}

/**
 * The circuit breaker of endpoint health (docs/adr/0007): read by the processes that write
 * completions (the single box, the delivery worker). Check them with `checkBreaker`.
 */
export const breaker = {
  SLUICE_BREAKER_DEGRADE_AFTER: int(1, 1_000_000).default(3),
  SLUICE_BREAKER_SUSPEND_AFTER: int(2, 1_000_000).default(10),
  SLUICE_BREAKER_WINDOW_MS: int(100, 86_400_000).default(60_000),
  SLUICE_BREAKER_WINDOW_MIN_ATTEMPTS: int(1, 1_000_000).default(20),
  SLUICE_BREAKER_WINDOW_FAILURE_PERCENT: int(1, 100).default(50),
  SLUICE_BREAKER_WINDOW_SUSPEND_PERCENT: int(1, 100).default(70),
  SLUICE_BREAKER_PROBE_INITIAL_MS: int(10, 86_400_000).default(5_000),
  SLUICE_BREAKER_PROBE_MAX_MS: int(10, 86_400_000).default(600_000),
};

type BreakerConfig = { [K in keyof typeof breaker]: number };

/** The settings that only make sense together (a zod `superRefine` over a schema with `breaker`). */
export function checkBreaker(c: BreakerConfig, ctx: z.RefinementCtx): void {
  if (c.SLUICE_BREAKER_SUSPEND_AFTER <= c.SLUICE_BREAKER_DEGRADE_AFTER)
    ctx.addIssue({
      code: 'custom',
      path: ['SLUICE_BREAKER_SUSPEND_AFTER'],
      message: 'must be greater than SLUICE_BREAKER_DEGRADE_AFTER',
    });
  if (c.SLUICE_BREAKER_WINDOW_SUSPEND_PERCENT < c.SLUICE_BREAKER_WINDOW_FAILURE_PERCENT)
    ctx.addIssue({
      code: 'custom',
      path: ['SLUICE_BREAKER_WINDOW_SUSPEND_PERCENT'],
      message: 'must be at least SLUICE_BREAKER_WINDOW_FAILURE_PERCENT',
    });
  if (c.SLUICE_BREAKER_PROBE_MAX_MS < c.SLUICE_BREAKER_PROBE_INITIAL_MS)
    ctx.addIssue({
      code: 'custom',
      path: ['SLUICE_BREAKER_PROBE_MAX_MS'],
      message: 'must be at least SLUICE_BREAKER_PROBE_INITIAL_MS',
    });
}

/** The breaker settings as @sluice/core's `HealthPolicy`. */
export function healthPolicy(c: BreakerConfig) {
  return {
    degradeAfter: c.SLUICE_BREAKER_DEGRADE_AFTER,
    suspendAfter: c.SLUICE_BREAKER_SUSPEND_AFTER,
    windowMs: c.SLUICE_BREAKER_WINDOW_MS,
    windowMinAttempts: c.SLUICE_BREAKER_WINDOW_MIN_ATTEMPTS,
    windowFailurePercent: c.SLUICE_BREAKER_WINDOW_FAILURE_PERCENT,
    windowSuspendPercent: c.SLUICE_BREAKER_WINDOW_SUSPEND_PERCENT,
    probeInitialMs: c.SLUICE_BREAKER_PROBE_INITIAL_MS,
    probeMaxMs: c.SLUICE_BREAKER_PROBE_MAX_MS,
  };
}

/** Parses `env` with `schema`; every bad variable is named in one ConfigError. */
export function parseEnv<S extends z.ZodType>(schema: S, env: NodeJS.ProcessEnv): z.output<S> {
  return parse(schema, env);
}

/**
 * A config built from `overrides` as if they were the environment, with the schema's
 * defaults for the rest: how tests (and anything that starts a service in process) make one.
 * Numbers may stay numbers; a bad value throws the same ConfigError.
 */
export function parseConfig<S extends z.ZodType>(schema: S, overrides: z.input<S>): z.output<S> {
  return parse(schema, overrides as Record<string, unknown>);
}

/** Settings whose value a config error never repeats (it goes to a terminal or a log). */
const SECRET_NAME = /(KEY|TOKEN|SECRET)$/;

function parse<S extends z.ZodType>(schema: S, env: Record<string, unknown>): z.output<S> {
  const result = schema.safeParse(env);
  if (result.success) return result.data;
  const lines = result.error.issues.map((issue) => {
    const name = String(issue.path[0] ?? '');
    const got =
      env[name] === undefined
        ? 'unset'
        : SECRET_NAME.test(name)
          ? 'set; not shown'
          : `got ${JSON.stringify(env[name])}`;
    return `  ${issue.path.join('.') || '(environment)'}: ${issue.message} (${got})`;
  });
  throw new ConfigError(`invalid configuration:\n${lines.join('\n')}`);
}

/** Parses the environment or exits 2 with the message: for a service's `main.ts`. */
export function loadOrExit<S extends z.ZodType>(schema: S, service: string): z.output<S> {
  try {
    return parseEnv(schema, process.env);
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    process.stderr.write(`${service}: ${err.message}\n`);
    process.exit(2);
  }
}

export { type AlertSettings, alertSettings, alerts, checkAlerts } from './alerts.ts';
