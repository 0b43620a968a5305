/**
 * The delivery state machine (docs/design.md "Words"):
 *
 *   pending ──publish──▶ queued ──start──▶ delivering ──2xx──▶ delivered
 *      ▲                   │                   │
 *      │                   │                   ├─fail, attempts left──▶ pending (later next_attempt_at)
 *      │                   │                   ├─410──────────────────▶ pending (destination disabled)
 *      │                   │                   └─fail, none left──────▶ dead
 *      ├──────lease expired (crash)────────────┘
 *      └──────release (the window has no room under a limit lowered since the publish)── queued
 *
 *   pending | queued | delivering | dead ──cancel (destination deleted)──▶ cancelled
 *   dead ──replay / retry──▶ pending
 *
 * The outcomes of an attempt may also start from `queued`: the single box does not write
 * `delivering` to its store (a request starts within milliseconds of its publish, and a
 * `queued` row already means "may have been sent" to the recovery at start).
 *
 * `delivered` and `cancelled` are final. Being held back by the rate limiter is not a
 * transition: a delivery stays `pending` until a tick publishes it.
 */

export type DeliveryStatus = 'pending' | 'queued' | 'delivering' | 'delivered' | 'dead' | 'cancelled';

export const DELIVERY_STATUSES: readonly DeliveryStatus[] = [
  'pending',
  'queued',
  'delivering',
  'delivered',
  'dead',
  'cancelled',
];

export type DeliveryTransition =
  | 'publish'
  | 'start'
  | 'succeed'
  | 'retry'
  | 'disable'
  | 'exhaust'
  | 'expire'
  | 'release'
  | 'cancel'
  | 'replay';

const TRANSITIONS = {
  publish: { from: ['pending'], to: 'queued' },
  start: { from: ['queued'], to: 'delivering' },
  succeed: { from: ['queued', 'delivering'], to: 'delivered' },
  retry: { from: ['queued', 'delivering'], to: 'pending' },
  disable: { from: ['queued', 'delivering'], to: 'pending' },
  exhaust: { from: ['queued', 'delivering'], to: 'dead' },
  expire: { from: ['queued', 'delivering'], to: 'pending' },
  // A request that may not start goes back to pending, due as before (docs/adr/0012).
  release: { from: ['queued'], to: 'pending' },
  // A dead delivery is cancelled with its destination: nothing may replay it any more.
  cancel: { from: ['pending', 'queued', 'delivering', 'dead'], to: 'cancelled' },
  replay: { from: ['dead'], to: 'pending' },
} as const satisfies Record<DeliveryTransition, { from: readonly DeliveryStatus[]; to: DeliveryStatus }>;

/** The state after `transition`; throws on a transition the machine does not have. */
export function transition<T extends DeliveryTransition>(
  from: DeliveryStatus,
  t: T,
): (typeof TRANSITIONS)[T]['to'] {
  const rule = TRANSITIONS[t];
  if (!(rule.from as readonly DeliveryStatus[]).includes(from))
    throw new Error(`illegal delivery transition ${t} from ${from}`);
  return rule.to;
}

/**
 * The statuses any of `ts` may start from: the WHERE clause of the store's update (one update
 * may make several transitions, as a batch of completions does).
 */
export function sourcesOf(...ts: DeliveryTransition[]): DeliveryStatus[] {
  return DELIVERY_STATUSES.filter((status) =>
    ts.some((t) => (TRANSITIONS[t].from as readonly DeliveryStatus[]).includes(status)),
  );
}

/** `sourcesOf(...ts)` as an SQL list of literals (`'pending', 'queued'`), for `status IN (…)`. */
export function sqlSourcesOf(...ts: DeliveryTransition[]): string {
  return sourcesOf(...ts)
    .map((status) => `'${status}'`)
    .join(', ');
}
