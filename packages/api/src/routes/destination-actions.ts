import { bucketRefusals, generateSecret, maxInAnyWindow, PERIOD_MS, perSecond } from '@sluice/core';
import type { OperationalNotice } from '@sluice/store';
import { type ApiContext, type App, errorResponses } from '../context.ts';
import {
  Count,
  Destination as DestinationBody,
  DestinationSecrets,
  HealthQuery,
  HealthWithTransitions,
  IdParams,
  Replay,
  RotatedSecret,
  Stats,
  StatsQuery,
  TenantQuery,
} from '../contract.ts';
import { notFound } from '../errors.ts';
import { presentDestination, presentHealth, presentTransition } from '../present.ts';
import { ownedDestination, tags, wakeSubscribers } from './destinations.ts';

/** How long a rotated-out secret keeps signing beside the new one. */
const SECRET_OVERLAP_MS = 24 * 3_600_000;

export function destinationActionRoutes(app: App, ctx: ApiContext): void {
  const { store, dispatcher, clock } = ctx;

  for (const [action, state, summary] of [
    ['pause', 'paused', 'Pause: keep accepting events, deliver nothing until resumed'],
    ['resume', 'active', 'Resume a paused destination, or one disabled by a 410; closes its circuit'],
  ] as const) {
    app.post(
      `/v1/destinations/:id/${action}`,
      {
        config: { auth: 'tenant' },
        schema: {
          tags,
          summary,
          params: IdParams('dst'),
          querystring: TenantQuery,
          response: { 200: DestinationBody, ...errorResponses(404) },
        },
      },
      async (request) => {
        const current = await ownedDestination(ctx, request);
        dispatcher.checkAnnounce();
        // An operator's resume is a fresh start: the circuit closes too (docs/adr/0007).
        // A suspended one's `sluice.destination.recovered` goes in the reset's transaction.
        const reset = action === 'resume' ? await store.resetHealth(current.id, clock()) : null;
        const updated = await store.updateDestination(current.id, { state, disabledReason: null }, clock());
        if (!updated) throw notFound('destination', current.id);
        await dispatcher.destinationChanged(updated.id);
        if (reset?.from === 'suspended')
          await wakeSubscribers(ctx, updated.tenantId, updated.id, 'sluice.destination.recovered');
        return presentDestination(updated);
      },
    );
  }

  app.get(
    '/v1/destinations/:id/health',
    {
      config: { auth: 'tenant' },
      schema: {
        tags,
        summary: 'Endpoint health (the circuit breaker) and its latest transitions',
        params: IdParams('dst'),
        querystring: HealthQuery,
        response: { 200: HealthWithTransitions, ...errorResponses(404) },
      },
    },
    async (request) => {
      const destination = await ownedDestination(ctx, request);
      const transitions = await store.healthTransitions(destination.id, request.query.limit);
      return {
        ...presentHealth(destination.health, destination.tls),
        transitions: transitions.map(presentTransition),
      };
    },
  );

  app.get(
    '/v1/destinations/:id/secret',
    {
      // A `read` portal link sees no signing secret.
      config: { auth: 'tenant', portal: 'manage' },
      schema: {
        tags,
        summary: 'The signing secrets: the current one and the rotated-out ones still signing',
        params: IdParams('dst'),
        querystring: TenantQuery,
        response: { 200: DestinationSecrets, ...errorResponses(404) },
      },
    },
    async (request) => {
      const destination = await ownedDestination(ctx, request);
      const now = clock();
      return {
        secret: destination.secrets.find((s) => s.expiresAt === null)?.secret ?? '',
        previous: destination.secrets
          .filter(
            (s): s is { secret: string; expiresAt: number } => s.expiresAt !== null && s.expiresAt > now,
          )
          .map((s) => ({ secret: s.secret, expiresAt: new Date(s.expiresAt).toISOString() })),
      };
    },
  );

  app.post(
    '/v1/destinations/:id/rotate-secret',
    {
      config: { auth: 'tenant' },
      schema: {
        tags,
        summary: 'New signing secret; the old one keeps signing beside it for 24 h',
        params: IdParams('dst'),
        querystring: TenantQuery,
        response: { 200: RotatedSecret, ...errorResponses(404) },
      },
    },
    async (request) => {
      const current = await ownedDestination(ctx, request);
      dispatcher.checkAnnounce();
      const now = clock();
      const previous = current.secrets.find((s) => s.expiresAt === null);
      const expiresAt = now + SECRET_OVERLAP_MS;
      const secret = generateSecret();
      const secrets = [
        { secret, expiresAt: null },
        ...(previous ? [{ secret: previous.secret, expiresAt }] : []),
        ...current.secrets.filter((s) => s.expiresAt !== null && s.expiresAt > now),
      ];
      // Its `sluice.secret.rotated` goes in the update's transaction.
      const notices: OperationalNotice[] = previous
        ? [
            {
              tenantId: current.tenantId,
              destinationId: current.id,
              type: 'sluice.secret.rotated',
              occurredAt: now,
              data: { previousSecretExpiresAt: new Date(expiresAt).toISOString() },
              key: `rotated:${current.id}:${now}`,
            },
          ]
        : [];
      const updated = await store.updateDestination(current.id, { secrets }, now, notices);
      if (!updated) throw notFound('destination', current.id);
      await dispatcher.destinationChanged(updated.id);
      if (notices.length > 0)
        await wakeSubscribers(ctx, updated.tenantId, updated.id, 'sluice.secret.rotated');
      return { secret, previousSecretExpiresAt: previous ? new Date(expiresAt).toISOString() : null };
    },
  );

  app.post(
    '/v1/destinations/:id/replay',
    {
      config: { auth: 'tenant' },
      schema: {
        tags,
        summary: 'Put dead deliveries back to pending, with a fresh attempt budget',
        params: IdParams('dst'),
        querystring: TenantQuery,
        body: Replay,
        response: { 202: Count, ...errorResponses(404, 413) },
      },
    },
    async (request, reply) => {
      const destination = await ownedDestination(ctx, request);
      const since = request.body.since === undefined ? null : Date.parse(request.body.since);
      const count = await store.replayDead(destination.id, since, clock());
      if (count > 0) dispatcher.wake(destination.id);
      return reply.status(202).send({ count });
    },
  );

  app.get(
    '/v1/destinations/:id/stats',
    {
      config: { auth: 'tenant' },
      schema: {
        tags,
        summary: 'Backlog, outcomes and the compliance audit over the last `seconds`',
        params: IdParams('dst'),
        querystring: StatsQuery,
        response: { 200: Stats, ...errorResponses(404) },
      },
    },
    async (request) => {
      const destination = await ownedDestination(ctx, request);
      const { seconds } = request.query;
      const now = clock();
      const spanStart = now - seconds * 1_000;
      const counts = await store.countsFor(destination.id, spanStart, now);
      const times = await store.attemptTimes(destination.id, spanStart, now + 1);
      const changes = await store.rateLimitChanges(destination.id, spanStart, now + 1);
      const runtime = await dispatcher.runtimeStats(destination.id);
      const windowMs = Math.min(PERIOD_MS[destination.rateLimit.period], seconds * 1_000);
      const firstSecond = Math.floor(spanStart / 1_000) * 1_000;
      const buckets = Math.ceil((now + 1 - firstSecond) / 1_000);
      return {
        rateLimit: destination.rateLimit,
        state: destination.state,
        pending: counts.pending,
        queued: runtime.queued,
        inFlight: runtime.inFlight,
        oldestPendingAgeMs: counts.oldestPendingAt === null ? 0 : Math.max(0, now - counts.oldestPendingAt),
        delivered: counts.delivered,
        dead: counts.dead,
        maxSentInAnyWindow: maxInAnyWindow(times, windowMs),
        bucketRefusals:
          destination.rateLimit.burst === undefined
            ? null
            : bucketRefusals(
                times,
                destination.rateLimit.limit,
                PERIOD_MS[destination.rateLimit.period],
                destination.rateLimit.burst,
              ),
        effectiveLimit: runtime.effectiveLimit,
        backingOff: runtime.backingOff,
        perSecond: perSecond(times, firstSecond, buckets).map((sent, i) => ({
          t: new Date(firstSecond + i * 1_000).toISOString(),
          sent,
        })),
        limitChanges: changes.map((c) => ({ at: new Date(c.at).toISOString(), from: c.from, to: c.to })),
      };
    },
  );
}
