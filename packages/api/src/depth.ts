/**
 * The nesting limit of an event's payload (`SLUICE_MAX_PAYLOAD_DEPTH`, docs/api.md): checked
 * right after the body is parsed, before anything recursive walks the payload. `JSON.parse`
 * takes any depth, but `JSON.stringify` (which the route runs to store the payload, and the
 * reply serializer to show it) overflows the stack past ~4,400 levels; the check itself walks
 * with a stack of its own, so no depth can overflow it.
 */

import type { FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify';
import { ApiError } from './errors.ts';

/**
 * Whether `value` nests more than `max` levels (an object or an array is one level, a
 * scalar none); stops at the first path deeper than `max`.
 */
export function nestsDeeper(value: unknown, max: number): boolean {
  if (typeof value !== 'object' || value === null) return false;
  const nodes: object[] = [value];
  const depths: number[] = [1];
  for (let node = nodes.pop(); node !== undefined; node = nodes.pop()) {
    const depth = depths.pop() as number;
    if (depth > max) return true;
    for (const child of Array.isArray(node) ? node : Object.values(node)) {
      if (typeof child === 'object' && child !== null) {
        nodes.push(child);
        depths.push(depth + 1);
      }
    }
  }
  return false;
}

/** The payloads of a body of POST /v1/events (`payload`) or its batch (`events.N.payload`). */
function payloads(body: unknown): [string, unknown][] {
  if (typeof body !== 'object' || body === null) return [];
  const { payload, events } = body as { payload?: unknown; events?: unknown };
  const out: [string, unknown][] = payload === undefined ? [] : [['payload', payload]];
  if (Array.isArray(events)) {
    for (const [i, event] of events.entries()) {
      const inner =
        typeof event === 'object' && event !== null ? (event as { payload?: unknown }).payload : undefined;
      if (inner !== undefined) out.push([`events.${i}.payload`, inner]);
    }
  }
  return out;
}

/** A `preValidation` hook: a payload deeper than `max` is a `400 validation_failed` naming it. */
export function payloadDepthLimit(max: number) {
  return (request: FastifyRequest, _reply: FastifyReply, done: HookHandlerDoneFunction): void => {
    const deep = payloads(request.body).filter(([, value]) => nestsDeeper(value, max));
    if (deep.length === 0) {
      done();
      return;
    }
    const message = `nests deeper than ${max} levels`;
    done(
      new ApiError(
        400,
        'validation_failed',
        `${deep[0]?.[0]}: ${message}`,
        deep.map(([path]) => ({ path, message, code: 'too_deep' })),
      ),
    );
  };
}
