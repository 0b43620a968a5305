/**
 * The event-type catalog (docs/api.md "Event-type catalog"): the operator's types, created,
 * changed and deleted with the admin token, listed and read with any token, Sluice's own
 * `sluice.…` types included (read-only: a change or a delete of one is `409 conflict`).
 */

import { BUILT_IN_EVENT_TYPES, builtInEventType, type EventTypeDefinition } from '@sluice/core';
import type { EventTypeFields, EventType as StoredType } from '@sluice/store';
import { z } from 'zod';
import { type ApiContext, ApiError, type App, encodeCursor, errorResponses } from '../context.ts';
import { NoQuery } from '../contract.ts';
import {
  CreateEventType,
  EventType,
  EventTypeList,
  EventTypeListQuery,
  EventTypeParams,
  PatchEventType,
} from '../contract-event-types.ts';
import { notFound } from '../errors.ts';
import { compileSchema, schemaIssues } from '../event-catalog.ts';

const tags = ['event types'];
const BUILT_INS = [...BUILT_IN_EVENT_TYPES].sort((a, b) => (a.name < b.name ? -1 : 1));

function presentStored(t: StoredType): z.infer<typeof EventType> {
  return {
    name: t.name,
    description: t.description,
    schema: t.schema,
    ...(t.example === undefined ? {} : { example: t.example }),
    builtIn: false,
    createdAt: new Date(t.createdAt).toISOString(),
    updatedAt: new Date(t.updatedAt).toISOString(),
  };
}

function presentBuiltIn(t: EventTypeDefinition): z.infer<typeof EventType> {
  return { ...t, builtIn: true, createdAt: null, updatedAt: null };
}

/** A cursor of this list: the last name of the page, base64url. */
function decodeNameCursor(cursor: string | undefined): string | undefined {
  if (cursor === undefined) return undefined;
  const name = Buffer.from(cursor, 'base64url').toString('utf8');
  if (!/^[A-Za-z0-9_.-]{1,200}$/.test(name)) {
    throw new ApiError(400, 'validation_failed', 'query.cursor: not a cursor of this list', [
      { path: 'query.cursor', message: 'not a cursor of this list' },
    ]);
  }
  return name;
}

/** The fields are a type's whole: its schema compiles, and its example (if any) satisfies it. */
function checkFields(fields: EventTypeFields): void {
  if (fields.schema === null) return;
  const validate = compileSchema(fields.schema);
  if (fields.example === undefined) return;
  const issues = schemaIssues(validate, fields.example, '/example');
  if (issues.length > 0)
    throw new ApiError(
      400,
      'validation_failed',
      `example: does not satisfy the schema (${issues[0]?.message})`,
      issues,
    );
}

const builtInConflict = (name: string): ApiError =>
  new ApiError(
    409,
    'conflict',
    `${name} is one of Sluice's built-in event types: it cannot be changed or deleted`,
    {
      name,
      builtIn: true,
    },
  );

export function eventTypeRoutes(app: App, { store, clock, catalog }: ApiContext): void {
  app.post(
    '/v1/event-types',
    {
      config: { auth: 'admin' },
      schema: {
        tags,
        summary: 'Add a type to the catalog',
        description:
          'An event of a type with a schema is validated at ingest. The schema must be a valid JSON Schema and the example must satisfy it (else 400 validation_failed); a name taken: 409 conflict.',
        querystring: NoQuery,
        body: CreateEventType,
        response: { 201: EventType, ...errorResponses(403, 409, 413) },
      },
    },
    async (request, reply) => {
      const { name, description, schema, example } = request.body;
      const fields: EventTypeFields = {
        description,
        schema: schema ?? null,
        ...(example === undefined || example === null ? {} : { example }),
      };
      checkFields(fields);
      const created = await store.createEventType(name, fields, clock());
      if (created === undefined) throw new ApiError(409, 'conflict', `event type ${name} exists`, { name });
      catalog.forget(name);
      return reply.status(201).send(presentStored(created));
    },
  );

  app.get(
    '/v1/event-types',
    {
      config: { auth: 'tenant' },
      schema: {
        tags,
        summary: "The catalog by name, Sluice's own sluice.… types included",
        querystring: EventTypeListQuery,
        response: { 200: EventTypeList, ...errorResponses() },
      },
    },
    async (request) => {
      const { limit, cursor } = request.query;
      const after = decodeNameCursor(cursor);
      const page = await store.listEventTypes({ limit, after });
      const builtIns = BUILT_INS.filter((t) => after === undefined || t.name > after);
      const merged = [...page.items.map(presentStored), ...builtIns.map(presentBuiltIn)].sort((a, b) =>
        a.name < b.name ? -1 : 1,
      );
      const data = merged.slice(0, limit);
      // More after this page: the store said so, or the built-ins did not all fit.
      const more = page.next !== null || merged.length > limit;
      return { data, nextCursor: more ? encodeCursor(data[data.length - 1]?.name ?? null) : null };
    },
  );

  app.get(
    '/v1/event-types/:name',
    {
      config: { auth: 'tenant' },
      schema: {
        tags,
        summary: 'A type of the catalog',
        params: EventTypeParams,
        querystring: NoQuery,
        response: { 200: EventType, ...errorResponses(404) },
      },
    },
    async (request) => {
      const { name } = request.params;
      const builtIn = builtInEventType(name);
      if (builtIn !== undefined) return presentBuiltIn(builtIn);
      const type = await store.getEventType(name);
      if (type === undefined) throw notFound('event type', name);
      return presentStored(type);
    },
  );

  app.patch(
    '/v1/event-types/:name',
    {
      config: { auth: 'admin' },
      schema: {
        tags,
        summary: "Change a type's description, schema or example",
        description:
          'Fields left out stay; null removes the schema or the example. The result must hold together (the example satisfies the schema). A built-in type: 409 conflict.',
        params: EventTypeParams,
        querystring: NoQuery,
        body: PatchEventType,
        response: { 200: EventType, ...errorResponses(403, 404, 409, 413) },
      },
    },
    async (request) => {
      const { name } = request.params;
      if (builtInEventType(name) !== undefined) throw builtInConflict(name);
      const type = await store.getEventType(name);
      if (type === undefined) throw notFound('event type', name);
      const patch = request.body;
      const example = patch.example === undefined ? type.example : patch.example;
      const fields: EventTypeFields = {
        description: patch.description ?? type.description,
        schema: patch.schema === undefined ? type.schema : patch.schema,
        ...(example === undefined || example === null ? {} : { example }),
      };
      checkFields(fields);
      const updated = await store.updateEventType(name, fields, clock());
      if (updated === undefined) throw notFound('event type', name);
      catalog.forget(name);
      return presentStored(updated);
    },
  );

  app.delete(
    '/v1/event-types/:name',
    {
      config: { auth: 'admin' },
      schema: {
        tags,
        summary: 'Remove a type from the catalog',
        description: 'Its events are then of an unknown type. A built-in type: 409 conflict.',
        params: EventTypeParams,
        querystring: NoQuery,
        response: { 204: z.null().meta({ description: 'Deleted' }), ...errorResponses(403, 404, 409) },
      },
    },
    async (request, reply) => {
      const { name } = request.params;
      if (builtInEventType(name) !== undefined) throw builtInConflict(name);
      if (!(await store.deleteEventType(name))) throw notFound('event type', name);
      catalog.forget(name);
      return reply.status(204).send(null);
    },
  );
}
