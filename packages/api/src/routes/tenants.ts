import { newId } from '@sluice/core';
import type { FastifyInstance } from 'fastify';
import { generateApiKey, hashKey } from '../auth.ts';
import type { ApiContext } from '../context.ts';
import { notFound } from '../errors.ts';
import { presentTenant } from '../present.ts';
import { createTenantSchema, idParams } from '../schemas.ts';
import { parse } from '../validate.ts';

export function tenantRoutes(app: FastifyInstance, { store, auth, clock }: ApiContext): void {
  app.post('/v1/tenants', async (request, reply) => {
    await auth.admin(request);
    const { name } = parse(createTenantSchema, request.body);
    const apiKey = generateApiKey();
    const tenant = { id: newId('ten'), name, createdAt: clock() };
    await store.createTenant(tenant, hashKey(apiKey));
    return reply.status(201).send({ ...presentTenant(tenant), apiKey });
  });

  app.get('/v1/tenants/:id', async (request) => {
    await auth.admin(request);
    const { id } = parse(idParams('ten'), request.params);
    const tenant = await store.getTenant(id);
    if (!tenant) throw notFound('tenant', id);
    return presentTenant(tenant);
  });
}
