import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Health } from '@sluice/core';
import type { Destination } from '@sluice/store';
import { probeWakeAt, type WakePorts, wakeForWork } from './wake.ts';

const NOW = 1_000_000;

function health(state: Health['state'], nextProbeAt: number | null = null): Health {
  return { state, nextProbeAt } as Health;
}

describe('probeWakeAt', () => {
  it('is null unless suspended', () => {
    assert.equal(probeWakeAt(health('healthy'), NOW), null);
    assert.equal(probeWakeAt(health('degraded', NOW + 5), NOW), null);
  });

  it('waits for the probe time, never earlier than now', () => {
    assert.equal(probeWakeAt(health('suspended', NOW + 5_000), NOW), NOW + 5_000);
    assert.equal(probeWakeAt(health('suspended', NOW - 5_000), NOW), NOW);
    assert.equal(probeWakeAt(health('suspended', null), NOW), NOW);
  });
});

describe('wakeForWork (both shapes)', () => {
  /** Every port call, as `port id [at]`; each answers with its call's number. */
  function recording() {
    const calls: string[] = [];
    const ports: WakePorts<number> = {
      wake: (id, at) => calls.push(`wake ${id} ${at}`),
      wakeAtRoom: (id, destination, now) => calls.push(`wakeAtRoom ${id} ${destination?.id ?? '-'} ${now}`),
    };
    return { calls, ports };
  }
  const destination = (h: Health) => ({ id: 'dst_a', health: h }) as unknown as Destination;

  it('an open circuit waits for its probe time, never for the room', () => {
    const { calls, ports } = recording();
    wakeForWork('dst_a', destination(health('suspended', NOW + 5_000)), NOW, ports);
    wakeForWork('dst_a', destination(health('suspended', NOW - 5_000)), NOW, ports);
    assert.deepEqual(calls, [`wake dst_a ${NOW + 5_000}`, `wake dst_a ${NOW}`]);
  });

  it('any other destination, and one this process holds no copy of, at the room the port finds', () => {
    const { calls, ports } = recording();
    wakeForWork('dst_a', destination(health('healthy')), NOW, ports);
    wakeForWork('dst_a', destination(health('degraded', NOW + 5)), NOW, ports);
    wakeForWork('dst_b', undefined, NOW, ports);
    assert.deepEqual(calls, [
      `wakeAtRoom dst_a dst_a ${NOW}`,
      `wakeAtRoom dst_a dst_a ${NOW}`,
      `wakeAtRoom dst_b - ${NOW}`,
    ]);
  });

  it("answers what the port answers, at once when the port does (the single box's wake is synchronous)", () => {
    const { ports } = recording();
    assert.equal(wakeForWork('dst_a', undefined, NOW, ports), 1);
    assert.equal(wakeForWork('dst_a', destination(health('suspended', NOW)), NOW, ports), 2);
  });
});
