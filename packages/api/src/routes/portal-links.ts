/**
 * Portal links (docs/api.md "Portal links"): a tenant's key — or the admin token naming the
 * tenant — makes a short-lived link that opens the portal (`/portal/`) signed in as that
 * tenant, `read` or `manage`, optionally narrowed to some of its destinations and branded.
 * The link's token is shown once and stored as its hash; every request that presents it reads
 * the link's row (auth.ts), so a revoked link is refused at once in every API process, and an
 * expired one from its `expiresAt` on. Portal tokens themselves may not use these routes.
 */

import { newId } from '@sluice/core';
import type { PortalLink as StoredLink } from '@sluice/store';
import type { FastifyRequest } from 'fastify';
import { z } from 'zod';
import { generatePortalToken, hashKey } from '../auth.ts';
import {
  type ApiContext,
  ApiError,
  type App,
  decodeCursor,
  encodeCursor,
  errorResponses,
} from '../context.ts';
import { IdParams, listOf, NoQuery, TenantQuery } from '../contract.ts';
import { CreatedPortalLink, CreatePortalLink, PortalLink, PortalLinkQuery } from '../contract-portal.ts';
import { notFound } from '../errors.ts';
import { refuseSystemTenant } from './tenants.ts';

const tags = ['portal'];
const iso = (ms: number) => new Date(ms).toISOString();

function presentPortalLink(link: StoredLink, now: number): z.infer<typeof PortalLink> {
  return {
    id: link.id,
    tenantId: link.tenantId,
    access: link.access,
    destinationIds: link.destinationIds,
    branding: link.branding,
    createdAt: iso(link.createdAt),
    expiresAt: iso(link.expiresAt),
    expired: now >= link.expiresAt,
  };
}

/** Where users reach this API: `SLUICE_PUBLIC_URL`, else the scheme and host the request came with. */
function publicUrl(configured: string | undefined, request: FastifyRequest): string {
  return configured ?? `${request.protocol}://${request.host}`;
}

export function portalLinkRoutes(app: App, ctx: ApiContext): void {
  const { store, auth, clock, config } = ctx;

  app.post(
    '/v1/portal-links',
    {
      config: { auth: 'tenant', portal: 'never' },
      schema: {
        tags,
        summary: "A portal link for a tenant's customer: its token and URL are in this answer only",
        description:
          'The admin token names the tenant with `tenantId` in the body. The token is a v1 bearer token for that tenant only, with the link’s rights, until it expires or is revoked.',
        querystring: NoQuery,
        body: CreatePortalLink,
        response: { 201: CreatedPortalLink, ...errorResponses(403, 404, 409, 413) },
      },
    },
    async (request, reply) => {
      const input = request.body;
      if (request.principal.kind === 'admin' && input.tenantId === undefined) {
        throw new ApiError(400, 'validation_failed', 'tenantId: the admin token must name the tenant', [
          { path: 'tenantId', message: 'required with the admin token' },
        ]);
      }
      const tenantId = await auth.tenantFor(request, input.tenantId);
      await refuseSystemTenant(store, tenantId);
      const destinationIds = input.destinationIds === undefined ? null : [...new Set(input.destinationIds)];
      for (const id of destinationIds ?? []) {
        const destination = await store.getDestination(id);
        if (destination === undefined || destination.tenantId !== tenantId) throw notFound('destination', id);
      }
      const now = clock();
      const id = newId('prt');
      const token = generatePortalToken(id);
      const link = await store.createPortalLink({
        id,
        tenantId,
        tokenHash: hashKey(token),
        access: input.access,
        destinationIds,
        branding: input.branding ?? null,
        createdAt: now,
        expiresAt: now + input.expiresInSeconds * 1_000,
      });
      if (link === undefined) throw notFound('tenant', tenantId);
      const url = `${publicUrl(config.publicUrl, request)}/portal/#token=${encodeURIComponent(token)}`;
      return reply.status(201).send({ id, url, token, expiresAt: iso(link.expiresAt) });
    },
  );

  app.get(
    '/v1/portal-links',
    {
      config: { auth: 'tenant', portal: 'never' },
      schema: {
        tags,
        summary: 'Portal links, newest first (never their tokens); expired ones until pruned',
        querystring: PortalLinkQuery,
        response: { 200: listOf(PortalLink), ...errorResponses(403, 404) },
      },
    },
    async (request) => {
      const { limit, cursor, tenantId } = request.query;
      const scope = await auth.scope(request, tenantId);
      const page = await store.listPortalLinks(scope, { limit, after: decodeCursor(cursor, 'prt') });
      const now = clock();
      return { data: page.items.map((l) => presentPortalLink(l, now)), nextCursor: encodeCursor(page.next) };
    },
  );

  app.delete(
    '/v1/portal-links/:id',
    {
      config: { auth: 'tenant', portal: 'never' },
      schema: {
        tags,
        summary: 'Revoke a portal link: its token is refused from the next request on, in every API process',
        params: IdParams('prt'),
        querystring: TenantQuery,
        response: { 204: z.null().meta({ description: 'Revoked' }), ...errorResponses(403, 404) },
      },
    },
    async (request, reply) => {
      const link = await store.getPortalLink(request.params.id);
      if (link === undefined || !(await auth.canAccess(request, link.tenantId)))
        throw notFound('portal link', request.params.id);
      if (!(await store.deletePortalLink(link.id))) throw notFound('portal link', link.id);
      return reply.status(204).send(null);
    },
  );
}
