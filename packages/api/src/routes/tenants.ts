import { newId } from '@sluice/core';
import { z } from 'zod';
import { generateApiKey, hashKey, keyPrefix } from '../auth.ts';
import { type ApiContext, type App, decodeCursor, encodeCursor, errorResponses } from '../context.ts';
import {
  CreateTenant,
  IdParams,
  ListQuery,
  listOf,
  NoQuery,
  PatchTenant,
  Tenant,
  TenantWithKey,
} from '../contract.ts';
import { notFound } from '../errors.ts';
import { presentTenant } from '../present.ts';

const tags = ['tenants'];

export function tenantRoutes(app: App, { store, dispatcher, clock, quotas }: ApiContext): void {
  app.post(
    '/v1/tenants',
    {
      config: { auth: 'admin' },
      schema: {
        tags,
        summary: 'Create a tenant; its API key is in this answer only',
        querystring: NoQuery,
        body: CreateTenant,
        response: { 201: TenantWithKey, ...errorResponses(403, 413) },
      },
    },
    async (request, reply) => {
      const apiKey = generateApiKey();
      const key = { id: newId('key'), prefix: keyPrefix(apiKey) };
      const tenant = {
        id: newId('ten'),
        name: request.body.name,
        createdAt: clock(),
        quota: { eventsPerSecond: null, pendingEvents: null },
      };
      await store.createTenant(tenant, hashKey(apiKey), key);
      return reply.status(201).send({ ...presentTenant(tenant), apiKey });
    },
  );

  app.get(
    '/v1/tenants',
    {
      config: { auth: 'admin' },
      schema: {
        tags,
        summary: 'List tenants, newest first',
        querystring: ListQuery.omit({ tenantId: true }),
        response: { 200: listOf(Tenant), ...errorResponses(403) },
      },
    },
    async (request) => {
      const { limit, cursor } = request.query;
      const page = await store.listTenants({ limit, after: decodeCursor(cursor, 'ten') });
      return { data: page.items.map(presentTenant), nextCursor: encodeCursor(page.next) };
    },
  );

  app.get(
    '/v1/tenants/:id',
    {
      config: { auth: 'admin' },
      schema: {
        tags,
        summary: 'Get a tenant',
        params: IdParams('ten'),
        querystring: NoQuery,
        response: { 200: Tenant, ...errorResponses(403, 404) },
      },
    },
    async (request) => {
      const tenant = await store.getTenant(request.params.id);
      if (!tenant) throw notFound('tenant', request.params.id);
      return presentTenant(tenant);
    },
  );

  app.patch(
    '/v1/tenants/:id',
    {
      config: { auth: 'admin' },
      schema: {
        tags,
        summary: "Change a tenant's name or quotas (the operator's)",
        description:
          "A quota field set to a number is the tenant's own; null: none of its own (the operator-wide default applies). Fields left out stay.",
        params: IdParams('ten'),
        querystring: NoQuery,
        body: PatchTenant,
        response: { 200: Tenant, ...errorResponses(403, 404, 413) },
      },
    },
    async (request) => {
      const tenant = await store.updateTenant(request.params.id, request.body);
      if (!tenant) throw notFound('tenant', request.params.id);
      quotas.forget(tenant.id);
      return presentTenant(tenant);
    },
  );

  app.delete(
    '/v1/tenants/:id',
    {
      config: { auth: 'admin' },
      schema: {
        tags,
        summary: 'Delete a tenant: its keys and portal links stop working, its destinations are deleted',
        description:
          'Its keys and portal links are refused at once; its destinations are deleted as `DELETE /v1/destinations/:id` does (undelivered deliveries cancelled). Its events stay until retention removes them.',
        params: IdParams('ten'),
        querystring: NoQuery,
        response: { 204: z.null().meta({ description: 'Deleted' }), ...errorResponses(403, 404) },
      },
    },
    async (request, reply) => {
      dispatcher.checkAnnounce();
      const destinations = await store.deleteTenant(request.params.id, clock());
      if (destinations === undefined) throw notFound('tenant', request.params.id);
      for (const id of destinations) await dispatcher.destinationChanged(id);
      quotas.forget(request.params.id);
      // Its portal links went with it (the store's deletion deletes them): their tokens are
      // refused from the next request on, as its keys are.
      return reply.status(204).send(null);
    },
  );
}
