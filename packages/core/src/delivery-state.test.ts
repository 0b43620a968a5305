import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  DELIVERY_STATUSES,
  type DeliveryStatus,
  type DeliveryTransition,
  sourcesOf,
  sqlSourcesOf,
  transition,
} from './delivery-state.ts';

/**
 * The machine, written out again from the module's header: the outcome of an attempt
 * (succeed, retry, disable, exhaust) and a lease expiry may come from `queued` or `delivering`.
 */
const LEGAL: Record<DeliveryTransition, { from: DeliveryStatus[]; to: DeliveryStatus }> = {
  publish: { from: ['pending'], to: 'queued' },
  start: { from: ['queued'], to: 'delivering' },
  succeed: { from: ['queued', 'delivering'], to: 'delivered' },
  retry: { from: ['queued', 'delivering'], to: 'pending' },
  disable: { from: ['queued', 'delivering'], to: 'pending' },
  exhaust: { from: ['queued', 'delivering'], to: 'dead' },
  expire: { from: ['queued', 'delivering'], to: 'pending' },
  release: { from: ['queued'], to: 'pending' },
  cancel: { from: ['pending', 'queued', 'delivering', 'dead'], to: 'cancelled' },
  replay: { from: ['dead'], to: 'pending' },
};
const TRANSITIONS = Object.keys(LEGAL) as DeliveryTransition[];
const canTransition = (from: DeliveryStatus, t: DeliveryTransition) => sourcesOf(t).includes(from);

describe('delivery state machine', () => {
  it('has the six statuses', () => {
    assert.deepEqual([...DELIVERY_STATUSES].sort(), [
      'cancelled',
      'dead',
      'delivered',
      'delivering',
      'pending',
      'queued',
    ]);
  });

  it('every legal transition leads where it should', () => {
    for (const t of TRANSITIONS) {
      for (const from of LEGAL[t].from) {
        assert.equal(canTransition(from, t), true, `${t} from ${from}`);
        assert.equal(transition(from, t), LEGAL[t].to, `${t} from ${from}`);
      }
    }
  });

  it('every other (status, transition) pair is illegal and throws', () => {
    let illegal = 0;
    for (const t of TRANSITIONS) {
      for (const from of DELIVERY_STATUSES) {
        if (LEGAL[t].from.includes(from)) continue;
        illegal++;
        assert.equal(canTransition(from, t), false, `${t} from ${from}`);
        assert.throws(() => transition(from, t), /illegal delivery transition/, `${t} from ${from}`);
      }
    }
    assert.equal(illegal, 10 * 6 - 18);
  });

  it('sourcesOf gives the statuses a transition starts from (the store WHERE clause)', () => {
    for (const t of TRANSITIONS) assert.deepEqual([...sourcesOf(t)].sort(), [...LEGAL[t].from].sort(), t);
  });

  it('delivered and cancelled are final: nothing leaves them', () => {
    for (const s of DELIVERY_STATUSES) {
      const leaves = TRANSITIONS.some((t) => canTransition(s, t));
      assert.equal(leaves, s !== 'delivered' && s !== 'cancelled', s);
    }
  });

  it('dead is not final: a replay takes it back to pending', () => {
    assert.ok(canTransition('dead', 'replay'));
    assert.equal(transition('dead', 'replay'), 'pending');
  });

  it('a dead delivery is cancelled with its destination', () => {
    assert.equal(transition('dead', 'cancel'), 'cancelled');
  });

  it('sqlSourcesOf lists the sources as SQL literals', () => {
    assert.equal(sqlSourcesOf('exhaust'), "'queued', 'delivering'");
    assert.equal(sqlSourcesOf('release', 'replay'), "'queued', 'dead'", 'of several: any of their sources');
  });

  it('walks the usual lives of a delivery', () => {
    const walk = (ts: DeliveryTransition[]): DeliveryStatus =>
      ts.reduce<DeliveryStatus>((s, t) => transition(s, t), 'pending');
    assert.equal(walk(['publish', 'start', 'succeed']), 'delivered');
    assert.equal(walk(['publish', 'start', 'retry', 'publish', 'start', 'succeed']), 'delivered');
    assert.equal(walk(['publish', 'start', 'exhaust', 'replay', 'publish', 'start', 'succeed']), 'delivered');
    assert.equal(walk(['publish', 'start', 'disable', 'publish', 'start', 'succeed']), 'delivered');
    assert.equal(walk(['publish', 'expire', 'publish', 'start', 'expire', 'cancel']), 'cancelled');
    assert.throws(() => walk(['publish', 'start', 'succeed', 'retry']));
    assert.throws(() => walk(['start']), /illegal delivery transition start from pending/);
  });

  it('every status is reachable from pending', () => {
    const seen = new Set<DeliveryStatus>(['pending']);
    for (let grew = true; grew; ) {
      grew = false;
      for (const s of [...seen]) {
        for (const t of TRANSITIONS) {
          if (canTransition(s, t) && !seen.has(transition(s, t))) {
            seen.add(transition(s, t));
            grew = true;
          }
        }
      }
    }
    assert.equal(seen.size, DELIVERY_STATUSES.length);
  });
});
