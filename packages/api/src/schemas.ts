/**
 * Request schemas (zod). Objects are strict: an unknown field is a 400, never ignored.
 * These are the one description of the API's input; the OpenAPI document is generated
 * from them.
 */

import { EVENT_TYPE_PATTERN, isValidSecret, PERIODS } from '@sluice/core';
import { z } from 'zod';

const id = (prefix: string) =>
  z.string().regex(new RegExp(`^${prefix}_[0-9a-z]{26}$`), `must be a ${prefix}_ id`);

export const httpUrl = z
  .string()
  .max(2_048)
  .refine((value) => {
    try {
      const url = new URL(value);
      return (
        (url.protocol === 'http:' || url.protocol === 'https:') && url.username === '' && url.password === ''
      );
    } catch {
      return false;
    }
  }, 'must be an http(s) URL without credentials');

export const rateLimitSchema = z.strictObject({
  limit: z.int().min(1).max(1_000_000),
  period: z.enum(PERIODS as [string, ...string[]]) as z.ZodType<'second' | 'minute' | 'hour'>,
});

export const retrySchema = z.strictObject({
  maxAttempts: z.int().min(1).max(50),
  initialDelayMs: z.int().min(0).max(86_400_000),
  maxDelayMs: z
    .int()
    .min(0)
    .max(7 * 86_400_000),
});

const eventTypePattern = z
  .string()
  .min(1)
  .max(200)
  .regex(EVENT_TYPE_PATTERN, 'must be a type, `prefix.*` or `*`');

const destinationFields = {
  name: z.string().min(1).max(200).nullable(),
  url: httpUrl,
  rateLimit: rateLimitSchema,
  maxConcurrency: z.int().min(1).max(10_000).nullable(),
  eventTypes: z.array(eventTypePattern).min(1).max(100),
  retry: retrySchema,
  timeoutMs: z.int().min(100).max(120_000),
  secret: z.string().refine(isValidSecret, 'must be whsec_ followed by a base64 key of 16 to 128 bytes'),
};

export const createDestinationSchema = z.strictObject({
  ...destinationFields,
  name: destinationFields.name.optional(),
  maxConcurrency: destinationFields.maxConcurrency.optional(),
  eventTypes: destinationFields.eventTypes.optional(),
  retry: destinationFields.retry.optional(),
  timeoutMs: destinationFields.timeoutMs.optional(),
  secret: destinationFields.secret.optional(),
});

export const patchDestinationSchema = z
  .strictObject({
    name: destinationFields.name.optional(),
    url: destinationFields.url.optional(),
    rateLimit: destinationFields.rateLimit.optional(),
    maxConcurrency: destinationFields.maxConcurrency.optional(),
    eventTypes: destinationFields.eventTypes.optional(),
    retry: destinationFields.retry.optional(),
    timeoutMs: destinationFields.timeoutMs.optional(),
    secret: destinationFields.secret.optional(),
  })
  .refine((patch) => Object.keys(patch).length > 0, 'at least one field');

export const eventSchema = z
  .strictObject({
    type: z.string().min(1).max(200).regex(EVENT_TYPE_PATTERN, 'must be a dotted event type'),
    payload: z.json(),
    destinationId: id('dst').optional(),
    destinationIds: z.array(id('dst')).min(1).max(100).optional(),
    idempotencyKey: z.string().min(1).max(255).optional(),
  })
  .refine((e) => e.payload !== undefined, { path: ['payload'], message: 'required' })
  .refine((e) => !(e.destinationId && e.destinationIds), {
    path: ['destinationIds'],
    message: 'give destinationId or destinationIds, not both',
  });

export const MAX_BATCH_EVENTS = 1_000;

export const batchSchema = z.strictObject({ events: z.array(eventSchema).min(1).max(MAX_BATCH_EVENTS) });

export const createTenantSchema = z.strictObject({ name: z.string().min(1).max(200) });

export const statsQuerySchema = z.strictObject({
  seconds: z.coerce.number().int().min(1).max(86_400).default(300),
});

export const idParams = (prefix: string) => z.strictObject({ id: id(prefix) });

export type CreateDestination = z.infer<typeof createDestinationSchema>;
export type PatchDestination = z.infer<typeof patchDestinationSchema>;
export type EventInput = z.infer<typeof eventSchema>;
