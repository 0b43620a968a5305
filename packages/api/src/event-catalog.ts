/**
 * The event-type catalog as the API uses it (docs/api.md "Event-type catalog"): JSON Schema
 * compiled with ajv (draft-07, with ajv-formats' formats), each type's schema compiled once
 * per process and kept until the type changes, and the check of an event's payload at ingest.
 *
 * Freshness: a process rereads a type's row at most once every `ttlMs` (default 1 s) and
 * compiles again only when the row's `updatedAt` moved. A change made through this process
 * (create, `PATCH`, `DELETE`) is in force here at once (`forget`); in the distributed shape,
 * where several API processes run, it reaches the others within `ttlMs`: a reread a second
 * per type in use costs one indexed read, where a Redis change feed would add a subscription
 * to every API process for a change an operator makes rarely.
 */

import { isReservedType } from '@sluice/core';
import type { EventType, Store } from '@sluice/store';
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { ApiError } from './errors.ts';

// ajv-formats is CommonJS with its function as `default`.
const addFormats = addFormatsModule as unknown as typeof addFormatsModule.default;

/** One problem of a document against a schema: a JSON Pointer and what is wrong there. */
export interface SchemaIssue {
  path: string;
  message: string;
}

/** A fresh validator: one per compile, so one schema's `$id` never meets another's. */
function newAjv(): Ajv {
  const ajv = new Ajv({ allErrors: true, strict: false, logger: false });
  addFormats(ajv);
  return ajv;
}

/** ajv's errors as issues under `root` (a JSON Pointer); a missing property is named in its path. */
function issuesOf(errors: ErrorObject[] | null | undefined, root: string): SchemaIssue[] {
  return (errors ?? []).map((e) => {
    const missing =
      e.keyword === 'required' ? (e.params as { missingProperty?: string }).missingProperty : undefined;
    const tail = missing === undefined ? '' : `/${missing.replaceAll('~', '~0').replaceAll('/', '~1')}`;
    return { path: `${root}${e.instancePath}${tail}`, message: e.message ?? 'invalid' };
  });
}

/**
 * Compiles `schema`, or throws `400 validation_failed` naming what is wrong in it (paths
 * under `/schema`): not a JSON Schema, or a `$ref` it cannot resolve (nothing is fetched).
 */
export function compileSchema(schema: Record<string, unknown>): ValidateFunction {
  const ajv = newAjv();
  if (!ajv.validateSchema(schema)) {
    const issues = issuesOf(ajv.errors, '/schema');
    throw new ApiError(
      400,
      'validation_failed',
      `schema: not a valid JSON Schema (${issues[0]?.message})`,
      issues,
    );
  }
  try {
    return ajv.compile(schema);
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    throw new ApiError(400, 'validation_failed', `schema: ${message}`, [{ path: '/schema', message }]);
  }
}

/** The issues of `value` against a compiled schema, under `root`; empty when it satisfies it. */
export function schemaIssues(validate: ValidateFunction, value: unknown, root: string): SchemaIssue[] {
  return validate(value) ? [] : issuesOf(validate.errors, root);
}

interface Entry {
  /** The type's row as last read; null: not in the catalog. */
  type: EventType | null;
  validate: ValidateFunction | null;
  readAt: number;
}

/** What an event's type and payload are, against the catalog. */
export type PayloadCheck =
  | { ok: true }
  | { ok: false; reason: 'reserved' | 'unknown' }
  | { ok: false; reason: 'schema'; issues: SchemaIssue[] };

export interface CatalogOptions {
  /** Unknown types refused (`SLUICE_EVENT_TYPES_STRICT`). */
  strict: boolean;
  /** How long a type's row read is trusted (other processes' changes show within it). */
  ttlMs?: number;
  clock?: () => number;
}

/** Bounds the cache: the catalog's types in use, not every type a client ever sent. */
const MAX_ENTRIES = 10_000;

export class EventCatalog {
  readonly #store: Store;
  readonly #strict: boolean;
  readonly #ttlMs: number;
  readonly #clock: () => number;
  readonly #entries = new Map<string, Entry>();
  /** Reads in flight, by name: requests that find a type stale at once share one read. */
  readonly #reading = new Map<string, Promise<Entry>>();
  /** Counts `forget`s: a read that a change overtook is used once, never kept. */
  #forgotten = 0;

  constructor(store: Store, options: CatalogOptions) {
    this.#store = store;
    this.#strict = options.strict;
    this.#ttlMs = options.ttlMs ?? 1_000;
    this.#clock = options.clock ?? Date.now;
  }

  /** A change made here: the next check reads the type again. */
  forget(name: string): void {
    this.#forgotten++;
    this.#entries.delete(name);
    this.#reading.delete(name);
  }

  async #entry(name: string): Promise<Entry> {
    const held = this.#entries.get(name);
    if (held !== undefined && this.#clock() - held.readAt < this.#ttlMs) return held;
    let reading = this.#reading.get(name);
    if (reading === undefined) {
      reading = this.#read(name, held).finally(() => this.#reading.delete(name));
      this.#reading.set(name, reading);
    }
    return reading;
  }

  async #read(name: string, held: Entry | undefined): Promise<Entry> {
    const now = this.#clock();
    const forgotten = this.#forgotten;
    const type = (await this.#store.getEventType(name)) ?? null;
    // The same row as before keeps its compiled schema: only a change compiles again.
    const same = held?.type != null && type !== null && held.type.updatedAt === type.updatedAt;
    const validate = same ? (held?.validate ?? null) : type?.schema ? newAjv().compile(type.schema) : null;
    const entry = { type, validate, readAt: now };
    if (forgotten !== this.#forgotten) return entry;
    this.#entries.delete(name);
    if (this.#entries.size >= MAX_ENTRIES) {
      const oldest = this.#entries.keys().next();
      if (!oldest.done) this.#entries.delete(oldest.value);
    }
    this.#entries.set(name, entry);
    return entry;
  }

  /** Whether an event of `type` with `payload` may be accepted; issues' paths under `root`. */
  async check(type: string, payload: unknown, root: string): Promise<PayloadCheck> {
    if (isReservedType(type)) return { ok: false, reason: 'reserved' };
    const entry = await this.#entry(type);
    if (entry.type === null) return this.#strict ? { ok: false, reason: 'unknown' } : { ok: true };
    if (entry.validate === null) return { ok: true };
    const issues = schemaIssues(entry.validate, payload, root);
    return issues.length === 0 ? { ok: true } : { ok: false, reason: 'schema', issues };
  }
}
