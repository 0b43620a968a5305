import type { FastifyInstance } from 'fastify';
import { canSee } from '../auth.ts';
import type { ApiContext } from '../context.ts';
import { notFound } from '../errors.ts';
import { presentDelivery } from '../present.ts';
import { idParams } from '../schemas.ts';
import { parse } from '../validate.ts';

export function deliveryRoutes(app: FastifyInstance, { store, auth }: ApiContext): void {
  app.get('/v1/deliveries/:id', async (request) => {
    const { id } = parse(idParams('dlv'), request.params);
    const principal = await auth.authenticate(request);
    const found = await store.getDelivery(id);
    if (!found || !canSee(principal, found.delivery.tenantId)) throw notFound('delivery', id);
    return presentDelivery(found.delivery, found.attempts);
  });
}
