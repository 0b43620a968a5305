import { matchesEventType, matchesFilter } from '@sluice/core';
import type { AcceptOptions, Destination, NewEvent } from '@sluice/store';
import type { FastifyReply } from 'fastify';
import type { z } from 'zod';
import { narrowedTo } from '../auth.ts';
import { BulkLane, LIGHT_EVENTS } from '../bulk-lane.ts';
import { type ApiContext, ApiError, type App, errorResponses } from '../context.ts';
import {
  AcceptedEvent,
  AcceptedEventBatch,
  Event,
  IdParams,
  NewEventBatch,
  NewEvent as NewEventBody,
  TenantQuery,
} from '../contract.ts';
import { payloadDepthLimit } from '../depth.ts';
import { notFound } from '../errors.ts';
import { visibleDeliveries } from '../narrowed.ts';
import { presentEvent } from '../present.ts';

const tags = ['events'];

/**
 * Within the tenant's quotas (quota.ts: a request past them is refused whole), one
 * transaction for all the events; after commit, wake their destinations (docs/design.md,
 * flow 1) — where the dispatcher can, begun while the transaction commits (`wakeAhead`).
 * The test event (test-event.ts) goes the same way.
 */
export async function acceptEvents(
  { quotas, store, clock, dispatcher }: ApiContext,
  tenantId: string,
  events: NewEvent[],
  reply: FastifyReply,
  options?: AcceptOptions,
) {
  const withDeliveries = events.filter((e) => e.destinationIds.length > 0).length;
  const admitted = await quotas.admit(tenantId, events.length, withDeliveries, reply);
  const ahead = dispatcher.wakeAhead?.(new Set(events.flatMap((e) => e.destinationIds)));
  let results: Awaited<ReturnType<typeof store.acceptEvents>>;
  try {
    results = await store.acceptEvents(tenantId, events, clock(), options);
  } catch (err) {
    admitted(false);
    ahead?.(null);
    throw err;
  }
  admitted(true);
  const woken = new Set<string>();
  for (const { event } of results) for (const { destinationId } of event.deliveries) woken.add(destinationId);
  if (ahead) ahead(woken);
  else for (const destinationId of woken) dispatcher.wake(destinationId);
  return results.map((r) => r.event);
}

export function eventRoutes(app: App, ctx: ApiContext): void {
  const { store, dispatcher, auth, config, catalog } = ctx;
  const bulk = new BulkLane();
  const preValidation = payloadDepthLimit(config.maxPayloadDepth);

  /**
   * Checks the event against the catalog (event-catalog.ts), serializes the payload once and
   * resolves the destinations the event goes to; `all` remembers, across one request, the
   * tenant's destinations and the ids already checked. `index`: the event's in a batch.
   */
  const prepare = async (
    tenantId: string,
    input: z.infer<typeof NewEventBody>,
    all: { list?: Promise<Destination[]>; checked?: Set<string> } = {},
    index?: number,
    exact?: unknown,
  ): Promise<NewEvent> => {
    await checkType(input, index);
    // As posted, numbers included, where one would not survive JavaScript (json-body.ts).
    const payload = JSON.stringify(exact === undefined ? input.payload : exact);
    if (Buffer.byteLength(payload) > config.maxPayloadBytes) {
      throw new ApiError(413, 'payload_too_large', `payload is larger than ${config.maxPayloadBytes} bytes`, {
        maxPayloadBytes: config.maxPayloadBytes,
      });
    }
    const named = input.destinationIds ?? (input.destinationId ? [input.destinationId] : undefined);
    let destinationIds: string[];
    if (named) {
      destinationIds = [...new Set(named)];
      all.checked ??= new Set();
      for (const id of destinationIds) {
        if (all.checked.has(id)) continue;
        const destination = await dispatcher.destination(id);
        if (!destination || destination.tenantId !== tenantId) throw notFound('destination', id);
        all.checked.add(id);
      }
    } else {
      all.list ??= store.listDestinations(tenantId);
      destinationIds = (await all.list)
        // Its filter too (docs/api.md "Filters"): an event it filters out makes no delivery.
        .filter(
          (d) =>
            matchesEventType(d.eventTypes, input.type) &&
            matchesFilter(d.filter, { type: input.type, payload: input.payload }),
        )
        .map((d) => d.id);
    }
    return { type: input.type, payload, idempotencyKey: input.idempotencyKey ?? null, destinationIds };
  };

  /**
   * A `sluice.…` type is refused (Sluice's own), an unknown one in strict mode, and a payload
   * that fails its type's schema, with each failing path as a JSON Pointer from the body's root.
   */
  const checkType = async (input: z.infer<typeof NewEventBody>, index: number | undefined) => {
    const at = index === undefined ? '' : `/events/${index}`;
    const check = await catalog.check(input.type, input.payload, `${at}/payload`);
    if (check.ok) return;
    const dotted = index === undefined ? 'type' : `events.${index}.type`;
    const where = index === undefined ? {} : { index };
    switch (check.reason) {
      case 'reserved':
        throw new ApiError(400, 'validation_failed', `${dotted}: sluice.… types are Sluice's own`, [
          {
            path: dotted,
            message: "sluice.… types are Sluice's own: an event cannot be posted with one",
            ...where,
          },
        ]);
      case 'unknown':
        throw new ApiError(
          400,
          'unknown_event_type',
          `${dotted}: ${input.type} is not in the event-type catalog`,
          {
            type: input.type,
            ...where,
          },
        );
      case 'schema': {
        const first = check.issues[0];
        const field = index === undefined ? 'payload' : `events.${index}.payload`;
        throw new ApiError(
          400,
          'validation_failed',
          `${field}: does not satisfy the schema of ${input.type} (${first?.path}: ${first?.message})`,
          check.issues.map((issue) => ({ ...issue, ...where })),
        );
      }
    }
  };

  const accept = (tenantId: string, events: NewEvent[], reply: FastifyReply, options?: AcceptOptions) =>
    acceptEvents(ctx, tenantId, events, reply, options);

  app.post(
    '/v1/events',
    {
      // A portal link's customer sends test events only (POST /v1/destinations/:id/test).
      config: { auth: 'tenant', portal: 'never' },
      preValidation,
      schema: {
        tags,
        summary: 'Accept an event for its destinations (named, or all whose eventTypes match)',
        description:
          "Durable before the answer. The same idempotencyKey again returns the first answer. Past the tenant's quota: 429 rate_limited with Retry-After, nothing accepted.",
        querystring: TenantQuery,
        body: NewEventBody,
        response: { 202: AcceptedEvent, ...errorResponses(404, 413, 429) },
      },
    },
    async (request, reply) => {
      const tenantId = await auth.tenantFor(request, request.query.tenantId);
      bulk.noteLight();
      const exact = (request.exactBody as { payload?: unknown } | undefined)?.payload;
      const [event] = await accept(
        tenantId,
        [await prepare(tenantId, request.body, {}, undefined, exact)],
        reply,
      );
      if (event === undefined) throw new Error('the store accepted no event');
      return reply.status(202).send(event);
    },
  );

  app.post(
    '/v1/events/batch',
    {
      config: { auth: 'tenant', portal: 'never' },
      preValidation,
      schema: {
        tags,
        summary: 'Accept up to 1,000 events in one transaction: all or nothing',
        description: "A batch past the tenant's quota is refused whole: 429 rate_limited with Retry-After.",
        querystring: TenantQuery,
        body: NewEventBatch,
        response: { 202: AcceptedEventBatch, ...errorResponses(404, 413, 429) },
      },
    },
    async (request, reply) => {
      const tenantId = await auth.tenantFor(request, request.query.tenantId);
      const inputs = request.body.events;
      const heavy = inputs.length > LIGHT_EVENTS;
      if (!heavy) bulk.noteLight();
      const leave = heavy ? await bulk.enter(tenantId) : undefined;
      try {
        // While others post, the batch goes into the store in slices, their writes between.
        const options = { slices: heavy && bulk.othersActive() };
        const exact = (request.exactBody as { events?: { payload?: unknown }[] } | undefined)?.events;
        return reply.status(202).send({ data: await acceptBatch(tenantId, inputs, reply, options, exact) });
      } finally {
        leave?.();
      }
    },
  );

  const acceptBatch = async (
    tenantId: string,
    inputs: z.infer<typeof NewEventBatch>['events'],
    reply: FastifyReply,
    options: AcceptOptions,
    exact?: { payload?: unknown }[],
  ) => {
    const events: NewEvent[] = [];
    const all = {};
    for (const [index, input] of inputs.entries()) {
      try {
        events.push(await prepare(tenantId, input, all, index, exact?.[index]?.payload));
      } catch (err) {
        if (!(err instanceof ApiError)) throw err;
        // The catalog's errors name the event's paths and index already.
        if (err.code === 'validation_failed' || err.code === 'unknown_event_type') throw err;
        throw new ApiError(err.status, err.code, `events.${index}: ${err.message}`, {
          index,
          cause: err.details,
        });
      }
    }
    return accept(tenantId, events, reply, options);
  };

  app.get(
    '/v1/events/:id',
    {
      config: { auth: 'tenant' },
      schema: {
        tags,
        summary: 'An event with its deliveries',
        params: IdParams('evt'),
        querystring: TenantQuery,
        response: { 200: Event, ...errorResponses(404) },
      },
    },
    async (request) => {
      const found = await store.getEvent(request.params.id);
      if (!found || !(await auth.canAccess(request, found.event.tenantId)))
        throw notFound('event', request.params.id);
      // A narrowed portal link sees an event that went to one of its destinations, with those deliveries.
      const deliveries = visibleDeliveries(request, found.deliveries);
      if (narrowedTo(request) !== undefined && deliveries.length === 0)
        throw notFound('event', request.params.id);
      return presentEvent(found.event, deliveries);
    },
  );
}
