import { matchesEventType } from '@sluice/core';
import type { NewEvent } from '@sluice/engine';
import type { FastifyInstance } from 'fastify';
import type { ApiContext } from '../context.ts';
import { ApiError } from '../errors.ts';
import { batchSchema, type EventInput, eventSchema } from '../schemas.ts';
import { parse } from '../validate.ts';

export function eventRoutes(app: FastifyInstance, ctx: ApiContext): void {
  const { store, dispatcher, auth, config, clock } = ctx;

  /** Serializes the payload once and resolves the destinations the event goes to. */
  const prepare = async (tenantId: string, input: EventInput): Promise<NewEvent> => {
    const payload = JSON.stringify(input.payload);
    if (Buffer.byteLength(payload) > config.maxPayloadBytes) {
      throw new ApiError(413, 'payload_too_large', `payload is larger than ${config.maxPayloadBytes} bytes`, {
        maxPayloadBytes: config.maxPayloadBytes,
      });
    }
    const named = input.destinationIds ?? (input.destinationId ? [input.destinationId] : undefined);
    let destinationIds: string[];
    if (named) {
      destinationIds = [...new Set(named)];
      for (const id of destinationIds) {
        const destination = await store.getDestination(id);
        if (!destination || destination.tenantId !== tenantId) {
          throw new ApiError(404, 'not_found', 'destination not found', { id });
        }
      }
    } else {
      destinationIds = (await store.listDestinations(tenantId))
        .filter((d) => matchesEventType(d.eventTypes, input.type))
        .map((d) => d.id);
    }
    return { type: input.type, payload, idempotencyKey: input.idempotencyKey ?? null, destinationIds };
  };

  const tenantFor = async (request: Parameters<typeof auth.tenantOf>[0]): Promise<string> => {
    const { tenantId } = await auth.tenantOf(request);
    if (tenantId === undefined) {
      throw new ApiError(400, 'validation_failed', 'the admin token must name the tenant: ?tenantId=', [
        { path: 'tenantId', message: 'required with the admin token' },
      ]);
    }
    return tenantId;
  };

  /** One transaction for all the events; after commit, wake their destinations (DESIGN flow 1). */
  const accept = async (tenantId: string, events: NewEvent[]) => {
    const results = await store.acceptEvents(tenantId, events, clock());
    const woken = new Set<string>();
    for (const { event } of results)
      for (const { destinationId } of event.deliveries) woken.add(destinationId);
    for (const destinationId of woken) dispatcher.wake(destinationId);
    return results.map((r) => r.event);
  };

  app.post('/v1/events', async (request, reply) => {
    const tenantId = await tenantFor(request);
    const input = parse(eventSchema, request.body);
    const [event] = await accept(tenantId, [await prepare(tenantId, input)]);
    return reply.status(202).send(event);
  });

  app.post('/v1/events/batch', async (request, reply) => {
    const tenantId = await tenantFor(request);
    const { events: inputs } = parse(batchSchema, request.body);
    const events: NewEvent[] = [];
    for (const [index, input] of inputs.entries()) {
      try {
        events.push(await prepare(tenantId, input));
      } catch (err) {
        if (err instanceof ApiError) {
          throw new ApiError(err.status, err.code, `events.${index}: ${err.message}`, {
            index,
            ...asObject(err.details),
          });
        }
        throw err;
      }
    }
    return reply.status(202).send({ data: await accept(tenantId, events) });
  });
}

function asObject(details: unknown): Record<string, unknown> {
  if (details === null || details === undefined) return {};
  return typeof details === 'object' && !Array.isArray(details)
    ? (details as Record<string, unknown>)
    : { details };
}
