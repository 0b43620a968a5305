/**
 * `GET /v1/whoami`: who the request's token is — the operator (`admin`), a tenant's API key
 * (`tenant`) or a portal link's token (`portal`, with the link's rights) — and, for the last
 * two, the tenant's id and name, and for a portal token its link's rights and branding. The dashboard and the portal read it to know what to show.
 */

import type { ApiContext, App } from '../context.ts';
import { errorResponses } from '../context.ts';
import { NoQuery } from '../contract.ts';
import { Whoami } from '../contract-portal.ts';

export function whoamiRoutes(app: App, _ctx: ApiContext): void {
  app.get(
    '/v1/whoami',
    {
      config: { auth: 'tenant' },
      schema: {
        tags: ['tenants'],
        summary: "Who this token is: the operator, a tenant's key or a portal link, and its tenant",
        querystring: NoQuery,
        response: { 200: Whoami, ...errorResponses() },
      },
    },
    async (request) => {
      const principal = request.principal;
      if (principal.kind === 'admin') return { role: 'admin' as const, tenant: null, portal: null };
      const tenant = { id: principal.tenant.id, name: principal.tenant.name };
      if (principal.kind === 'tenant') return { role: 'tenant' as const, tenant, portal: null };
      const { id, access, destinationIds, branding, expiresAt } = principal.link;
      return {
        role: 'portal' as const,
        tenant,
        portal: { id, access, destinationIds, branding, expiresAt: new Date(expiresAt).toISOString() },
      };
    },
  );
}
