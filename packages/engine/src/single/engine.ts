/**
 * The single box's delivery engine: the schedule, the rate limiter's ticks, the in-process
 * delivery queue and its workers, the sweeper, over one Store. The API tells it about new
 * work (`wake`) and changed destinations (`destinationChanged`) after each commit. How it
 * wakes, rebuilds at start and sweeps is the policy both shapes follow, over the in-memory
 * adapters of `memory-ports.ts`.
 */

import type { HealthPolicy } from '@sluice/core';
import type { Destination, Store } from '@sluice/store';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import { followDestinationChange } from '../delivery/change-policy.ts';
import { completionFollowUps } from '../delivery/completion-policy.ts';
import { CompletionWriter } from '../delivery/completion-writer.ts';
import { type AttemptTransport, Deliverer } from '../delivery/deliver.ts';
import { DeliveryThreads } from '../delivery/delivery-threads.ts';
import { LocalQueue } from '../delivery/local-queue.ts';
import { MemoryTokenCache, OAuthTokens } from '../delivery/oauth-tokens.ts';
import { DeliveryRunner } from '../delivery/runner.ts';
import type { LookupFunction } from '../delivery/ssrf.ts';
import { DestinationCache } from '../destination-cache.ts';
import type { Dispatcher } from '../dispatcher.ts';
import { registerHealthGauge } from '../ops/health-metrics.ts';
import { EngineMetrics } from '../ops/metrics.ts';
import { Retention } from '../ops/retention.ts';
import { MemoryPacing, Pacer } from '../pace/memory-pacing.ts';
import { type RuntimeStats, runtimeStats } from '../pace/runtime-stats.ts';
import { recoverFromStore } from '../sweep/recovery.ts';
import { Sweeper, sweepOnce } from '../sweep/sweeper.ts';
import { MemorySchedule } from '../tick/memory-schedule.ts';
import { createTick } from '../tick/tick.ts';
import { type WakePorts, wakeForWork } from '../tick/wake.ts';
import { Transforms, type TransformsOptions, transformLogs } from '../transform/transforms.ts';
import {
  type MemoryState,
  memoryRecoveryPorts,
  memorySweepPorts,
  memoryWakePorts,
  roomAt,
} from './memory-ports.ts';

const DEFAULT_TRANSFORMS: TransformsOptions = {
  timeoutMs: 50,
  memoryBytes: 16 * 1024 * 1024,
  threads: 1,
  maxPayloadBytes: 256 * 1024,
};

export interface EngineOptions {
  store: Store;
  logger: Logger;
  registry: Registry;
  allowPrivateNetworks: boolean;
  lookup?: LookupFunction | undefined;
  /** Most requests in flight at once, over all destinations. */
  deliveryConcurrency: number;
  /** A request in flight this long is not quick: its tenant keeps to its share (`SLUICE_TENANT_QUICK_MS`). */
  tenantQuickMs?: number | undefined;
  /**
   * Threads that make the HTTP requests (`delivery-threads.ts`); 0: the main thread. An
   * injected `lookup` (tests) cannot cross to a thread: with one, requests run on the main thread.
   */
  deliveryThreads?: number | undefined;
  /** `SLUICE_EGRESS_PROXY`: every attempt through this HTTP proxy. */
  egressProxy?: string | undefined;
  /** Destinations' transforms (SLUICE_TRANSFORM_*): default 50 ms, 16 MiB, one thread. */
  transforms?: TransformsOptions | undefined;
  /** Added to each send's occupancy of the window (clock rounding). */
  windowMarginMs: number;
  /** Longest time assumed between a request's start and its arrival. */
  arrivalBoundMs: number;
  sweepIntervalMs: number;
  /** A claimed delivery that nothing in the process holds returns to pending after this. */
  leaseMs: number;
  /** How long before its window has room a held-back tick runs (`SLUICE_TICK_LEAD_MS`; docs/adr/0012). */
  tickLeadMs: number;
  /** `SLUICE_DESTINATION_MAX_IN_FLIGHT`: the fair bound's ceiling (docs/adr/0014); absent: no fair bound. */
  maxInFlight?: number | undefined;
  /** How long a completion waits for others to share its batch (default: the writer's). */
  completionFlushMs?: number | undefined;
  /** Delivered data older than this is deleted (at least a day). */
  retentionMs: number;
  /** The circuit breaker's settings (default DEFAULT_HEALTH_POLICY; docs/adr/0007). */
  health?: HealthPolicy | undefined;
  /** Most destinations cached (`SLUICE_DESTINATION_CACHE_SIZE`). */
  destinationCacheSize: number;
  clock?: () => number;
  random?: () => number;
}

export class Engine implements Dispatcher {
  readonly destinations: DestinationCache;
  readonly metrics: EngineMetrics;
  private readonly store: Store;
  private readonly logger: Logger;
  private readonly clock: () => number;
  private readonly pacer: Pacer;
  private readonly deliverer: AttemptTransport;
  /** Where OAuth2 token requests are made: on this thread, the delivery threads' guard and proxy. */
  private readonly tokenDeliverer: Deliverer;
  /** The transform threads: the delivery's, and the API's check on write and preview. */
  readonly transforms: Transforms;
  private readonly queue: LocalQueue;
  private readonly completions: CompletionWriter;
  private readonly schedule: MemorySchedule;
  private readonly memory: MemoryState;
  private readonly wakePorts: WakePorts<void>;
  private readonly sweeper: Sweeper;
  private readonly sweepIntervalMs: number;
  readonly retention: Retention;

  constructor(options: EngineOptions) {
    const { store, logger } = options;
    const clock = options.clock ?? Date.now;
    this.store = store;
    this.logger = logger;
    this.clock = clock;
    this.destinations = new DestinationCache(store, options.destinationCacheSize);
    this.pacer = new Pacer({ marginMs: options.windowMarginMs, arrivalBoundMs: options.arrivalBoundMs });
    this.metrics = new EngineMetrics(
      options.registry,
      () => ({ ...this.pacer.totals(), scheduled: this.schedule.size }),
      (now) => store.oldestDueAt(now),
      clock,
    );
    registerHealthGauge(options.registry, store);
    const threads = options.deliveryThreads ?? 0;
    this.deliverer =
      threads > 0 && options.lookup === undefined
        ? new DeliveryThreads({
            allowPrivateNetworks: options.allowPrivateNetworks,
            connections: options.deliveryConcurrency,
            threads,
            proxy: options.egressProxy,
            onThreadExit: (err) => logger.error({ err }, 'a delivery thread ended; a new one replaces it'),
          })
        : new Deliverer({
            allowPrivateNetworks: options.allowPrivateNetworks,
            lookup: options.lookup,
            connections: options.deliveryConcurrency,
            proxy: options.egressProxy,
          });
    this.tokenDeliverer =
      this.deliverer instanceof Deliverer
        ? this.deliverer
        : new Deliverer({
            allowPrivateNetworks: options.allowPrivateNetworks,
            lookup: options.lookup,
            connections: 8,
            proxy: options.egressProxy,
          });
    const tokenDeliverer = this.tokenDeliverer;
    const tokens = new OAuthTokens({
      cache: new MemoryTokenCache(clock),
      post: (url, headers, body, timeoutMs) => tokenDeliverer.post(url, headers, body, timeoutMs),
      clock,
      counted: (result) => this.metrics.oauthTokenRequests.inc({ result }),
    });
    this.transforms = new Transforms({
      ...(options.transforms ?? DEFAULT_TRANSFORMS),
      ...transformLogs(logger),
    });
    const pacing = new MemoryPacing(this.pacer);
    this.completions = new CompletionWriter({
      store,
      metrics: this.metrics,
      logger,
      clock,
      flushMs: options.completionFlushMs,
      health: options.health,
      ...completionFollowUps({
        logger,
        clock,
        wake: (id, at) => this.schedule.wake(id, at),
        wakeAtRoom: (destination) => this.wakeAtRoom(destination),
        refresh: (id) => this.destinations.refresh(id),
        // One process: its cache is the only copy.
        announce: () => undefined,
        reopened: (id) => {
          // The probe ticks noted no room (so wakes waited for them): it has room again.
          const pace = this.pacer.peek(id);
          if (pace !== undefined) pace.roomForMore = true;
        },
      }),
    });
    const runner = new DeliveryRunner({
      destinations: this.destinations,
      pacing,
      deliverer: this.deliverer,
      completions: this.completions,
      metrics: this.metrics,
      clock,
      random: options.random ?? Math.random,
      store: this.store,
      wake: (id) => this.wake(id),
      tokens,
      transforms: this.transforms,
    });
    this.queue = new LocalQueue(runner, {
      concurrency: options.deliveryConcurrency,
      quickMs: options.tenantQuickMs,
      onError: (err) => logger.error({ err }, 'delivery failed unexpectedly'),
      clock,
      tenantOf: (id) => this.destinations.peek(id)?.tenantId,
    });
    this.schedule = new MemorySchedule({
      clock,
      tick: createTick({
        store,
        destinations: this.destinations,
        pacing,
        publisher: this.queue,
        metrics: this.metrics,
        clock,
        leadMs: options.tickLeadMs,
        maxInFlight: options.maxInFlight,
        tenantHeld: (tenantId) => this.queue.heldBySlow(tenantId),
      }),
      onTickError: (destinationId, err) => logger.error({ err, destinationId }, 'tick failed'),
    });
    this.memory = {
      store,
      schedule: this.schedule,
      pacer: this.pacer,
      destinations: this.destinations,
      clock,
    };
    this.wakePorts = memoryWakePorts(this.memory);
    const sweepPorts = memorySweepPorts(this.memory, {
      live: this.queue.live,
      leaseMs: options.leaseMs,
      logger,
      metrics: this.metrics,
    });
    this.sweeper = new Sweeper(() => sweepOnce(sweepPorts), logger);
    this.sweepIntervalMs = options.sweepIntervalMs;

    this.retention = new Retention({
      store,
      logger,
      clock,
      retentionMs: options.retentionMs,
    });
  }

  /**
   * Recovers from whatever the last process left, by the rebuild both shapes follow
   * (sweep/recovery.ts): its claims back to pending, counted as sent now and as attempts
   * made; the send windows refilled from the recent attempts; every destination with
   * pending work scheduled. Then the sweeper and retention start.
   */
  async start(): Promise<void> {
    const { requeued, scheduled } = await recoverFromStore(memoryRecoveryPorts(this.memory), this.clock());
    this.sweeper.start(this.sweepIntervalMs);
    this.retention.start();
    this.logger.info({ scheduled, requeued }, 'engine started');
  }

  /**
   * A freed slot of a capped destination: a tick held back by the cap may send again as soon
   * as the window has room, not a whole interval later (`wake` would not: the capped tick
   * took all it was allowed, so it left no room for more).
   */
  private wakeAtRoom(destination: Destination): void {
    if (!this.schedule.isScheduled(destination.id)) return;
    const pace = this.pacer.peek(destination.id);
    const now = this.clock();
    this.schedule.wake(destination.id, pace === undefined ? now : roomAt(destination, pace, now));
  }

  /**
   * New work for a destination was committed (an event, a retry, a resume): its tick is
   * scheduled at once by the rule both shapes follow (tick/wake.ts), from what this process
   * holds of it now.
   */
  wake(destinationId: string): void {
    wakeForWork(destinationId, this.destinations.peek(destinationId), this.clock(), this.wakePorts);
  }

  /** A destination was created: the cache holds it (as the store reads it) before its first event. */
  async destinationCreated(destinationId: string): Promise<void> {
    // Never fails the create: a destination not cached is read on first use.
    await this.destinations.refresh(destinationId).catch(() => undefined);
  }

  /** Announcing a change is in-process here: it cannot be unavailable. */
  checkAnnounce(): void {}

  /**
   * A destination was changed: the next tick reads the new settings, and runs at once. A
   * lowered limit's answer waits until no request started under the old one may still arrive
   * (at most twice the arrival bound), as the distributed API's does (docs/adr/0012): every
   * window that begins after the answer holds the new limit.
   */
  async destinationChanged(destinationId: string): Promise<void> {
    await followDestinationChange(destinationId, {
      destinations: this.destinations,
      logger: this.logger,
      clock: this.clock,
      schedule: this.schedule,
      mayStillArrive: (id) => {
        const window = this.pacer.peek(id)?.window;
        return () => window?.mayStillArrive(this.clock()) ?? false;
      },
      arrivalBoundMs: this.pacer.options.arrivalBoundMs,
    });
  }

  isScheduled(destinationId: string): boolean {
    return this.schedule.isScheduled(destinationId);
  }

  destination(destinationId: string): Promise<Destination | undefined> {
    return this.destinations.get(destinationId);
  }

  async runtimeStats(destinationId: string): Promise<RuntimeStats & { scheduled: boolean }> {
    const destination = await this.destinations.get(destinationId);
    return {
      ...runtimeStats(destination, this.pacer.peek(destinationId), this.clock()),
      scheduled: this.schedule.isScheduled(destinationId),
    };
  }

  /** Lets go of what the constructor opened (the delivery threads), for an engine never started. */
  async discard(): Promise<void> {
    await this.closeDeliverers();
  }

  private async closeDeliverers(): Promise<void> {
    await this.deliverer.close();
    if (this.tokenDeliverer !== this.deliverer) await this.tokenDeliverer.close();
    await this.transforms.close();
  }

  /** Stops ticking, finishes the requests in flight, writes their outcomes. */
  async stop(): Promise<void> {
    await this.sweeper.stop();
    await this.retention.stop();
    await this.schedule.stop();
    await this.queue.stop();
    await this.completions.flush();
    // Published but never started: back to pending now, so the next start need not count
    // them as possibly sent.
    await this.store.requeue(Number.POSITIVE_INFINITY, new Set(), this.clock());
    await this.closeDeliverers();
  }
}
