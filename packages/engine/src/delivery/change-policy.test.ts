import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { RateLimit } from '@sluice/core';
import type { Destination } from '@sluice/store';
import { pino } from 'pino';
import { type ChangePorts, followDestinationChange } from './change-policy.ts';

const NOW = 1_000_000;

function destination(limit: number, state = 'active'): Destination {
  return { id: 'dst_a', state, rateLimit: { limit, period: 'second' } as RateLimit } as Destination;
}

/** A change from `before` to `after`; `arriving` polls answer that an old request may still arrive. */
function ports(before: Destination | undefined, after: Destination | undefined, arriving = 0) {
  const calls: string[] = [];
  let polls = 0;
  const p: ChangePorts = {
    destinations: {
      peek: () => before,
      refresh: async (id) => {
        calls.push(`refresh ${id}`);
        return after;
      },
    },
    logger: pino({ level: 'silent' }),
    clock: () => NOW,
    schedule: { wake: (id: string, at: number) => void calls.push(`wake ${id} ${at}`) },
    publish: async (id, d) => {
      calls.push(`publish ${id} ${d?.rateLimit.limit ?? 'gone'}`);
    },
    mayStillArrive: (id) => () => {
      calls.push(`arriving? ${id}`);
      return polls++ < arriving;
    },
    arrivalBoundMs: 500,
  };
  return { calls, ports: p };
}

describe('followDestinationChange', () => {
  it('refreshes, publishes, then ticks an active destination at once; a raised limit waits for nothing', async () => {
    const { calls, ports: p } = ports(destination(5), destination(10));
    await followDestinationChange('dst_a', p);
    assert.deepEqual(calls, ['refresh dst_a', 'publish dst_a 10', `wake dst_a ${NOW}`]);
  });

  it('does not tick a paused destination', async () => {
    const { calls, ports: p } = ports(destination(5), destination(10, 'paused'));
    await followDestinationChange('dst_a', p);
    assert.deepEqual(calls, ['refresh dst_a', 'publish dst_a 10']);
  });

  it('publishes a deleted destination and waits for nothing', async () => {
    const { calls, ports: p } = ports(destination(5), undefined);
    await followDestinationChange('dst_a', p);
    assert.deepEqual(calls, ['refresh dst_a', 'publish dst_a gone']);
  });

  it('answers a lowered limit once no request started under the old one may still arrive', async () => {
    const { calls, ports: p } = ports(destination(10), destination(5), 2);
    await followDestinationChange('dst_a', p);
    assert.deepEqual(calls, [
      'refresh dst_a',
      'publish dst_a 5',
      `wake dst_a ${NOW}`,
      'arriving? dst_a',
      'arriving? dst_a',
      'arriving? dst_a',
    ]);
  });
});
