/**
 * What goes into a destination's transform and what may come out (docs/api.md
 * "Transforms"): in, the webhook `{ type, payload, headers }` as JSON text, its payload the
 * exact text posted; out, `{ payload, headers? }` or `{ cancel: true }`, checked here, on the
 * host, by the rules of the destination's own headers and the payload limit.
 */

import {
  type DestinationHeaders,
  headerBytes,
  headerNameProblem,
  isHeaderValue,
  MAX_HEADER_BYTES,
  MAX_HEADERS,
} from '@sluice/core';
import type { SandboxResult } from './sandbox.ts';

/** The attempt's error code when its transform failed (not the receiver: the breaker ignores it). */
export const TRANSFORM_FAILED = 'transform_failed' as const;
/** The attempt's error code when its transform answered `{ cancel: true }`. */
export const TRANSFORM_CANCELLED = 'transform_cancelled' as const;

export type TransformOutcome =
  | { kind: 'send'; body: string; headers: DestinationHeaders }
  | { kind: 'cancel' }
  | { kind: 'failed'; message: string }
  /** The sandbox could not run it (its thread failed, the pool is closing): try again later. */
  | { kind: 'unavailable'; message: string };

/** The webhook a handler receives, as JSON text: the payload's text as it was posted. */
export function webhookInput(type: string, payload: string, headers: DestinationHeaders): string {
  return `{"type":${JSON.stringify(type)},"payload":${payload},"headers":${JSON.stringify(headers)}}`;
}

export interface OutputRules {
  maxPayloadBytes: number;
  /** The destination has a credential: `authorization` is then not the transform's. */
  auth: boolean;
}

const failed = (message: string): TransformOutcome => ({ kind: 'failed', message });

/** The outcome of a call: what to send, a cancel, or why the transform failed (with its line). */
export function readOutput(
  result: SandboxResult,
  headers: DestinationHeaders,
  rules: OutputRules,
): TransformOutcome {
  if (!result.ok && result.host === true) return { kind: 'unavailable', message: result.message };
  if (!result.ok)
    return failed(result.line === undefined ? result.message : `${result.message} (line ${result.line})`);
  // The envelope's own JSON (payload and headers) is bounded before it is parsed.
  if (result.output.length > rules.maxPayloadBytes + MAX_HEADER_BYTES + 1_024)
    return failed(`returned more than the payload limit (${rules.maxPayloadBytes} bytes)`);
  const out: unknown = JSON.parse(result.output);
  if (out === null || typeof out !== 'object' || Array.isArray(out))
    return failed('returned no object: it must return { payload, headers } or { cancel: true }');
  const { cancel, payload, headers: changed } = out as Record<string, unknown>;
  if (cancel === true) return { kind: 'cancel' };
  if (payload === undefined) return failed('returned no payload');
  const body = JSON.stringify(payload);
  if (Buffer.byteLength(body) > rules.maxPayloadBytes)
    return failed(
      `returned a payload of ${Buffer.byteLength(body)} bytes, over the limit (${rules.maxPayloadBytes})`,
    );
  if (changed === undefined) return { kind: 'send', body, headers };
  const problem = headersProblem(changed, rules.auth);
  if (problem !== undefined) return failed(`returned headers that are not allowed: ${problem}`);
  return { kind: 'send', body, headers: changed as DestinationHeaders };
}

/** Why `headers` cannot be a destination's headers (undefined: they can). */
function headersProblem(headers: unknown, auth: boolean): string | undefined {
  if (headers === null || typeof headers !== 'object' || Array.isArray(headers))
    return 'headers must be an object';
  const entries = Object.entries(headers);
  if (entries.length > MAX_HEADERS) return `at most ${MAX_HEADERS} headers (${entries.length})`;
  for (const [name, value] of entries) {
    const problem = headerNameProblem(name, auth);
    if (problem !== undefined) return `${name}: ${problem}`;
    if (typeof value !== 'string' || !isHeaderValue(value))
      return `${name}: a value must be a string of visible ASCII and spaces`;
  }
  if (headerBytes(headers as DestinationHeaders) > MAX_HEADER_BYTES)
    return `more than ${MAX_HEADER_BYTES} bytes`;
  return undefined;
}
