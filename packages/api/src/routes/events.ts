import { matchesEventType } from '@sluice/core';
import type { NewEvent } from '@sluice/engine';
import type { FastifyInstance } from 'fastify';
import type { ApiContext } from '../context.ts';
import { ApiError } from '../errors.ts';
import { type EventInput, eventSchema } from '../schemas.ts';
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

  app.post('/v1/events', async (request, reply) => {
    const { tenantId } = await auth.tenantOf(request);
    const input = parse(eventSchema, request.body);
    if (tenantId === undefined) {
      throw new ApiError(400, 'validation_failed', 'the admin token must name the tenant: ?tenantId=', [
        { path: 'tenantId', message: 'required with the admin token' },
      ]);
    }
    const event = await prepare(tenantId, input);
    const [result] = await store.acceptEvents(tenantId, [event], clock());
    if (!result) throw new Error('store accepted no event');
    // Committed: only now wake the destinations (DESIGN flow 1).
    for (const { destinationId } of result.event.deliveries) dispatcher.wake(destinationId);
    return reply.status(202).send(result.event);
  });
}
