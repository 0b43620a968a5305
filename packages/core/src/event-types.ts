/**
 * Event type filters: `*` matches every type except Sluice's own (`sluice.…`, the
 * operational events: a destination hears of them only by naming them), `order.*` matches
 * `order.paid` and `order.item.added` (not `order` itself), `sluice.*` matches every
 * operational event, anything else matches exactly.
 */

export const EVENT_TYPE_PATTERN = /^(\*|[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*(\.\*)?)$/;

/** An event's own type: dotted words, never a wildcard. */
export const EVENT_TYPE = /^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*$/;

/** Sluice's own types (the operational events, event-catalog.ts) begin with it: reserved. */
export const RESERVED_PREFIX = 'sluice.';

export function matchesEventType(patterns: readonly string[], type: string): boolean {
  for (const pattern of patterns) {
    if (pattern === type) return true;
    if (pattern === '*') {
      if (!type.startsWith(RESERVED_PREFIX)) return true;
      continue;
    }
    if (pattern.endsWith('.*') && type.startsWith(pattern.slice(0, -1))) return true;
  }
  return false;
}
