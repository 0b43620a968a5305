/**
 * The event-type catalog's part of the contract (docs/api.md "Event-type catalog"), beside
 * contract.ts: the requests and answers of `/v1/event-types`.
 */

import { catalogNameProblem, MAX_EVENT_TYPE_LENGTH } from '@sluice/core';
import { z } from 'zod';
import { patchOf } from './contract.ts';

const description = z
  .string()
  .min(1)
  .max(2_000)
  .refine((value) => !value.includes('\u0000'), 'must not contain NUL characters');

/** A JSON Schema: an object (compiled by the route, which names what is wrong in it). */
const schema = z.record(z.string(), z.unknown()).meta({
  description:
    'A JSON Schema (draft-07, with the formats of ajv-formats) that payloads of this type must satisfy.',
});

/** An example payload; null: none. */
const example = z.unknown().meta({ description: "An example payload: satisfies the type's schema." });

const CatalogName = z
  .string()
  .superRefine((name, ctx) => {
    const problem = catalogNameProblem(name);
    if (problem !== null) ctx.addIssue({ code: 'custom', message: problem });
  })
  .meta({
    description: `Dotted words of [A-Za-z0-9_-], at most ${MAX_EVENT_TYPE_LENGTH} characters, no wildcard; sluice.… is reserved.`,
  });

export const CreateEventType = z
  .strictObject({ name: CatalogName, description, schema: schema.optional(), example: example.optional() })
  .meta({ id: 'CreateEventType' });

export const PatchEventType = patchOf(
  z.strictObject({
    description: description.optional(),
    schema: schema.nullable().optional().meta({ description: 'null removes the schema.' }),
    example: example.optional().meta({ description: 'null removes the example.' }),
  }),
).meta({ id: 'PatchEventType' });

export const EventTypeParams = z.strictObject({ name: z.string().min(1).max(MAX_EVENT_TYPE_LENGTH) });

export const EventTypeListQuery = z.strictObject({
  limit: z.coerce.number().int().min(1).max(500).default(50),
  cursor: z.string().min(1).max(400).optional(),
});

export const EventType = z
  .object({
    name: z.string(),
    description: z.string(),
    schema: z.record(z.string(), z.unknown()).nullable(),
    example: z.unknown().optional(),
    builtIn: z.boolean().meta({ description: "Sluice's own type (sluice.…): read-only." }),
    createdAt: z.iso.datetime().nullable().meta({ description: 'null for a built-in type.' }),
    updatedAt: z.iso.datetime().nullable(),
  })
  .meta({ id: 'EventType' });

export const EventTypeList = z
  .object({ data: z.array(EventType), nextCursor: z.string().nullable() })
  .meta({ id: 'EventTypeList' });
