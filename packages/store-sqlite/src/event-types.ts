/** The SQLite store's event-type catalog (`@sluice/store`'s event-types.ts has the statements). */

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
import type { Sql } from './lists.ts';
import { mark } from './rows.ts';

const SQL = eventTypeSql(mark);

export function createEventType(
  db: Sql,
  name: string,
  fields: EventTypeFields,
  now: number,
): EventType | undefined {
  const r = db.sql(SQL.insert).get(name, ...eventTypeValues(fields), now);
  return r && eventTypeFromRow(r);
}

export function getEventType(db: Sql, name: string): EventType | undefined {
  const r = db.sql(SQL.get).get(name);
  return r && eventTypeFromRow(r);
}

export function updateEventType(
  db: Sql,
  name: string,
  fields: EventTypeFields,
  now: number,
): EventType | undefined {
  const r = db.sql(SQL.update).get(...eventTypeValues(fields), now, name);
  return r && eventTypeFromRow(r);
}

export function deleteEventType(db: Sql, name: string): boolean {
  return db.sql(SQL.delete).get(name) !== undefined;
}

export function listEventTypes(db: Sql, req: EventTypePageRequest): Page<EventType> {
  return eventTypePage(db.sql(SQL.page).all(req.after ?? '', req.limit + 1), req.limit);
}
