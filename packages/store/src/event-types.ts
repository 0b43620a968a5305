/**
 * The event-type catalog's records (docs/api.md "Event-type catalog") and the statements both
 * stores run on them, written once with the store's parameter marks (`Mark`). A type's
 * `schema` and `example` are kept as JSON text, as the operator sent them (key order
 * included); Sluice's own `sluice.…` types are not stored (they are @sluice/core's
 * `BUILT_IN_EVENT_TYPES`).
 */

import type { Mark } from './destination-sql.ts';
import type { Page } from './page.ts';
import type { Row } from './rows.ts';

export interface EventType {
  name: string;
  description: string;
  /** A JSON Schema that the type's payloads must satisfy; null: any payload. */
  schema: Record<string, unknown> | null;
  /** An example payload (satisfies `schema`); undefined: none. */
  example?: unknown;
  createdAt: number;
  updatedAt: number;
}

/** What a change sets: the type's fields after it, whole. */
export type EventTypeFields = Pick<EventType, 'description' | 'schema' | 'example'>;

/** A page of the catalog, by name: `after` a name (exclusive). */
export interface EventTypePageRequest {
  limit: number;
  after?: string | undefined;
}

const COLUMNS = 'name, description, schema, example, created_at, updated_at';

export function eventTypeFromRow(r: Row): EventType {
  const type: EventType = {
    name: r.name as string,
    description: r.description as string,
    schema: r.schema === null ? null : (JSON.parse(r.schema as string) as Record<string, unknown>),
    createdAt: Number(r.created_at),
    updatedAt: Number(r.updated_at),
  };
  if (r.example !== null) type.example = JSON.parse(r.example as string);
  return type;
}

/** The values of a type's fields in the order the statements take them: description, schema, example. */
export function eventTypeValues(fields: EventTypeFields): [string, string | null, string | null] {
  return [
    fields.description,
    fields.schema === null ? null : JSON.stringify(fields.schema),
    fields.example === undefined ? null : JSON.stringify(fields.example),
  ];
}

/** The statements of the catalog: each takes the values named in its comment. */
export function eventTypeSql(mark: Mark) {
  const m = (n: number) => mark(n);
  return {
    /** name, description, schema, example, created at (updated at the same); a name taken inserts nothing. */
    insert: `INSERT INTO event_types (${COLUMNS}) VALUES (${m(1)}, ${m(2)}, ${m(3)}, ${m(4)}, ${m(5)}, ${m(5)})
      ON CONFLICT (name) DO NOTHING RETURNING ${COLUMNS}`,
    /** name */
    get: `SELECT ${COLUMNS} FROM event_types WHERE name = ${m(1)}`,
    /** description, schema, example, updated at, name */
    update: `UPDATE event_types SET description = ${m(1)}, schema = ${m(2)}, example = ${m(3)}, updated_at = ${m(4)}
      WHERE name = ${m(5)} RETURNING ${COLUMNS}`,
    /** name */
    delete: `DELETE FROM event_types WHERE name = ${m(1)} RETURNING name`,
    /** after (a name, '' for the first page), limit + 1 */
    page: `SELECT ${COLUMNS} FROM event_types WHERE name > ${m(1)} ORDER BY name LIMIT ${m(2)}`,
  };
}

/** The page of rows read with one more than `limit`, by name. */
export function eventTypePage(rows: Row[], limit: number): Page<EventType> {
  const more = rows.length > limit;
  const items = (more ? rows.slice(0, limit) : rows).map(eventTypeFromRow);
  return { items, next: more ? (items[items.length - 1]?.name ?? null) : null };
}
