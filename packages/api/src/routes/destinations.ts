import {
  DEFAULT_RETRY_POLICY,
  generateSecret,
  maxInAnyWindow,
  newId,
  PERIOD_MS,
  perSecond,
} from '@sluice/core';
import { checkUrlHost, type Destination, type DestinationPatch } from '@sluice/engine';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { canSee } from '../auth.ts';
import type { ApiContext } from '../context.ts';
import { ApiError, notFound } from '../errors.ts';
import { presentDestination } from '../present.ts';
import { createDestinationSchema, idParams, patchDestinationSchema, statsQuerySchema } from '../schemas.ts';
import { parse } from '../validate.ts';

export const DEFAULT_TIMEOUT_MS = 15_000;

export function destinationRoutes(app: FastifyInstance, ctx: ApiContext): void {
  const { store, dispatcher, auth, config, clock } = ctx;

  const checkUrl = (url: string): void => {
    const refused = checkUrlHost(new URL(url), config.allowPrivateNetworks);
    if (refused) throw new ApiError(400, 'destination_not_allowed', refused.message, { url });
  };

  /** The destination named in the path, if the caller may see it; 404 otherwise. */
  const owned = async (request: FastifyRequest): Promise<Destination> => {
    const { id } = parse(idParams('dst'), request.params);
    const principal = await auth.authenticate(request);
    const destination = await store.getDestination(id);
    if (!destination || !canSee(principal, destination.tenantId)) throw notFound('destination', id);
    return destination;
  };

  app.post('/v1/destinations', async (request, reply) => {
    const { tenantId } = await auth.tenantOf(request);
    const input = parse(createDestinationSchema, request.body);
    if (tenantId === undefined) {
      throw new ApiError(400, 'validation_failed', 'the admin token must name the tenant: ?tenantId=', [
        { path: 'tenantId', message: 'required with the admin token' },
      ]);
    }
    checkUrl(input.url);
    const destination = await store.createDestination(
      {
        id: newId('dst'),
        tenantId,
        name: input.name ?? null,
        url: input.url,
        rateLimit: input.rateLimit,
        maxConcurrency: input.maxConcurrency ?? null,
        eventTypes: input.eventTypes ?? ['*'],
        retry: input.retry ?? { ...DEFAULT_RETRY_POLICY },
        timeoutMs: input.timeoutMs ?? DEFAULT_TIMEOUT_MS,
        secrets: [{ secret: input.secret ?? generateSecret(), expiresAt: null }],
      },
      clock(),
    );
    return reply.status(201).send(presentDestination(destination, { withSecret: true }));
  });

  app.get('/v1/destinations/:id', async (request) => presentDestination(await owned(request)));

  app.patch('/v1/destinations/:id', async (request) => {
    const current = await owned(request);
    const { secret, ...fields } = parse(patchDestinationSchema, request.body);
    if (fields.url !== undefined) checkUrl(fields.url);
    const patch: DestinationPatch = { ...fields };
    if (secret !== undefined) patch.secrets = [{ secret, expiresAt: null }];
    const updated = await store.updateDestination(current.id, patch, clock());
    if (!updated) throw notFound('destination', current.id);
    await dispatcher.destinationChanged(updated.id);
    return presentDestination(updated);
  });

  app.delete('/v1/destinations/:id', async (request, reply) => {
    const current = await owned(request);
    await store.deleteDestination(current.id, clock());
    await dispatcher.destinationChanged(current.id);
    return reply.status(204).send();
  });

  const setState = (state: 'active' | 'paused') => async (request: FastifyRequest) => {
    const current = await owned(request);
    const updated = await store.updateDestination(current.id, { state, disabledReason: null }, clock());
    if (!updated) throw notFound('destination', current.id);
    await dispatcher.destinationChanged(updated.id);
    return presentDestination(updated);
  };
  app.post('/v1/destinations/:id/pause', setState('paused'));
  app.post('/v1/destinations/:id/resume', setState('active'));

  app.get('/v1/destinations/:id/stats', async (request) => {
    const destination = await owned(request);
    const { seconds } = parse(statsQuerySchema, request.query);
    const now = clock();
    const spanStart = now - seconds * 1_000;
    const counts = await store.countsFor(destination.id, spanStart, now);
    const times = await store.attemptTimes(destination.id, spanStart, now + 1);
    const runtime = dispatcher.runtimeStats(destination.id);
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
      perSecond: perSecond(times, firstSecond, buckets).map((sent, i) => ({
        t: new Date(firstSecond + i * 1_000).toISOString(),
        sent,
      })),
    };
  });
}
