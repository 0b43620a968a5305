/**
 * Event type filters: `*` matches everything, `order.*` matches `order.paid` and
 * `order.item.added` (not `order` itself), anything else matches exactly.
 */

export const EVENT_TYPE_PATTERN = /^(\*|[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*(\.\*)?)$/;

/** An event's own type: dotted words, never a wildcard. */
export const EVENT_TYPE = /^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*$/;

export function matchesEventType(patterns: readonly string[], type: string): boolean {
  for (const pattern of patterns) {
    if (pattern === '*' || pattern === type) return true;
    if (pattern.endsWith('.*') && type.startsWith(pattern.slice(0, -1))) return true;
  }
  return false;
}
