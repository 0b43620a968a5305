/** Listings: a page newest first, and the filter of the deliveries' listing. */

import type { DeliveryStatus } from '@sluice/core';
import type { Row } from './rows.ts';

/** One page, newest first; `next` is the id to continue after, or null at the end. */
export interface Page<T> {
  items: T[];
  next: string | null;
}

export interface PageRequest {
  limit: number;
  /** Continue after this id (exclusive). */
  after?: string | undefined;
}

export interface DeliveryFilter {
  tenantId?: string | undefined;
  destinationId?: string | undefined;
  eventId?: string | undefined;
  status?: DeliveryStatus | undefined;
  /** Only deliveries last changed at or after this time (for dead ones: when they died). */
  changedSince?: number | undefined;
}

/**
 * The page of rows read with one more than `limit` (newest first): that one only tells that
 * there is a next page, which continues after the last row kept.
 */
export function pageOf<T>(rows: Row[], limit: number, map: (r: Row) => T): Page<T> {
  const more = rows.length > limit;
  const kept = more ? rows.slice(0, limit) : rows;
  return { items: kept.map(map), next: more ? (kept[kept.length - 1]?.id as string) : null };
}
