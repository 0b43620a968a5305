/**
 * The backlog alerter (ADR 0009), one loop per process that runs ticks: the single box and
 * every rate-limiter replica. Each evaluation
 *
 *   1. reads the backlog of every destination in one store statement (`backlogSamples`:
 *      counted up to one past the count threshold, and the earliest due time) and the
 *      firing alerts;
 *   2. decides what to raise and what to resolve (`evaluateAlerts`, pure, with hysteresis);
 *   3. records each change in the store — atomic, so of many replicas exactly one raises
 *      (or resolves) each alert — together with the event that tells the operator, accepted
 *      for the alerts destination in the same transaction when an alert URL is set, and the
 *      `sluice.backlog.…` operational event that tells the destination's tenant;
 *   4. wakes the alerts destination and the tenant's subscribers: the webhooks go out
 *      through the rate limiter.
 *
 * Sluice's own destination is never evaluated: an operator receiver that is down must not
 * alert about itself.
 */

import {
  ALERT_KINDS,
  type AlertChange,
  type AlertThresholds,
  countCap,
  evaluateAlerts,
  type FiringAlert,
  matchesEventType,
} from '@sluice/core';
import type { AlertNotice, OperationalNotice, Store } from '@sluice/store';
import type { Logger } from 'pino';
import { Counter, Gauge, type Registry } from 'prom-client';
import { CERTIFICATE_CHECK_MS, noticeExpiringCertificates } from './certificate-watch.ts';
import { scrapeRead } from './scrape.ts';
import { ALERTS_DESTINATION_ID, SYSTEM_TENANT } from './system.ts';

const ALERT_RAISED = 'sluice.backlog.raised';
const ALERT_RESOLVED = 'sluice.backlog.resolved';

export interface AlerterOptions {
  store: Store;
  logger: Logger;
  registry: Registry;
  clock: () => number;
  thresholds: AlertThresholds;
  intervalMs: number;
  /** True when the alerts destination exists (an alert URL is set): changes become events. */
  notify: boolean;
  /** After a change committed with its event: the alerts destination has work. */
  wake(destinationId: string): void;
}

/**
 * `sluice_backlog_alerts_firing{kind}`: read from the store at each scrape, so every
 * replica (and the API) shows the installation's alerts; query it with `max()`. A failed
 * read keeps the last values (`scrapeRead`).
 */
export function registerAlertGauge(registry: Registry, store: Store): Gauge<'kind'> {
  const guard = scrapeRead(registry, 'sluice_backlog_alerts_firing');
  return new Gauge({
    name: 'sluice_backlog_alerts_firing',
    help: 'Backlog alerts firing, by kind (pending_count, pending_age).',
    labelNames: ['kind'],
    registers: [registry],
    async collect() {
      await guard(async () => {
        const firing = await store.listAlerts();
        for (const kind of ALERT_KINDS) this.set({ kind }, firing.filter((a) => a.kind === kind).length);
      });
    },
  });
}

/** The body of an alert's webhook (docs/operations.md "Backlog alerts"). */
function alertPayload(change: AlertChange, raisedAt: number, resolvedAt: number | null): string {
  return JSON.stringify({
    type: change.action === 'raise' ? ALERT_RAISED : ALERT_RESOLVED,
    kind: change.kind,
    tenantId: change.tenantId,
    destinationId: change.destinationId,
    threshold: change.threshold,
    value: change.value,
    unit: change.kind === 'pending_count' ? 'deliveries' : 'seconds',
    raisedAt: new Date(raisedAt).toISOString(),
    resolvedAt: resolvedAt === null ? null : new Date(resolvedAt).toISOString(),
  });
}

export class Alerter {
  private readonly options: AlerterOptions;
  private readonly changes: Counter<'kind' | 'transition'>;
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<unknown> | undefined;
  /** When the client certificates were last checked (certificate-watch.ts); 0: never. */
  private certificatesCheckedAt = 0;

  constructor(options: AlerterOptions) {
    this.options = options;
    registerAlertGauge(options.registry, options.store);
    this.changes = new Counter({
      name: 'sluice_backlog_alerts_total',
      help: 'Backlog alerts raised and resolved by this process, by kind and transition.',
      labelNames: ['kind', 'transition'],
      registers: [options.registry],
    });
  }

  /** One evaluation; returns the changes this process made (another replica's are not). */
  async evaluate(): Promise<AlertChange[]> {
    const { store, thresholds, clock } = this.options;
    // The firing alerts first, then the samples: each alert read was raised before the
    // samples' snapshot, so a sample below its threshold shows the backlog fell after the
    // raise. Read side by side (two statements, two snapshots), a replica could take a sample
    // from before another replica's raise for one from after it, and resolve an alert at
    // once (seen with 3 rate limiters: raised, resolved, raised within a second).
    const firing = await store.listAlerts();
    const samples = await store.backlogSamples(countCap(thresholds), SYSTEM_TENANT.id);
    const now = clock();
    const made: AlertChange[] = [];
    for (const change of evaluateAlerts(samples, firing, thresholds, now)) {
      if (await this.apply(change, now)) made.push(change);
    }
    return made;
  }

  private async apply(change: AlertChange, now: number): Promise<boolean> {
    const { store, logger } = this.options;
    const raise = change.action === 'raise';
    // The sample counts only up to the cap; the operator and the tenant are told the real backlog.
    const counts = await store.countsFor(change.destinationId, now, now);
    if (raise && change.kind === 'pending_count') change.value = counts.pending;
    const alert: FiringAlert = change.raised ?? {
      destinationId: change.destinationId,
      tenantId: change.tenantId,
      kind: change.kind,
      threshold: change.threshold,
      value: change.value,
      raisedAt: now,
    };
    const notice: AlertNotice | null = this.options.notify
      ? {
          tenantId: SYSTEM_TENANT.id,
          event: {
            type: raise ? ALERT_RAISED : ALERT_RESOLVED,
            payload: alertPayload(change, alert.raisedAt, raise ? null : now),
            idempotencyKey: `${raise ? 'raised' : 'resolved'}:${alert.destinationId}:${alert.kind}:${alert.raisedAt}`,
            destinationIds: [ALERTS_DESTINATION_ID],
          },
        }
      : null;
    // The tenant hears of it too, in the same transaction (docs/api.md "Operational events").
    const operational: OperationalNotice = {
      tenantId: alert.tenantId,
      destinationId: alert.destinationId,
      type: raise ? ALERT_RAISED : ALERT_RESOLVED,
      occurredAt: now,
      data: {
        kind: alert.kind,
        // Not delivered yet: pending, and claimed for the delivery queue (the distributed
        // shape's rate limiter publishes ahead of the window).
        pending: counts.pending + counts.inQueue,
        oldestPendingAgeMs: counts.oldestPendingAt === null ? 0 : Math.max(0, now - counts.oldestPendingAt),
        threshold: alert.threshold,
      },
      key: `${raise ? 'raised' : 'resolved'}:${alert.destinationId}:${alert.kind}:${alert.raisedAt}`,
    };
    const done = raise
      ? await store.raiseAlert(alert, notice, now, operational)
      : await store.resolveAlert(alert, notice, now, operational);
    if (!done) return false; // another replica got there first
    await this.wakeSubscribers(operational);
    this.changes.inc({ kind: change.kind, transition: raise ? 'raised' : 'resolved' });
    const { action, destinationId, tenantId, kind, threshold, value } = change;
    logger.warn(
      { action, destinationId, tenantId, kind, threshold, value },
      `backlog alert ${raise ? 'raised' : 'resolved'}`,
    );
    if (notice !== null) this.options.wake(ALERTS_DESTINATION_ID);
    return true;
  }

  /** The tenant's destinations that the alert's event went to have work (read again: rare). */
  private async wakeSubscribers({ tenantId, destinationId, type }: OperationalNotice): Promise<void> {
    for (const d of await this.options.store.listDestinations(tenantId))
      if (d.id !== destinationId && matchesEventType(d.eventTypes, type)) this.options.wake(d.id);
  }

  /**
   * Client certificates near their end (certificate-watch.ts), at the first evaluation and
   * hourly after; their events' destinations woken.
   */
  private async watchCertificates(): Promise<void> {
    const now = this.options.clock();
    if (now - this.certificatesCheckedAt < CERTIFICATE_CHECK_MS) return;
    this.certificatesCheckedAt = now;
    for (const id of await noticeExpiringCertificates(this.options.store, now)) this.options.wake(id);
  }

  start(): void {
    this.timer = setInterval(() => {
      if (this.running !== undefined) return; // the last evaluation is still going
      this.running = this.evaluate()
        .catch((err: unknown) => this.options.logger.error({ err }, 'backlog alert evaluation failed'))
        .then(() => this.watchCertificates())
        .catch((err: unknown) => this.options.logger.error({ err }, 'the certificate check failed'))
        .finally(() => {
          this.running = undefined;
        });
    }, this.options.intervalMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    await this.running;
  }
}
