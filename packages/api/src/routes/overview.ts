/**
 * `GET /v1/destinations/stats`: a page of destinations, each with its backlog and the span's
 * outcomes — the dashboard's table in one call. The store counts the page in one grouped read
 * (`countsForMany`); queued and in flight come from the pace state, as in a destination's own
 * stats. With the admin token and no `tenantId`, every tenant's destinations.
 */

import { type ApiContext, type App, decodeCursor, encodeCursor, errorResponses } from '../context.ts';
import { DestinationOverview, listOf, OverviewQuery } from '../contract.ts';
import { destinationPage } from '../narrowed.ts';
import { presentDestination } from '../present.ts';
import { tags } from './destinations.ts';

export function overviewRoutes(app: App, ctx: ApiContext): void {
  const { store, dispatcher, auth, clock } = ctx;

  app.get(
    '/v1/destinations/stats',
    {
      config: { auth: 'tenant' },
      schema: {
        tags,
        summary: 'Destinations with their backlog and outcomes over the last `seconds`, newest first',
        querystring: OverviewQuery,
        response: { 200: listOf(DestinationOverview), ...errorResponses(404) },
      },
    },
    async (request) => {
      const { limit, cursor, tenantId, seconds } = request.query;
      const scope = await auth.scope(request, tenantId);
      const page = await destinationPage(ctx, request, scope, { limit, after: decodeCursor(cursor, 'dst') });
      const now = clock();
      const ids = page.items.map((d) => d.id);
      const [counts, runtime] = await Promise.all([
        store.countsForMany(ids, now - seconds * 1_000),
        Promise.all(ids.map((id) => dispatcher.runtimeStats(id))),
      ]);
      return {
        data: page.items.map((d, i) => {
          const c = counts.get(d.id);
          return {
            ...presentDestination(d),
            stats: {
              pending: c?.pending ?? 0,
              queued: runtime[i]?.queued ?? 0,
              inFlight: runtime[i]?.inFlight ?? 0,
              effectiveLimit: runtime[i]?.effectiveLimit ?? d.rateLimit.limit,
              backingOff: runtime[i]?.backingOff ?? false,
              oldestPendingAgeMs: c?.oldestPendingAt == null ? 0 : Math.max(0, now - c.oldestPendingAt),
              delivered: c?.delivered ?? 0,
              dead: c?.dead ?? 0,
            },
          };
        }),
        nextCursor: encodeCursor(page.next),
      };
    },
  );
}
