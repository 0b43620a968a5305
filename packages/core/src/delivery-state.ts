/**
 * The delivery state machine (docs/design.md "Words"):
 *
 *   pending ──publish──▶ queued ──start──▶ delivering ──2xx──▶ delivered
 *      ▲                   │                   │
 *      │                   │                   ├─fail, attempts left──▶ pending (later next_attempt_at)
 *      │                   │                   ├─410──────────────────▶ pending (destination disabled)
 *      │                   │                   └─fail, none left──────▶ dead
 *      └──────lease expired (crash)────────────┘
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
  | 'cancel'
  | 'replay';

const TRANSITIONS: Readonly<
  Record<DeliveryTransition, { from: readonly DeliveryStatus[]; to: DeliveryStatus }>
> = {
  publish: { from: ['pending'], to: 'queued' },
  start: { from: ['queued'], to: 'delivering' },
  succeed: { from: ['queued', 'delivering'], to: 'delivered' },
  retry: { from: ['queued', 'delivering'], to: 'pending' },
  disable: { from: ['queued', 'delivering'], to: 'pending' },
  exhaust: { from: ['queued', 'delivering'], to: 'dead' },
  expire: { from: ['queued', 'delivering'], to: 'pending' },
  // A dead delivery is cancelled with its destination: nothing may replay it any more.
  cancel: { from: ['pending', 'queued', 'delivering', 'dead'], to: 'cancelled' },
  replay: { from: ['dead'], to: 'pending' },
};

export function canTransition(from: DeliveryStatus, transition: DeliveryTransition): boolean {
  return TRANSITIONS[transition].from.includes(from);
}

/** The state after `transition`; throws on a transition the machine does not have. */
export function transition(from: DeliveryStatus, t: DeliveryTransition): DeliveryStatus {
  const rule = TRANSITIONS[t];
  if (!rule.from.includes(from)) throw new Error(`illegal delivery transition ${t} from ${from}`);
  return rule.to;
}

/** The statuses a transition may start from: the WHERE clause of the store's update. */
export function sourcesOf(t: DeliveryTransition): readonly DeliveryStatus[] {
  return TRANSITIONS[t].from;
}

/** `sourcesOf(t)` as an SQL list of literals (`'pending', 'queued'`), for `status IN (…)`. */
export function sqlSourcesOf(t: DeliveryTransition): string {
  return TRANSITIONS[t].from.map((status) => `'${status}'`).join(', ');
}

export function isFinal(status: DeliveryStatus): boolean {
  return status === 'delivered' || status === 'cancelled';
}
