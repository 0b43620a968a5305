/**
 * Scenarios (docs/performance.md) as workloads: plain data, deterministic (fixed seeds), so every
 * target gets exactly the same destinations, events and limit changes.
 *
 * Glossary:
 * - destination `d000`…: the receiver path `/d/<id>`, a limit per second, a number of events
 *   and optionally a receiver behaviour (`query`, see receiver.ts);
 * - event id `<dest>:<seq>`: the bench's own id, carried in the payload (`bench.id`) next to
 *   its creation time (`bench.createdAt`), so the receiver reads both from the body that
 *   every target sends unchanged;
 * - burst: every event handed to the target as fast as it takes them, in chunks of at most
 *   1000, interleaved round-robin across destinations (event 0 of each, then event 1, …);
 * - steady: destination i's k-th event is due at t0 + (k + i/n) / rate seconds;
 * - limit change: at t0 + atMs the destination's limit becomes `limit`;
 * - capacity: what the receiver accepts per second when it is less than the limit (it
 *   refuses the rest with 429 + Retry-After); Sluice is not told (`capacity*` scenarios);
 * - measured / noise (isolation scenarios): the healthy or quiet destinations whose latency
 *   is reported, alone and beside the others (a slow receiver, a busy tenant's backlog).
 */

import { seededRandom } from './common.ts';

export interface DestinationSpec {
  id: string;
  /** Requests per second. */
  limit: number;
  events: number;
  /** Receiver behaviour, appended to the destination URL (`fail=0.1&limit429=5`). */
  query: string;
  /** Sluice's adaptive pacing (docs/adr/0008); the baselines have none. */
  adaptive?: boolean;
  /** A burst allowance (token bucket of this capacity refilled at `limit` per second). */
  burst?: number;
  /** The receiver's own unannounced limit per second, when below `limit` (the ideal's rate). */
  capacity?: number;
  /** Steady ingest: its own events per second (0: all due at once, a backlog); else the workload's. */
  rate?: number;
  /** The tenant that owns it (Sluice's targets create one tenant per name); else the run's one tenant. */
  tenant?: string;
  /** How long a delivery attempt may wait for the answer, ms (default 10,000). */
  timeoutMs?: number;
}

type Ingest =
  | { mode: 'burst' }
  | {
      mode: 'steady';
      ratePerDestination: number;
      /** Hand each generator step's due events over in one call (soak) instead of one by one. */
      batched: boolean;
      /** Batched: a step every this many ms (else as soon as the next event is due). */
      stepMs?: number;
    };

interface LimitChange {
  atMs: number;
  dest: string;
  limit: number;
}

interface RetrySpec {
  attempts: number;
  initialDelayMs: number;
  maxDelayMs: number;
}

export interface Workload {
  scenario: string;
  destinations: DestinationSpec[];
  ingest: Ingest;
  payloadBytes: number;
  changes: LimitChange[];
  retry: RetrySpec;
  /** Give up (and record what was achieved) this long after ingest started. */
  timeLimitS: number;
  /** After everything arrived: seconds of CPU sampling with nothing to do (cost-curve). */
  idleS: number;
  /** cost-curve (curve.ts): this run's number of destinations and events a second. */
  curve?: { size: number; rate: number };
  /**
   * Isolation scenarios: the destinations whose id starts with `measured` are the healthy
   * ones whose latency is reported; the others are the noise beside them. The run stops once
   * every measured event arrived (or at `timeLimitS`), without waiting for the noise.
   */
  isolation?: { measured: string; lateAfterS: number };
}

export const SCENARIOS = [
  'compliance',
  'latency',
  'throughput',
  'cost-curve',
  'limit-change',
  'failures',
  'capacity',
  'capacity-adaptive',
  'slow-receiver',
  'busy-tenant',
  'hanging-tenant',
  'soak',
] as const;

/** Scenarios that only Sluice can run as asked (a feature the baselines do not have). */
export const SLUICE_ONLY: readonly Scenario[] = ['capacity-adaptive'];
/**
 * Scenarios run twice per target, the measured destinations alone and beside the noise
 * (isolation.ts); the ceiling, which has no limiter and no tenants, does not run them.
 */
export const ISOLATION: readonly Scenario[] = ['slow-receiver', 'busy-tenant', 'hanging-tenant'];
export type Scenario = (typeof SCENARIOS)[number];

export interface ScenarioOptions {
  quick: boolean;
  /** soak: events per second over all destinations. */
  soakRate: number;
  /** soak: total deliveries. */
  soakTotal: number;
  /**
   * latency: single events a second over all its destinations, 2 a second each (400: 200
   * destinations). A rate that leaves the machine idle part of the time shows what a
   * delivery costs when the requests of a turn do not share their round trips.
   */
  latencyRate: number;
}

const RETRY: RetrySpec = { attempts: 8, initialDelayMs: 1_000, maxDelayMs: 16_000 };
const PAYLOAD_BYTES = 512;

const destId = (i: number): string => `d${String(i).padStart(3, '0')}`;

function base(scenario: string, destinations: DestinationSpec[], timeLimitS: number): Workload {
  return {
    scenario,
    destinations,
    ingest: { mode: 'burst' },
    payloadBytes: PAYLOAD_BYTES,
    changes: [],
    retry: RETRY,
    timeLimitS,
    idleS: 0,
  };
}

function compliance(o: ScenarioOptions): Workload {
  const random = seededRandom(42);
  const choices = [5, 10, 20, 50];
  const n = o.quick ? 10 : 100;
  const destinations = Array.from({ length: n }, (_, i) => {
    const limit = choices[Math.floor(random() * choices.length)] as number;
    return { id: destId(i), limit, events: (o.quick ? 2 : 10) * limit, query: '' };
  });
  return base('compliance', destinations, o.quick ? 20 : 90);
}

function latency(o: ScenarioOptions): Workload {
  const n = o.quick ? 20 : Math.max(1, Math.round(o.latencyRate / 2));
  const seconds = o.quick ? 2 : 20;
  const destinations = Array.from({ length: n }, (_, i) => ({
    id: destId(i),
    limit: 10,
    events: 2 * seconds,
    query: '',
  }));
  return {
    ...base('latency', destinations, seconds + 40),
    ingest: { mode: 'steady', ratePerDestination: 2, batched: false },
  };
}

function throughput(o: ScenarioOptions): Workload {
  const destinations = Array.from({ length: 20 }, (_, i) => ({
    id: destId(i),
    limit: 2_000,
    events: o.quick ? 200 : 3_000,
    query: '',
  }));
  return base('throughput', destinations, o.quick ? 20 : 120);
}

/**
 * Twenty destinations at 20/s with a backlog. At 4 s group A (d000–d009) is lowered to 5/s
 * and group B (d010–d019) raised to 50/s; at 8 s A is raised to 20/s and B lowered to 10/s;
 * at 12 s everything is raised to 200/s to drain the rest.
 */
function limitChange(o: ScenarioOptions): Workload {
  const scaleT = o.quick ? 0.25 : 1;
  const destinations = Array.from({ length: 20 }, (_, i) => ({
    id: destId(i),
    limit: 20,
    events: o.quick ? 60 : 500,
    query: '',
  }));
  const changes: LimitChange[] = [];
  for (const d of destinations) {
    const a = d.id < 'd010';
    changes.push({ atMs: 4_000 * scaleT, dest: d.id, limit: a ? 5 : 50 });
    changes.push({ atMs: 8_000 * scaleT, dest: d.id, limit: a ? 20 : 10 });
    changes.push({ atMs: 12_000 * scaleT, dest: d.id, limit: 200 });
  }
  return { ...base('limit-change', destinations, o.quick ? 20 : 60), changes };
}

/** Every destination fails 10 % with 500; d000–d004 also answer 429 + Retry-After past 5/s. */
function failures(o: ScenarioOptions): Workload {
  const n = o.quick ? 5 : 20;
  const destinations = Array.from({ length: n }, (_, i) => ({
    id: destId(i),
    limit: 10,
    events: o.quick ? 20 : 50,
    query: i < (o.quick ? 2 : 5) ? 'fail=0.1&limit429=5' : 'fail=0.1',
  }));
  const w = base('failures', destinations, o.quick ? 40 : 120);
  return o.quick ? { ...w, retry: { ...RETRY, initialDelayMs: 200 } } : w;
}

/**
 * Ten destinations limited to 50/s whose receiver accepts only 15 per sliding second and
 * answers the rest 429 + `Retry-After: 1` — an unannounced capacity. `capacity`: Sluice (and
 * the baselines) as configured; `capacity-adaptive`: Sluice with adaptive pacing. Reported:
 * requests the receiver refused, and deliveries per second. A larger retry budget, so that
 * nothing is lost to the refusals and the two compare on cost alone.
 */
function capacity(o: ScenarioOptions, adaptive: boolean): Workload {
  const n = o.quick ? 2 : 10;
  const destinations = Array.from({ length: n }, (_, i) => ({
    id: destId(i),
    limit: 50,
    events: o.quick ? 60 : 300,
    query: 'limit429=15&retry_after=1',
    capacity: 15,
    adaptive,
  }));
  return {
    ...base(adaptive ? 'capacity-adaptive' : 'capacity', destinations, o.quick ? 40 : 150),
    retry: { attempts: 30, initialDelayMs: 1_000, maxDelayMs: 4_000 },
  };
}

/** A long steady stream to `soakTotal` deliveries: 100 destinations at 100/s, batched ingest. */
function soak(o: ScenarioOptions): Workload {
  const n = 100;
  const perDestination = Math.ceil(o.soakTotal / n);
  const destinations = Array.from({ length: n }, (_, i) => ({
    id: destId(i),
    limit: 100,
    events: perDestination,
    query: '',
  }));
  const seconds = o.soakTotal / o.soakRate;
  return {
    ...base('soak', destinations, Math.ceil(seconds * 1.5 + 60)),
    ingest: { mode: 'steady', ratePerDestination: o.soakRate / n, batched: true },
  };
}

/** Healthy destinations: limit 10/s, 5 events/s each, for `seconds`. */
function healthy(prefix: string, n: number, seconds: number, tenant?: string): DestinationSpec[] {
  return Array.from({ length: n }, (_, i) => ({
    id: `${prefix}${String(i).padStart(2, '0')}`,
    limit: 10,
    rate: 5,
    events: 5 * seconds,
    query: '',
    ...(tenant ? { tenant } : {}),
  }));
}

/**
 * Twenty healthy destinations beside one whose receiver answers after 20 s (limit 50/s, fed
 * at its limit, timeout 30 s), all on the receiver's one origin (a connection pool is per
 * origin): the slow one's requests hold every request slot they can get. Reported: the
 * healthy events' latency alone and beside it, and how many took over 20 s.
 */
function slowReceiver(o: ScenarioOptions): Workload {
  const seconds = o.quick ? 3 : 16;
  const slow: DestinationSpec = {
    id: 's00',
    limit: 50,
    rate: 50,
    events: 50 * seconds,
    query: `delay_ms=${o.quick ? 2_000 : 20_000}`,
    timeoutMs: 30_000,
  };
  const lateAfterS = o.quick ? 5 : 20;
  return {
    ...base('slow-receiver', [...healthy('h', 20, seconds), slow], seconds + lateAfterS + 2),
    ingest: { mode: 'steady', ratePerDestination: 5, batched: false },
    isolation: { measured: 'h', lateAfterS },
  };
}

/**
 * A quiet tenant's twenty destinations with steady traffic, beside a busy tenant that posts a
 * backlog of 40,000 events to four destinations at 50/s (200 s of work; the run ends first).
 * Ingest is batched per step and tenant, so the backlog goes in batches of 1000.
 */
function busyTenant(o: ScenarioOptions): Workload {
  const seconds = o.quick ? 3 : 25;
  const backlog = o.quick ? 2_000 : 40_000;
  const busy = Array.from({ length: 4 }, (_, i) => ({
    id: `b${i}`,
    limit: 50,
    rate: 0,
    events: backlog / 4,
    query: '',
    tenant: 'busy',
  }));
  const lateAfterS = o.quick ? 5 : 20;
  return {
    ...base('busy-tenant', [...healthy('q', 20, seconds, 'quiet'), ...busy], seconds + lateAfterS + 2),
    ingest: { mode: 'steady', ratePerDestination: 5, batched: true },
    isolation: { measured: 'q', lateAfterS },
  };
}

/**
 * A quiet tenant's twenty destinations with steady traffic, beside another tenant's twenty
 * destinations whose receiver answers one request in four and leaves the others hanging
 * (limit 50/s each, fed at 50/s, timeout 60 s): the hanging requests hold every request slot
 * they can get, for a minute each.
 */
function hangingTenant(o: ScenarioOptions): Workload {
  const seconds = o.quick ? 3 : 16;
  const flaky = Array.from({ length: 20 }, (_, i) => ({
    id: `f${String(i).padStart(2, '0')}`,
    limit: 50,
    rate: 50,
    events: 50 * seconds,
    query: 'hang_of=4',
    timeoutMs: 60_000,
    tenant: 'flaky',
  }));
  const lateAfterS = o.quick ? 5 : 20;
  return {
    ...base('hanging-tenant', [...healthy('q', 20, seconds, 'quiet'), ...flaky], seconds + lateAfterS + 2),
    ingest: { mode: 'steady', ratePerDestination: 5, batched: false },
    isolation: { measured: 'q', lateAfterS },
  };
}

/** An isolation workload's measured destinations without the noise. */
export function aloneOf(w: Workload): Workload {
  const measured = w.isolation?.measured ?? '';
  return { ...w, destinations: w.destinations.filter((d) => d.id.startsWith(measured)) };
}

/** A workload per scenario; the cost curve's, one per size, come from curve.ts. */
const BUILDERS: Record<Exclude<Scenario, 'cost-curve'>, (o: ScenarioOptions) => Workload> = {
  compliance,
  latency,
  throughput,
  'limit-change': limitChange,
  failures,
  capacity: (o) => capacity(o, false),
  'capacity-adaptive': (o) => capacity(o, true),
  'slow-receiver': slowReceiver,
  'busy-tenant': busyTenant,
  'hanging-tenant': hangingTenant,
  soak,
};

export function buildWorkload(scenario: Exclude<Scenario, 'cost-curve'>, options: ScenarioOptions): Workload {
  return BUILDERS[scenario](options);
}

/** The wall time a perfect sliding-window limiter needs (docs/design.md "How we measure"), seconds. */
export function idealWallS(w: Workload): number | null {
  if (w.changes.length > 0) return null;
  if (w.ingest.mode === 'steady') {
    const rate = w.ingest.ratePerDestination;
    return Math.max(
      ...w.destinations.map((d) =>
        d.rate === 0 ? Math.ceil(d.events / d.limit) - 1 : (d.events - 1) / (d.rate ?? rate),
      ),
    );
  }
  return Math.max(
    ...w.destinations.map((d) => Math.ceil(d.events / Math.min(d.limit, d.capacity ?? d.limit)) - 1),
  );
}

export interface PlannedEvent {
  id: string;
  /** Index into the workload's destinations. */
  dest: number;
  /** Milliseconds after t0 when the event is due (0 in a burst). */
  offMs: number;
}

/**
 * The events in creation order, produced lazily (the soak has a million). When the
 * destinations share one rate, (seq, destination) order is due-time order; when some have
 * their own (isolation scenarios, a few thousand events), the events are sorted by due time.
 */
export function* planEvents(w: Workload): Generator<PlannedEvent> {
  const n = w.destinations.length;
  const most = Math.max(0, ...w.destinations.map((d) => d.events));
  const shared = w.ingest.mode === 'steady' ? w.ingest.ratePerDestination : 0;
  const own = w.ingest.mode === 'steady' && w.destinations.some((d) => d.rate !== undefined);
  const all: PlannedEvent[] = [];
  for (let k = 0; k < most; k++) {
    for (let i = 0; i < n; i++) {
      const d = w.destinations[i] as DestinationSpec;
      if (k >= d.events) continue;
      const rate = own ? (d.rate ?? shared) : shared;
      const e = { id: `${d.id}:${k}`, dest: i, offMs: rate > 0 ? ((k + i / n) / rate) * 1_000 : 0 };
      if (own) all.push(e);
      else yield e;
    }
  }
  if (own) yield* all.sort((a, b) => a.offMs - b.offMs);
}

const padCache = new Map<number, string>();

/**
 * The event's JSON payload, about `bytes` long: the same document for every target.
 * Sluice posts it as the webhook body unchanged; the baselines POST this string.
 */
export function payloadOf(
  id: string,
  createdAt: number,
  bytes: number,
): { bench: { id: string; createdAt: number }; pad: string } {
  const overhead = 40 + id.length + 18;
  const padLength = Math.max(0, bytes - overhead);
  let pad = padCache.get(padLength);
  if (pad === undefined) {
    pad = 'x'.repeat(padLength);
    padCache.set(padLength, pad);
  }
  return { bench: { id, createdAt }, pad };
}

/** The destination URL at the receiver, with its behaviour. */
export function destinationUrl(receiverUrl: string, d: DestinationSpec): string {
  return `${receiverUrl}/d/${d.id}${d.query ? `?${d.query}` : ''}`;
}
