/** The Postgres store's event-type catalog (`@sluice/store`'s event-types.ts has the statements). */

import {
  type EventType,
  type EventTypeFields,
  type EventTypePageRequest,
  eventTypeFromRow,
  eventTypePage,
  eventTypeSql,
  eventTypeValues,
  type Page,
} from '@sluice/store';
import type { Queryable } from './db.ts';
import { mark } from './rows.ts';

const SQL = eventTypeSql(mark);

export async function createEventType(
  db: Queryable,
  name: string,
  fields: EventTypeFields,
  now: number,
): Promise<EventType | undefined> {
  const [r] = await db.query(SQL.insert, [name, ...eventTypeValues(fields), now]);
  return r && eventTypeFromRow(r);
}

export async function getEventType(db: Queryable, name: string): Promise<EventType | undefined> {
  const [r] = await db.query(SQL.get, [name]);
  return r && eventTypeFromRow(r);
}

export async function updateEventType(
  db: Queryable,
  name: string,
  fields: EventTypeFields,
  now: number,
): Promise<EventType | undefined> {
  const [r] = await db.query(SQL.update, [...eventTypeValues(fields), now, name]);
  return r && eventTypeFromRow(r);
}

export async function deleteEventType(db: Queryable, name: string): Promise<boolean> {
  return (await db.query(SQL.delete, [name])).length > 0;
}

export async function listEventTypes(db: Queryable, req: EventTypePageRequest): Promise<Page<EventType>> {
  return eventTypePage(await db.query(SQL.page, [req.after ?? '', req.limit + 1]), req.limit);
}
