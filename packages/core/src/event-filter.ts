/**
 * A destination's `filter` (docs/api.md "Filters"): a MongoDB-style query document over the
 * event `{ "type", "payload" }`, evaluated by sift (a well-kept implementation of MongoDB's query
 * language) with the operators listed here only: no `$where` (code), no `$type`, `$mod`. An
 * event that matches a destination's `eventTypes` but not its filter makes no delivery for it.
 * Checked on write (`filterProblem`); compiled once per distinct filter (`matchesFilter`).
 */

import safeRegex from 'safe-regex2';
// sift is CommonJS without named exports Node can see: its operations come off the default.
import sift from 'sift';

const {
  $all,
  $and,
  $elemMatch,
  $eq,
  $exists,
  $gt,
  $gte,
  $in,
  $lt,
  $lte,
  $ne,
  $nin,
  $nor,
  $not,
  $options,
  $or,
  $regex,
  $size,
  createQueryTester,
} = sift;

/** A filter as stored: a query document. */
export type EventFilter = Record<string, unknown>;

export const MAX_FILTER_BYTES = 4 * 1_024;
const MAX_FILTER_DEPTH = 10;

const OPERATIONS = {
  $eq,
  $ne,
  $gt,
  $gte,
  $lt,
  $lte,
  $in,
  $nin,
  $exists,
  $regex,
  $options,
  $and,
  $or,
  $nor,
  $not,
  $size,
  $all,
  $elemMatch,
};

/** The operators a filter may use. */
export const FILTER_OPERATORS: readonly string[] = Object.keys(OPERATIONS).filter((op) => op !== '$options');

type Tester = (event: unknown) => boolean;

function depthOf(value: unknown): number {
  if (value === null || typeof value !== 'object') return 0;
  let deepest = 0;
  for (const v of Object.values(value)) deepest = Math.max(deepest, depthOf(v));
  return deepest + 1;
}

function compiles(pattern: string): boolean {
  try {
    new RegExp(pattern);
    return true;
  } catch {
    return false;
  }
}

/** The longest `$regex` a filter may hold. */
const MAX_REGEX_LENGTH = 256;

/**
 * Why a `$regex` of the filter may not run at ingest (undefined: every one may): a pattern is
 * evaluated on the ingest thread for every event, so one that can take exponential time (a
 * nested quantifier such as `(a+)+`, found by safe-regex2, fastify's own check) would stall
 * every tenant's ingest.
 */
function regexProblem(value: unknown): string | undefined {
  if (value === null || typeof value !== 'object') return undefined;
  for (const [key, v] of Object.entries(value)) {
    if (key === '$regex' && typeof v === 'string') {
      if (v.length > MAX_REGEX_LENGTH) return `$regex: at most ${MAX_REGEX_LENGTH} characters`;
      // One that does not compile is named by the compile below, in the engine's words.
      if (compiles(v) && !safeRegex(v))
        return `$regex: ${v.slice(0, 60)} may take exponential time (a nested quantifier)`;
    }
    const inner = regexProblem(v);
    if (inner !== undefined) return inner;
  }
  return undefined;
}

/** The first operator of `value` that is not allowed, at any depth. */
function unknownOperator(value: unknown): string | undefined {
  if (value === null || typeof value !== 'object') return undefined;
  for (const [key, v] of Object.entries(value)) {
    if (key.startsWith('$') && !Object.hasOwn(OPERATIONS, key)) return key;
    const inner = unknownOperator(v);
    if (inner !== undefined) return inner;
  }
  return undefined;
}

const compile = (filter: EventFilter): Tester =>
  createQueryTester(filter, { operations: OPERATIONS }) as Tester;

/** Why `filter` cannot be a destination's (undefined: it can). */
export function filterProblem(filter: unknown): string | undefined {
  if (filter === null || typeof filter !== 'object' || Array.isArray(filter))
    return 'must be a query document (an object)';
  const bytes = Buffer.byteLength(JSON.stringify(filter));
  if (bytes > MAX_FILTER_BYTES) return `at most ${MAX_FILTER_BYTES} bytes (${bytes})`;
  const depth = depthOf(filter);
  if (depth > MAX_FILTER_DEPTH) return `at most ${MAX_FILTER_DEPTH} levels deep (${depth})`;
  const unknown = unknownOperator(filter);
  if (unknown !== undefined) return `unknown operator ${unknown} (allowed: ${FILTER_OPERATORS.join(' ')})`;
  const regex = regexProblem(filter);
  if (regex !== undefined) return regex;
  try {
    compile(filter as EventFilter);
  } catch (err) {
    return err instanceof Error ? err.message : String(err);
  }
  return undefined;
}

/** Compiled filters by their JSON text: destinations are read afresh per request, filters seldom change. */
const compiled = new Map<string, Tester>();
const MAX_COMPILED = 2_000;

/** Whether the event passes the filter (no filter: every event does). */
export function matchesFilter(
  filter: EventFilter | null,
  event: { type: string; payload: unknown },
): boolean {
  if (filter === null) return true;
  const text = JSON.stringify(filter);
  let tester = compiled.get(text);
  if (tester === undefined) {
    tester = compile(filter);
    if (compiled.size >= MAX_COMPILED) compiled.delete(compiled.keys().next().value as string);
    compiled.set(text, tester);
  }
  return tester(event);
}
