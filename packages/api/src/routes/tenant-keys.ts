/**
 * A tenant's API keys (the operator's): several per tenant, so a key is rotated by creating
 * one, switching to it and deleting the old. A key is shown once, when created; a listing
 * shows its id and prefix. A tenant keeps at least one key. A deleted key is refused at the
 * next request in every replica: nothing caches keys (auth.ts).
 */

import { newId } from '@sluice/core';
import { z } from 'zod';
import { generateApiKey, hashKey, keyPrefix } from '../auth.ts';
import { type ApiContext, ApiError, type App, errorResponses } from '../context.ts';
import { IdParams, NoQuery } from '../contract.ts';
import { CreatedKey, CreateKey, KeyParams, TenantKeyList } from '../contract-lifecycle.ts';
import { notFound } from '../errors.ts';
import { presentKey } from '../present.ts';
import { refuseSystemTenant } from './tenants.ts';

const tags = ['tenants'];

export function tenantKeyRoutes(app: App, { store, clock }: ApiContext): void {
  app.post(
    '/v1/tenants/:id/keys',
    {
      config: { auth: 'admin' },
      schema: {
        tags,
        summary: 'Create another API key for the tenant; the key is in this answer only',
        params: IdParams('ten'),
        querystring: NoQuery,
        body: CreateKey,
        response: { 201: CreatedKey, ...errorResponses(403, 404, 409, 413) },
      },
    },
    async (request, reply) => {
      await refuseSystemTenant(store, request.params.id);
      const apiKey = generateApiKey();
      const key = { id: newId('key'), hash: hashKey(apiKey), prefix: keyPrefix(apiKey) };
      const added = await store.addTenantKey(request.params.id, key, clock());
      if (!added) throw notFound('tenant', request.params.id);
      return reply.status(201).send({ id: added.id, apiKey });
    },
  );

  app.get(
    '/v1/tenants/:id/keys',
    {
      config: { auth: 'admin' },
      schema: {
        tags,
        summary: "The tenant's API keys, oldest first (never the keys themselves)",
        params: IdParams('ten'),
        querystring: NoQuery,
        response: { 200: TenantKeyList, ...errorResponses(403, 404) },
      },
    },
    async (request) => {
      if ((await store.getTenant(request.params.id)) === undefined)
        throw notFound('tenant', request.params.id);
      return { data: (await store.listTenantKeys(request.params.id)).map(presentKey) };
    },
  );

  app.delete(
    '/v1/tenants/:id/keys/:keyId',
    {
      config: { auth: 'admin' },
      schema: {
        tags,
        summary: 'Delete an API key: refused at once; a tenant keeps at least one',
        params: KeyParams,
        querystring: NoQuery,
        response: { 204: z.null().meta({ description: 'Deleted' }), ...errorResponses(403, 404, 409) },
      },
    },
    async (request, reply) => {
      const { id, keyId } = request.params;
      if ((await store.getTenant(id)) === undefined) throw notFound('tenant', id);
      const result = await store.deleteTenantKey(id, keyId);
      if (result === 'not_found') throw notFound('key', keyId);
      if (result === 'last') {
        throw new ApiError(409, 'conflict', 'a tenant keeps at least one key: create another first');
      }
      return reply.status(204).send(null);
    },
  );
}
