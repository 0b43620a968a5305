/**
 * Prometheus metrics (prom-client), in base units, with no per-destination or per-tenant
 * label. Each engine registers on its own Registry, so several can share a process (tests).
 *
 * Every service exports the same names, and the gauges read shared state (the BullMQ queue,
 * the Redis schedule, the store), so any replica's `/metrics` shows the installation's real
 * depth and backlog age: query them with `max()`, never `sum()`, across replicas.
 * `sluice_delivery_queue_depth` scales the delivery workers; `sluice_oldest_pending_age_seconds`
 * is the backlog alert (docs/operations.md). A gauge whose read fails keeps its last value
 * (`scrapeRead`): a scrape answers while the store or Redis does not.
 */

import { Counter, collectDefaultMetrics, Gauge, Histogram, type Registry } from 'prom-client';
import { scrapeRead } from './scrape.ts';

/** What the gauges show, read at each scrape. */
export interface Sample {
  queued: number;
  inFlight: number;
  scheduled: number;
}

/** When the longest-waiting due delivery came due (`Store.oldestDueAt`), or null. */
type OldestDue = (now: number) => Promise<number | null>;

export class EngineMetrics {
  readonly registry: Registry;
  readonly deliveries: Counter<'outcome'>;
  readonly attemptDuration: Histogram<'result'>;
  readonly deliveryLatency: Histogram;
  readonly ticks: Counter<'result'>;
  readonly tickLag: Histogram;
  readonly queueDepth: Gauge;
  readonly inFlight: Gauge;
  readonly scheduled: Gauge;
  readonly oldestPendingAge: Gauge;
  readonly healthTransitions: Counter<'to'>;
  readonly probes: Counter;
  readonly repairs: Counter<'kind'>;
  readonly tickTakeovers: Counter;
  readonly releasedStarts: Counter;
  readonly heldByFairBound: Counter;
  readonly oauthTokenRequests: Counter<'result'>;

  constructor(
    registry: Registry,
    sample: () => Sample | Promise<Sample>,
    oldestDue: OldestDue,
    clock: () => number = Date.now,
  ) {
    this.registry = registry;
    const registers = [registry];
    // One scrape collects the three gauges of `sample` together: read the shared state once
    // for them (a BullMQ count and a ZCARD in the distributed shape), not once per gauge.
    let last: { at: number; value: Promise<Sample> } | undefined;
    const sampleOnce = (): Promise<Sample> => {
      const now = performance.now();
      if (!last || now - last.at > 100) last = { at: now, value: Promise.resolve(sample()) };
      return last.value;
    };
    const guardQueued = scrapeRead(registry, 'sluice_delivery_queue_depth');
    const guardInFlight = scrapeRead(registry, 'sluice_deliveries_in_flight');
    const guardScheduled = scrapeRead(registry, 'sluice_scheduled_destinations');
    const guardOldest = scrapeRead(registry, 'sluice_oldest_pending_age_seconds');
    this.deliveries = new Counter({
      name: 'sluice_deliveries_total',
      help: 'Attempts by outcome: delivered, retry, dead, disabled, cancelled (by its transform), held (by the circuit breaker).',
      labelNames: ['outcome'],
      registers,
    });
    this.attemptDuration = new Histogram({
      name: 'sluice_attempt_duration_seconds',
      help: 'Duration of one HTTP attempt.',
      labelNames: ['result'],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers,
    });
    this.deliveryLatency = new Histogram({
      name: 'sluice_delivery_latency_seconds',
      help: 'From event accepted to its delivery (2xx).',
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 5, 30, 60, 300, 3600],
      registers,
    });
    this.ticks = new Counter({
      name: 'sluice_ticks_total',
      help: 'Rate-limiter ticks by result: published, short_circuit, idle, inactive, suspended, probe, tenant_held.',
      labelNames: ['result'],
      registers,
    });
    this.releasedStarts = new Counter({
      name: 'sluice_deliveries_released_total',
      help: 'Published deliveries returned to pending unsent: a limit lowered since their tick left the window no room.',
      registers,
    });
    this.heldByFairBound = new Counter({
      name: 'sluice_ticks_held_by_fair_bound_total',
      help: 'Ticks whose destination had work but was at its fair bound on requests in flight (docs/adr/0014).',
      registers,
    });
    this.oauthTokenRequests = new Counter({
      name: 'sluice_oauth_token_requests_total',
      help: 'Requests to OAuth2 token endpoints by result (ok, error): one per token lifetime per credential across the deployment.',
      labelNames: ['result'],
      registers,
    });
    this.tickLag = new Histogram({
      name: 'sluice_tick_lag_seconds',
      help: 'How late a tick ran after it was due.',
      buckets: [0.001, 0.005, 0.01, 0.02, 0.05, 0.1, 0.25, 0.5, 1, 5],
      registers,
    });
    this.queueDepth = new Gauge({
      name: 'sluice_delivery_queue_depth',
      help: 'Published to the delivery queue, not started: jobs (distributed, every shard) or deliveries (single box).',
      registers,
      async collect() {
        await guardQueued(async () => this.set((await sampleOnce()).queued));
      },
    });
    this.inFlight = new Gauge({
      name: 'sluice_deliveries_in_flight',
      help: 'Requests started and not finished.',
      registers,
      async collect() {
        await guardInFlight(async () => this.set((await sampleOnce()).inFlight));
      },
    });
    this.scheduled = new Gauge({
      name: 'sluice_scheduled_destinations',
      help: 'Destinations with an entry in the schedule (they have work).',
      registers,
      async collect() {
        await guardScheduled(async () => this.set((await sampleOnce()).scheduled));
      },
    });
    this.oldestPendingAge = new Gauge({
      name: 'sluice_oldest_pending_age_seconds',
      help: 'How long the longest-waiting due delivery (active destinations) has waited; 0 when none.',
      registers,
      async collect() {
        await guardOldest(async () => {
          const now = clock();
          const due = await oldestDue(now);
          this.set(due === null ? 0 : Math.max(0, now - due) / 1000);
        });
      },
    });
    this.healthTransitions = new Counter({
      name: 'sluice_destination_health_transitions_total',
      help: 'Destination health transitions (the circuit breaker), by the state entered.',
      labelNames: ['to'],
      registers,
    });
    this.probes = new Counter({
      name: 'sluice_destination_probes_total',
      help: 'Probes sent to suspended destinations (one real delivery each).',
      registers,
    });
    this.repairs = new Counter({
      name: 'sluice_sweeper_repairs_total',
      help:
        'What the sweeper repaired, by kind: rewoken (pending work with no tick: a lost wake), ' +
        'requeued (claims past their lease in no job, returned to pending: a crash or a lost ' +
        'Redis), orphans (deliveries an ingest left on a destination deleted meanwhile, cancelled).',
      labelNames: ['kind'],
      registers,
    });
    // Every kind from 0: Prometheus' increase() misses a series' first value, and a repair is
    // rare enough that its first is often its only one.
    for (const kind of ['rewoken', 'requeued', 'orphans']) this.repairs.inc({ kind }, 0);
    this.tickTakeovers = new Counter({
      name: 'sluice_tick_takeovers_total',
      help: 'Ticks run after their lease expired: their rate limiter died or froze mid-tick.',
      registers,
    });
    // prom-client samples the event loop's delay every 10 ms by default: 100 wake-ups a
    // second, most of an idle box's CPU (I4; docs/performance.md, Decisions). A stall still
    // delays the next sample, so every stall past 100 ms shows; shorter ones are sampled, not
    // missed in aggregate.
    collectDefaultMetrics({ register: registry, eventLoopMonitoringPrecision: 100 });
  }
}
