/**
 * Listings, newest first, as both stores read them: the statement of a page (`pageStatement`)
 * and the page of its rows (`pageOf`).
 */

import type { DeliveryStatus } from '@sluice/core';
import type { Mark } from './destination-sql.ts';
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
  /** Only deliveries to one of these (a portal link narrowed to them); never empty. */
  destinationIds?: readonly string[] | undefined;
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

/**
 * A condition on one column: `column = value`, or with the operator given; `IN deliveries`:
 * the column (an event id) has a delivery to the destination `value`. A list of values (never
 * empty) means any of them: `column IN (…)`, or a delivery to any of those destinations.
 */
export type Condition = [
  column: string,
  value: string | number | readonly string[],
  operator?: '=' | '>=' | '<=' | 'IN deliveries',
];

/** The deliveries' listing filter as conditions on their columns. */
export function deliveryConditions(filter: DeliveryFilter): Condition[] {
  const conditions: Condition[] = [];
  if (filter.tenantId !== undefined) conditions.push(['tenant_id', filter.tenantId]);
  if (filter.destinationId !== undefined) conditions.push(['destination_id', filter.destinationId]);
  if (filter.destinationIds !== undefined) conditions.push(['destination_id', filter.destinationIds]);
  if (filter.eventId !== undefined) conditions.push(['event_id', filter.eventId]);
  if (filter.status !== undefined) conditions.push(['status', filter.status]);
  if (filter.changedSince !== undefined) conditions.push(['updated_at', filter.changedSince, '>=']);
  return conditions;
}

/**
 * `SELECT <columns> FROM <table> WHERE <fixed> AND <conditions> AND id < <after>
 * ORDER BY id DESC LIMIT <limit + 1>`, values marked by `mark`: read it with `pageOf`. Ids are
 * ULIDs, so `id < cursor ORDER BY id DESC` is stable while rows are added. Table, column and
 * `fixed` texts are the stores' constants, never input.
 */
export function pageStatement(
  mark: Mark,
  table: string,
  columns: string,
  fixed: string[],
  conditions: Condition[],
  req: PageRequest,
): { text: string; values: (string | number)[] } {
  const values: (string | number)[] = [];
  const where = [...fixed];
  for (const [column, value, operator = '='] of conditions) {
    let target: string;
    if (typeof value === 'object') {
      const marks = value.map((v) => {
        values.push(v);
        return mark(values.length);
      });
      target = `IN (${marks.join(', ')})`;
    } else {
      values.push(value);
      target = `${operator === 'IN deliveries' ? '=' : operator} ${mark(values.length)}`;
    }
    where.push(
      operator === 'IN deliveries'
        ? `${column} IN (SELECT event_id FROM deliveries WHERE destination_id ${target})`
        : `${column} ${target}`,
    );
  }
  if (req.after !== undefined) {
    values.push(req.after);
    where.push(`id < ${mark(values.length)}`);
  }
  values.push(req.limit + 1);
  const clause = where.length > 0 ? `WHERE ${where.join(' AND ')}` : '';
  return {
    text: `SELECT ${columns} FROM ${table} ${clause} ORDER BY id DESC LIMIT ${mark(values.length)}`,
    values,
  };
}
