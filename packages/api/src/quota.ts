/**
 * Tenant ingest quotas at the API (docs/operations.md "Tenant quotas"): before an accept, the
 * request's events must fit the tenant's pending-events quota and then its events-a-second
 * quota (core quota.ts, the one policy); a request that does not fit is refused whole with
 * `429 rate_limited` and `Retry-After`, and nothing of it is accepted.
 *
 * - The rate's bucket lives in a `RateCounter`: in this process in the single box
 *   (`MemoryRateCounter`), in Redis in the distributed shape, so every API replica takes
 *   from the one bucket.
 * - The pending count is the store's capped count (`Store.pendingEvents`), read at most once
 *   a second per tenant (`PENDING_CACHE_MS`), plus what this process reserved and accepted
 *   since. A count that would refuse is read again first (when older than
 *   `PENDING_RECOUNT_MS`), so finished deliveries free room promptly. It may under-count by
 *   the events other API replicas accepted in the last `PENDING_CACHE_MS` (none in the
 *   single box), never by more.
 * - A tenant's settings are read at most once a second per process (`TENANT_CACHE_MS`); a
 *   PATCH applies at once on the replica that took it, within that second on the others.
 *
 * The rate is taken after the pending check passes, so a request refused for pending takes
 * nothing from the bucket; one accepted by the quotas that the store then fails has spent its
 * tokens (the safe side).
 */

import {
  effectiveQuota,
  fitsPending,
  NO_QUOTA,
  PENDING_RETRY_AFTER_S,
  type QuotaName,
  type RateDecision,
  retryAfterSeconds,
  type TenantQuota,
  takeRate,
} from '@sluice/core';
import type { Store } from '@sluice/store';
import type { FastifyReply } from 'fastify';
import { Counter, type Registry } from 'prom-client';
import { ApiError } from './errors.ts';

/** Where the rate quota's buckets live; every API replica of an installation shares them. */
export interface RateCounter {
  /** Takes `n` events from the tenant's bucket at `now` if they fit (core `takeRate`), atomically. */
  take(tenantId: string, n: number, eventsPerSecond: number, now: number): Promise<RateDecision>;
}

/** The buckets in this process: the single box, where one process takes every event. */
class MemoryRateCounter implements RateCounter {
  readonly #tat = new Map<string, number>();

  async take(tenantId: string, n: number, eventsPerSecond: number, now: number): Promise<RateDecision> {
    const decision = takeRate(this.#tat.get(tenantId) ?? 0, n, eventsPerSecond, now);
    if (decision.ok) {
      if (this.#tat.size >= 10_000) for (const [id, tat] of this.#tat) if (tat <= now) this.#tat.delete(id);
      this.#tat.set(tenantId, decision.tat);
    }
    return decision;
  }
}

/** What `buildApi` takes: the operator-wide defaults and the shape's rate counter. */
export interface QuotaOptions {
  /** For a tenant without its own setting (`SLUICE_TENANT_EVENTS_PER_SECOND`, `…_PENDING_EVENTS`). */
  defaults: TenantQuota;
  /** Default: in this process (`MemoryRateCounter`). */
  rate?: RateCounter;
  /** Previews a tenant may ask for a second (`SLUICE_TENANT_PREVIEWS_PER_SECOND`); default 5. */
  previewsPerSecond?: number;
}

const TENANT_CACHE_MS = 1_000;
const PENDING_CACHE_MS = 1_000;
const PENDING_RECOUNT_MS = 100;

interface PendingEntry {
  /** The store's count (capped at the quota) when read. */
  counted: number;
  readAt: number;
  /** Events this process accepted since the read. */
  added: number;
  /** Events of requests admitted and not yet answered by the store. */
  reserved: number;
  /** The count being read, if one is. */
  reading?: Promise<void> | undefined;
}

/** An admitted request: tell whether the store accepted it. */
export type Admission = (accepted: boolean) => void;

const admitted: Admission = () => {};

export class Quotas {
  readonly #store: Store;
  readonly #defaults: TenantQuota;
  readonly #rate: RateCounter;
  readonly #clock: () => number;
  readonly #refused: Counter<'quota'>;
  readonly #tenants = new Map<string, { quota: TenantQuota; until: number }>();
  readonly #pending = new Map<string, PendingEntry>();
  readonly #previewsPerSecond: number;

  constructor(store: Store, options: QuotaOptions | undefined, registry: Registry, clock: () => number) {
    this.#store = store;
    this.#defaults = options?.defaults ?? NO_QUOTA;
    this.#rate = options?.rate ?? new MemoryRateCounter();
    this.#clock = clock;
    this.#previewsPerSecond = options?.previewsPerSecond ?? 5;
    this.#refused = new Counter({
      name: 'sluice_ingest_refused_total',
      help: 'Ingest requests refused with 429 rate_limited, by the tenant quota they would have exceeded',
      labelNames: ['quota'],
      registers: [registry],
    });
    for (const quota of ['eventsPerSecond', 'pendingEvents'] as const) this.#refused.labels(quota).inc(0);
  }

  /** A PATCH changed the tenant's settings: this process applies them now. */
  forget(tenantId: string): void {
    this.#tenants.delete(tenantId);
  }

  /**
   * Admits a request of `events` events, `pending` of which have a destination (the others
   * finish at once), or throws the 429 (with `Retry-After` set on `reply`). The caller reports
   * the store's answer to the returned function.
   */
  async admit(tenantId: string, events: number, pending: number, reply: FastifyReply): Promise<Admission> {
    const quota = await this.#quotaOf(tenantId);
    if (quota.eventsPerSecond === null && quota.pendingEvents === null) return admitted;
    let release = admitted;
    if (quota.pendingEvents !== null && pending > 0) {
      release = await this.#admitPending(tenantId, pending, quota.pendingEvents, reply);
    }
    if (quota.eventsPerSecond !== null) {
      const decision = await this.#rate
        .take(tenantId, events, quota.eventsPerSecond, this.#clock())
        .catch((err: unknown) => {
          release(false);
          throw err;
        });
      if (!decision.ok) {
        release(false);
        const retryAfter = retryAfterSeconds(decision.retryAfterMs);
        throw this.#refuse(reply, 'eventsPerSecond', retryAfter, {
          limit: quota.eventsPerSecond,
          requested: events,
          ...(decision.retryAfterMs === null
            ? { reason: 'the request holds more events than the quota' }
            : {}),
        });
      }
    }
    return release;
  }

  /**
   * A preview (`POST /v1/destinations/:id/preview`) takes from a bucket of its own per tenant,
   * in the same counter as the events-a-second quota (every replica's), or throws the 429.
   */
  async admitPreview(tenantId: string, reply: FastifyReply): Promise<void> {
    const perSecond = this.#previewsPerSecond;
    const decision = await this.#rate.take(`preview:${tenantId}`, 1, perSecond, this.#clock());
    if (decision.ok) return;
    const retryAfter = retryAfterSeconds(decision.retryAfterMs);
    void reply.header('retry-after', String(retryAfter));
    throw new ApiError(
      429,
      'rate_limited',
      `the tenant's previews are limited to ${perSecond} a second: retry after ${retryAfter} s`,
      { quota: 'previewsPerSecond', limit: perSecond, retryAfterSeconds: retryAfter },
    );
  }

  async #quotaOf(tenantId: string): Promise<TenantQuota> {
    const now = this.#clock();
    const cached = this.#tenants.get(tenantId);
    if (cached !== undefined && cached.until > now) return effectiveQuota(cached.quota, this.#defaults);
    const own = (await this.#store.getTenant(tenantId))?.quota ?? NO_QUOTA;
    if (this.#tenants.size >= 10_000) this.#tenants.clear();
    this.#tenants.set(tenantId, { quota: own, until: now + TENANT_CACHE_MS });
    return effectiveQuota(own, this.#defaults);
  }

  async #admitPending(tenantId: string, n: number, limit: number, reply: FastifyReply): Promise<Admission> {
    let entry = this.#pending.get(tenantId);
    if (entry === undefined) {
      if (this.#pending.size >= 10_000) this.#pending.clear();
      entry = { counted: 0, readAt: Number.NEGATIVE_INFINITY, added: 0, reserved: 0 };
      this.#pending.set(tenantId, entry);
    }
    if (this.#clock() - entry.readAt > PENDING_CACHE_MS) await this.#count(tenantId, entry, limit);
    const estimate = entry.counted + entry.added + entry.reserved;
    if (!fitsPending(estimate, n, limit) && this.#clock() - entry.readAt > PENDING_RECOUNT_MS) {
      await this.#count(tenantId, entry, limit);
    }
    const pending = entry.counted + entry.added + entry.reserved;
    if (!fitsPending(pending, n, limit)) {
      throw this.#refuse(reply, 'pendingEvents', PENDING_RETRY_AFTER_S, {
        limit,
        pending: Math.min(limit, pending),
        requested: n,
        ...(n > limit ? { reason: 'the request holds more events than the quota' } : {}),
      });
    }
    const held = entry;
    held.reserved += n;
    return (accepted) => {
      held.reserved -= n;
      if (accepted) held.added += n;
    };
  }

  /**
   * Reads the store's count into `entry`, one read at a time per tenant. What this process
   * accepted before the read began is in the count; what it accepted while the read ran
   * stays in `added` (counted twice at worst: the safe side).
   */
  #count(tenantId: string, entry: PendingEntry, limit: number): Promise<void> {
    entry.reading ??= (async () => {
      const addedBefore = entry.added;
      const readAt = this.#clock();
      try {
        entry.counted = await this.#store.pendingEvents(tenantId, limit);
        entry.readAt = readAt;
        entry.added -= addedBefore;
      } finally {
        entry.reading = undefined;
      }
    })();
    return entry.reading;
  }

  #refuse(
    reply: FastifyReply,
    quota: QuotaName,
    retryAfter: number,
    details: Record<string, unknown>,
  ): ApiError {
    this.#refused.labels(quota).inc();
    void reply.header('retry-after', String(retryAfter));
    return new ApiError(
      429,
      'rate_limited',
      `the tenant's ${quota === 'eventsPerSecond' ? 'events-a-second' : 'pending-events'} quota is reached: nothing was accepted; retry after ${retryAfter} s`,
      { quota, ...details, retryAfterSeconds: retryAfter },
    );
  }
}
