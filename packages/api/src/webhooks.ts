/**
 * The OpenAPI document's `webhooks`: what Sluice itself sends to a tenant's destinations, one
 * entry per built-in `sluice.…` event type, from the same definitions the catalog lists
 * (@sluice/core's `BUILT_IN_EVENT_TYPES`).
 */

import { BUILT_IN_EVENT_TYPES } from '@sluice/core';

export function operationalWebhooks(): Record<string, unknown> {
  return Object.fromEntries(
    BUILT_IN_EVENT_TYPES.map((t) => [
      t.name,
      {
        post: {
          summary: t.description,
          description: `Sent with the header webhook-event-type: ${t.name}, signed as every delivery.`,
          requestBody: {
            required: true,
            content: {
              'application/json': { schema: t.schema, example: t.example },
            },
          },
          responses: { '200': { description: 'Any 2xx: received.' } },
        },
      },
    ]),
  );
}
