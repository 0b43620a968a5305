/**
 * The API's JSON body parser (docs/api.md "What a destination receives": the payload as it
 * was posted). Fastify's own parser decodes invalid UTF-8 as U+FFFD and keeps every number as
 * a JavaScript number, so `18446744073709551615` arrived as `18446744073709552000` and `1e400`
 * as `null`. This one
 *
 * - refuses a body that is not valid UTF-8, and any string (or key) holding a lone surrogate
 *   (`"\ud800"`: valid JSON text, not valid Unicode, and many receivers' parsers refuse it);
 * - keeps fastify's guard against `__proto__` and `constructor.prototype` keys
 *   (secure-json-parse, the parser fastify uses);
 * - when the text holds a number JavaScript may write otherwise (a 64-bit id, a long decimal,
 *   an exponent, `1.0`), parses it a second time keeping each such number as its source text
 *   (`JSON.rawJSON`, through the reviver's source access) and hangs that copy on the request
 *   (`exactBody`): the events route serializes payloads from it, so the text a
 *   receiver gets holds the numbers byte for byte. Validation, the catalog's schemas and
 *   filters read the first parse, with numbers as JavaScript has them.
 */

import type { FastifyRequest } from 'fastify';
import sjson from 'secure-json-parse';
import { ApiError } from './errors.ts';

declare module 'fastify' {
  interface FastifyRequest {
    /** The body with every number as its source text, when one would not survive a round trip. */
    exactBody?: unknown;
  }
}

const UTF8 = new TextDecoder('utf-8', { fatal: true });
const SAFE = { protoAction: 'error', constructorAction: 'error' } as const;

/** The reviver's third argument: the source text of a primitive (Node 21+). */
type Context = { source?: string };

/**
 * `JSON.rawJSON` (Node 21+; not in TypeScript's lib yet): a value `JSON.stringify` writes as
 * the text given, so a number keeps its source.
 */
const rawJSON = (JSON as unknown as { rawJSON(text: string): unknown }).rawJSON;

function malformed(message: string): ApiError {
  return new ApiError(400, 'validation_failed', message, [{ path: '', message }]);
}

/**
 * Whether a string of the value (or a key) holds a lone surrogate, walked without recursion
 * (a body may nest 100,000 levels: the payload depth check refuses those after the parse).
 */
function holdsLoneSurrogate(value: unknown): boolean {
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const v = stack.pop();
    if (typeof v === 'string') {
      if (!v.isWellFormed()) return true;
    } else if (Array.isArray(v)) {
      for (const item of v) stack.push(item);
    } else if (v !== null && typeof v === 'object') {
      for (const [key, item] of Object.entries(v)) {
        if (!key.isWellFormed()) return true;
        stack.push(item);
      }
    }
  }
  return false;
}

/** A `\uD800`–`\uDFFF` escape: the only way valid UTF-8 can carry a lone surrogate. */
const SURROGATE_ESCAPE = /\\u[dD][89a-fA-F]/;
/** A number JavaScript may write otherwise: a decimal point, an exponent, 16+ digits, `-0`. */
const RISKY_NUMBER = /\d[.eE]|\d{16}|-0/;

/** Parses a JSON body as the API takes it (see above); throws the API's 400 for what it refuses. */
export function parseJsonBody(request: FastifyRequest, body: Buffer): unknown {
  if (body.length === 0)
    throw new ApiError(400, 'validation_failed', 'body must be a JSON document', [
      { path: '', message: 'required' },
    ]);
  let text: string;
  try {
    text = UTF8.decode(body);
  } catch {
    throw malformed('body is not valid UTF-8');
  }
  let parsed: unknown;
  try {
    parsed = sjson.parse(text, SAFE);
  } catch {
    throw malformed('body is not valid JSON');
  }
  if (SURROGATE_ESCAPE.test(text) && holdsLoneSurrogate(parsed))
    throw malformed('body holds a lone surrogate (such as \\ud800): not valid Unicode text');
  if (RISKY_NUMBER.test(text)) request.exactBody = exactCopy(text);
  return parsed;
}

/**
 * The body with each number whose text JavaScript would not write back kept as that text;
 * undefined when there is none (or the body nests too deep for a reviver: its depth is refused).
 */
function exactCopy(text: string): unknown {
  let inexact = false;
  try {
    const copy = JSON.parse(text, (_key, value: unknown, context?: Context) => {
      if (typeof value !== 'number' || context?.source === undefined || context.source === String(value))
        return value;
      inexact = true;
      return rawJSON(context.source);
    });
    return inexact ? copy : undefined;
  } catch {
    return undefined;
  }
}

/** Stored payload text back to a value for an answer, numbers as they were posted. */
export function parseExact(text: string): unknown {
  return JSON.parse(text, (_key, value: unknown, context?: Context) =>
    typeof value === 'number' && context?.source !== undefined && context.source !== String(value)
      ? rawJSON(context.source)
      : value,
  );
}
