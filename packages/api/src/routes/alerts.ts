/**
 * `GET /v1/alerts`: the backlog alerts firing now (ADR 0009), by destination then kind. A
 * tenant key sees its destinations' alerts; the admin token every tenant's, or one
 * tenant's with `?tenantId=`. Not paged: at most two per destination, and only while firing.
 */

import type { ApiContext, App } from '../context.ts';
import { errorResponses } from '../context.ts';
import { AlertList, TenantQuery } from '../contract.ts';

export function alertRoutes(app: App, ctx: ApiContext): void {
  const { store, auth } = ctx;

  app.get(
    '/v1/alerts',
    {
      config: { auth: 'tenant' },
      schema: {
        tags: ['alerts'],
        summary: 'Backlog alerts firing now: a destination whose pending count or age passed its threshold',
        querystring: TenantQuery,
        response: { 200: AlertList, ...errorResponses(404) },
      },
    },
    async (request) => {
      const scope = await auth.scope(request, request.query.tenantId);
      const alerts = (await store.listAlerts(scope)).filter((a) =>
        auth.seesDestination(request, a.destinationId),
      );
      return { data: alerts.map((a) => ({ ...a, raisedAt: new Date(a.raisedAt).toISOString() })) };
    },
  );
}
