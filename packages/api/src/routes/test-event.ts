/**
 * `POST /v1/destinations/:id/test` (docs/api.md "Test event"): an event sent to that
 * destination only, whatever its `eventTypes` (it is named, as `destinationId` names one in
 * `POST /v1/events`), accepted, paced by the limiter, signed and retried like any other, and
 * counted in the tenant's quotas. Its type is `sluice.test` unless another is given; a
 * built-in `sluice.…` type may be tried here too (a tenant cannot post those on
 * `/v1/events`). Without a payload: a built-in type's catalog example with this
 * destination's ids and the time now; another type's catalog example; else `{"test": true}`.
 * A payload given, or the one chosen, must satisfy the type's schema.
 */

import { builtInEventType, isReservedType } from '@sluice/core';
import type { ValidateFunction } from 'ajv';
import { type ApiContext, ApiError, type App, errorResponses } from '../context.ts';
import { AcceptedEvent, IdParams, TenantQuery } from '../contract.ts';
import { TestEvent } from '../contract-portal.ts';
import { payloadDepthLimit } from '../depth.ts';
import { compileSchema, type SchemaIssue, schemaIssues } from '../event-catalog.ts';
import { ownedDestination, tags } from './destinations.ts';
import { acceptEvents } from './events.ts';

export const TEST_TYPE = 'sluice.test';

/** The built-in types' schemas, compiled once per process when first used. */
const builtInSchemas = new Map<string, ValidateFunction>();

function builtInIssues(type: string, payload: unknown): SchemaIssue[] {
  const definition = builtInEventType(type);
  if (definition?.schema == null) return [];
  let validate = builtInSchemas.get(type);
  if (validate === undefined) {
    validate = compileSchema(definition.schema);
    builtInSchemas.set(type, validate);
  }
  return schemaIssues(validate, payload, '/payload');
}

const schemaError = (type: string, issues: SchemaIssue[]) =>
  new ApiError(
    400,
    'validation_failed',
    `payload: does not satisfy the schema of ${type} (${issues[0]?.path}: ${issues[0]?.message})`,
    issues,
  );

export function testEventRoutes(app: App, ctx: ApiContext): void {
  const { store, config, clock, catalog } = ctx;

  app.post(
    '/v1/destinations/:id/test',
    {
      config: { auth: 'tenant' },
      preValidation: payloadDepthLimit(config.maxPayloadDepth),
      schema: {
        tags,
        summary: 'Send a test event to this destination only, through its limiter like any event',
        description:
          'The type defaults to `sluice.test`; without a payload, the type’s catalog example (a built-in type’s with this destination’s ids), else `{"test": true}`. The payload must satisfy the type’s schema.',
        params: IdParams('dst'),
        querystring: TenantQuery,
        body: TestEvent,
        response: { 202: AcceptedEvent, ...errorResponses(404, 413, 429) },
      },
    },
    async (request, reply) => {
      const destination = await ownedDestination(ctx, request);
      const type = request.body?.type ?? TEST_TYPE;
      const given = request.body?.payload !== undefined;
      let payload: unknown = request.body?.payload;
      const builtIn = builtInEventType(type);
      if (builtIn !== undefined) {
        if (!given) {
          payload = {
            ...(builtIn.example as Record<string, unknown>),
            tenantId: destination.tenantId,
            destinationId: destination.id,
            occurredAt: new Date(clock()).toISOString(),
          };
        }
        const issues = builtInIssues(type, payload);
        if (issues.length > 0) throw schemaError(type, issues);
      } else if (isReservedType(type)) {
        throw new ApiError(400, 'validation_failed', `type: ${type} is not one of Sluice's built-in types`, [
          { path: 'type', message: "not one of Sluice's built-in types (GET /v1/event-types lists them)" },
        ]);
      } else {
        if (!given) {
          const stored = await store.getEventType(type);
          payload = stored?.example !== undefined ? stored.example : { test: true };
        }
        const check = await catalog.check(type, payload, '/payload');
        if (!check.ok && check.reason === 'unknown')
          throw new ApiError(400, 'unknown_event_type', `type: ${type} is not in the event-type catalog`, {
            type,
          });
        if (!check.ok && check.reason === 'schema') throw schemaError(type, check.issues);
      }
      const text = JSON.stringify(payload);
      if (Buffer.byteLength(text) > config.maxPayloadBytes) {
        throw new ApiError(
          413,
          'payload_too_large',
          `payload is larger than ${config.maxPayloadBytes} bytes`,
          {
            maxPayloadBytes: config.maxPayloadBytes,
          },
        );
      }
      const [event] = await acceptEvents(
        ctx,
        destination.tenantId,
        [{ type, payload: text, idempotencyKey: null, destinationIds: [destination.id] }],
        reply,
      );
      if (event === undefined) throw new Error('the store accepted no event');
      return reply.status(202).send(event);
    },
  );
}
