/**
 * The contract of tenants' lifecycle and the event log (docs/api.md "Tenants' lifecycle and
 * the event log"): a tenant's API keys and the listing of its events, as zod schemas beside
 * contract.ts (which they extend).
 */

import { EVENT_TYPE_PATTERN } from '@sluice/core';
import { z } from 'zod';
import { idOf, ListQuery } from './contract.ts';

const isoTime = z.iso.datetime();

export const TenantKey = z
  .object({
    id: z.string(),
    prefix: z.string().nullable().meta({
      description:
        "The key's first characters, to tell keys apart; null for a key made before they were kept.",
    }),
    createdAt: isoTime,
    lastUsedAt: isoTime
      .nullable()
      .meta({ description: 'When a request last used it, to within a minute; null: never.' }),
  })
  .meta({ id: 'TenantKey' });

export const TenantKeyList = z.object({ data: z.array(TenantKey) }).meta({ id: 'TenantKeyList' });

export const CreatedKey = z
  .object({
    id: z.string(),
    apiKey: z.string().meta({ description: 'Shown once; stored only as a hash.' }),
  })
  .meta({ id: 'CreatedKey' });

/** The body of a key's creation: none, or an empty object (room for a name later). */
export const CreateKey = z.strictObject({}).nullish();

export const KeyParams = z.strictObject({ id: idOf('ten'), keyId: idOf('key') });

export const EventLogQuery = ListQuery.extend({
  type: z
    .string()
    .min(1)
    .max(200)
    .regex(EVENT_TYPE_PATTERN, 'must be a type, `prefix.*` or `*`')
    .optional()
    .meta({ description: 'A type, or `prefix.*`: the types that start with `prefix.`; `*`: all.' }),
  destinationId: idOf('dst').optional().meta({ description: 'Only events with a delivery to it.' }),
  since: isoTime.optional().meta({ description: 'Only events accepted at or after this time.' }),
  until: isoTime.optional().meta({ description: 'Only events accepted at or before this time.' }),
});

export const LoggedEvent = z
  .object({
    id: z.string(),
    type: z.string(),
    payloadBytes: z.int().meta({
      description: 'The size of its payload in bytes (the JSON a destination receives, UTF-8).',
    }),
    idempotencyKey: z.string().nullable(),
    createdAt: isoTime,
  })
  .meta({
    id: 'LoggedEvent',
    description:
      'An event as the event log lists it: without its payload and its deliveries (GET /v1/events/:id has both).',
  });
