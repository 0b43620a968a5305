import type { DeliveryStatus } from '@sluice/core';
import type { FastifyRequest } from 'fastify';
import { narrowedTo } from '../auth.ts';
import {
  type ApiContext,
  ApiError,
  type App,
  decodeCursor,
  encodeCursor,
  errorResponses,
} from '../context.ts';
import { Delivery, DeliveryQuery, DeliveryWithAttempts, IdParams, listOf, TenantQuery } from '../contract.ts';
import { notFound } from '../errors.ts';
import { presentDelivery, presentDeliveryWithAttempts } from '../present.ts';

const tags = ['deliveries'];

export function deliveryRoutes(app: App, ctx: ApiContext): void {
  const { store, dispatcher, auth, clock } = ctx;
  /** Whether the request may see the delivery: its tenant's, and a narrowed portal link's destinations'. */
  const visible = async (request: FastifyRequest, delivery: { tenantId: string; destinationId: string }) =>
    (await auth.canAccess(request, delivery.tenantId)) &&
    auth.seesDestination(request, delivery.destinationId);

  app.get(
    '/v1/deliveries',
    {
      config: { auth: 'tenant' },
      schema: {
        tags,
        summary: 'List deliveries, newest first, by destination, event, status or last change',
        querystring: DeliveryQuery,
        response: { 200: listOf(Delivery), ...errorResponses(404) },
      },
    },
    async (request) => {
      const { limit, cursor, tenantId, destinationId, eventId, status, since } = request.query;
      const scope = await auth.scope(request, tenantId);
      const page = await store.listDeliveries(
        {
          tenantId: scope,
          destinationId,
          destinationIds: narrowedTo(request),
          eventId,
          status: status as DeliveryStatus | undefined,
          changedSince: since === undefined ? undefined : Date.parse(since),
        },
        { limit, after: decodeCursor(cursor, 'dlv') },
      );
      return { data: page.items.map((d) => presentDelivery(d)), nextCursor: encodeCursor(page.next) };
    },
  );

  app.get(
    '/v1/deliveries/:id',
    {
      config: { auth: 'tenant' },
      schema: {
        tags,
        summary: 'A delivery with its attempts',
        params: IdParams('dlv'),
        querystring: TenantQuery,
        response: { 200: DeliveryWithAttempts, ...errorResponses(404) },
      },
    },
    async (request) => {
      const found = await store.getDelivery(request.params.id);
      if (!found || !(await visible(request, found.delivery))) throw notFound('delivery', request.params.id);
      return presentDeliveryWithAttempts(found.delivery, found.attempts);
    },
  );

  app.post(
    '/v1/deliveries/:id/retry',
    {
      config: { auth: 'tenant' },
      schema: {
        tags,
        summary: 'Attempt a dead or pending delivery now, with a fresh attempt budget',
        params: IdParams('dlv'),
        querystring: TenantQuery,
        response: { 202: Delivery, ...errorResponses(404, 409) },
      },
    },
    async (request, reply) => {
      const found = await store.getDelivery(request.params.id);
      if (!found || !(await visible(request, found.delivery))) throw notFound('delivery', request.params.id);
      const result = await store.retryDelivery(found.delivery.id, clock());
      if (!result.ok && result.reason === 'not_found') throw notFound('delivery', found.delivery.id);
      if (!result.ok) {
        throw new ApiError(409, 'conflict', `a ${found.delivery.status} delivery cannot be retried`, {
          status: found.delivery.status,
        });
      }
      dispatcher.wake(result.delivery.destinationId);
      return reply.status(202).send(presentDelivery(result.delivery));
    },
  );
}
