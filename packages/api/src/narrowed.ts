/**
 * What a portal link narrowed to some destinations sees of the listings (auth.ts
 * `narrowedTo`): only those destinations, found one by one (a link names at most 100), and
 * the deliveries and events that went to them. Without such a link, the store's pages as they are.
 */

import type { Delivery, Destination, Page, PageRequest } from '@sluice/store';
import type { FastifyRequest } from 'fastify';
import { narrowedTo } from './auth.ts';
import type { ApiContext } from './context.ts';

/** A page of the scope's destinations, newest first, as `Store.pageDestinations` pages them. */
export async function destinationPage(
  { store }: ApiContext,
  request: FastifyRequest,
  scope: string | undefined,
  page: PageRequest,
): Promise<Page<Destination>> {
  const narrowed = narrowedTo(request);
  if (narrowed === undefined) return store.pageDestinations(scope, page);
  const found = (await Promise.all(narrowed.map((id) => store.getDestination(id))))
    .filter((d): d is Destination => d !== undefined && d.tenantId === scope)
    .filter((d) => page.after === undefined || d.id < page.after)
    .sort((a, b) => (a.id < b.id ? 1 : -1));
  const items = found.slice(0, page.limit);
  return { items, next: found.length > page.limit ? (items[items.length - 1]?.id ?? null) : null };
}

/** An event's deliveries the request may see (a narrowed link: those to its destinations). */
export function visibleDeliveries(request: FastifyRequest, deliveries: Delivery[]): Delivery[] {
  const narrowed = narrowedTo(request);
  return narrowed === undefined ? deliveries : deliveries.filter((d) => narrowed.includes(d.destinationId));
}
