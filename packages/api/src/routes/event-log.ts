/**
 * The event log: a tenant's events, newest first, paginated like the other listings, by
 * type (or `prefix.*`), destination and acceptance time. Read along the index
 * `events_tenant` (migration 0009).
 */

import { narrowedTo } from '../auth.ts';
import { type ApiContext, type App, decodeCursor, encodeCursor, errorResponses } from '../context.ts';
import { listOf } from '../contract.ts';
import { EventLogQuery, LoggedEvent } from '../contract-lifecycle.ts';
import { presentLoggedEvent } from '../present.ts';

export function eventLogRoutes(app: App, { store, auth }: ApiContext): void {
  app.get(
    '/v1/events',
    {
      config: { auth: 'tenant' },
      schema: {
        tags: ['events'],
        summary: "The tenant's events, newest first, by type, destination or time",
        description: 'The admin token names the tenant with `tenantId`.',
        querystring: EventLogQuery,
        response: { 200: listOf(LoggedEvent), ...errorResponses(404) },
      },
    },
    async (request) => {
      const { limit, cursor, tenantId, type, destinationId, since, until } = request.query;
      const scope = await auth.tenantFor(request, tenantId);
      const page = await store.listEvents(
        {
          tenantId: scope,
          type: type === '*' ? undefined : type,
          destinationId,
          destinationIds: narrowedTo(request),
          since: since === undefined ? undefined : Date.parse(since),
          until: until === undefined ? undefined : Date.parse(until),
        },
        { limit, after: decodeCursor(cursor, 'evt') },
      );
      return { data: page.items.map(presentLoggedEvent), nextCursor: encodeCursor(page.next) };
    },
  );
}
