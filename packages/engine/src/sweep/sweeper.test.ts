import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { pino } from 'pino';
import { Registry } from 'prom-client';
import { EngineMetrics } from '../ops/metrics.ts';
import { reportRepairs, Sweeper, type SweepPorts, sweepOnce } from './sweeper.ts';

function rig() {
  const registry = new Registry();
  const metrics = new EngineMetrics(
    registry,
    () => ({ queued: 0, inFlight: 0, scheduled: 0 }),
    async () => null,
  );
  const warnings: Record<string, unknown>[] = [];
  const logger = pino({ level: 'warn' }, { write: (line: string) => void warnings.push(JSON.parse(line)) });
  const counted = async () =>
    Object.fromEntries((await metrics.repairs.get()).values.map((v) => [String(v.labels.kind), v.value]));
  return { registry, metrics, logger, warnings, counted };
}

describe('reportRepairs (both shapes’ sweepers)', () => {
  it('counts each kind of repair and warns once per sweep', async () => {
    const r = rig();
    reportRepairs(r.logger, r.metrics, { rewoken: 2, requeued: 5, orphans: 0 });
    reportRepairs(r.logger, r.metrics, { rewoken: 0, requeued: 1, orphans: 3 });
    assert.deepEqual(await r.counted(), { rewoken: 2, requeued: 6, orphans: 3 });
    assert.deepEqual(
      r.warnings.map((w) => [w.msg, w.rewoken, w.requeued, w.orphans]),
      [
        ['sweeper repaired the schedule', 2, 5, 0],
        ['sweeper repaired the schedule', 0, 1, 3],
      ],
    );
    assert.match(await r.registry.metrics(), /^sluice_sweeper_repairs_total\{kind="requeued"\} 6$/m);
  });

  it('a sweep that repaired nothing says nothing and counts nothing; every kind is exported from 0', async () => {
    const r = rig();
    reportRepairs(r.logger, r.metrics, { rewoken: 0, requeued: 0, orphans: 0 });
    // From 0, not absent: Prometheus' increase() would miss a series' first value.
    assert.deepEqual(await r.counted(), { rewoken: 0, requeued: 0, orphans: 0 });
    assert.deepEqual(r.warnings, []);
  });
});

/** A sweep's ports over fixed answers, recording every call in order. */
function ports(listing: { destinationId: string; nextPendingAt: number }[], extra: Partial<SweepPorts> = {}) {
  const r = rig();
  const calls: string[] = [];
  const sweepPorts: SweepPorts = {
    store: {
      pendingDestinations: async () => listing,
      cancelOrphans: async (now) => {
        calls.push(`cancelOrphans ${now}`);
        return 0;
      },
    },
    logger: r.logger,
    metrics: r.metrics,
    clock: () => NOW,
    scheduledAmong: (ids) => new Set(ids.filter((id) => id.startsWith('scheduled'))),
    wake: (id, at) => void calls.push(`wake ${id} ${at}`),
    requeueStale: async (now) => {
      calls.push(`requeueStale ${now}`);
      return new Map();
    },
    ...extra,
  };
  return { ...r, calls, sweepPorts };
}

const NOW = 1_000_000;

describe('sweepOnce (both shapes)', () => {
  it('wakes pending work with no schedule entry at its due time, and counts it', async () => {
    const p = ports([
      { destinationId: 'scheduled_a', nextPendingAt: NOW - 5 },
      { destinationId: 'lost_b', nextPendingAt: NOW - 3 },
    ]);
    assert.deepEqual(await sweepOnce(p.sweepPorts), { rewoken: 1, requeued: 0, orphans: 0 });
    assert.deepEqual(p.calls, [`wake lost_b ${NOW - 3}`, `requeueStale ${NOW}`, `cancelOrphans ${NOW}`]);
    assert.deepEqual(await p.counted(), { rewoken: 1, requeued: 0, orphans: 0 });
  });

  it('reads the work again where a tick elsewhere may have taken it: none left is no repair, later is woken uncounted', async () => {
    const again = new Map([
      ['taken_a', null],
      ['later_b', NOW + 50],
      ['same_c', NOW - 1],
    ]);
    const p = ports(
      [
        { destinationId: 'taken_a', nextPendingAt: NOW - 1 },
        { destinationId: 'later_b', nextPendingAt: NOW - 1 },
        { destinationId: 'same_c', nextPendingAt: NOW - 1 },
      ],
      { pendingAgain: async (id) => again.get(id) ?? null },
    );
    assert.equal((await sweepOnce(p.sweepPorts)).rewoken, 1);
    assert.deepEqual(p.calls.slice(0, 2), [`wake later_b ${NOW + 50}`, `wake same_c ${NOW - 1}`]);
  });

  it('wakes the destinations of returned claims now, then forgets idle pace, then cancels orphans', async () => {
    const p = ports([], {
      requeueStale: async () =>
        new Map([
          ['dst_a', 2],
          ['dst_b', 1],
        ]),
      forgetIdle: (now) => void p.calls.push(`forgetIdle ${now}`),
      store: { pendingDestinations: async () => [], cancelOrphans: async () => 4 },
    });
    assert.deepEqual(await sweepOnce(p.sweepPorts), { rewoken: 0, requeued: 3, orphans: 4 });
    assert.deepEqual(p.calls, [`wake dst_a ${NOW}`, `wake dst_b ${NOW}`, `forgetIdle ${NOW}`]);
    assert.deepEqual(await p.counted(), { rewoken: 0, requeued: 3, orphans: 4 });
  });

  it('a pass over ports that answer at once runs as one step: nothing runs between its wakes', async () => {
    const p = ports(
      [
        { destinationId: 'lost_a', nextPendingAt: NOW },
        { destinationId: 'lost_b', nextPendingAt: NOW },
      ],
      {
        scheduledAmong: (ids) => {
          queueMicrotask(() => p.calls.push('a tick settles'));
          return new Set(ids.filter((id) => id.startsWith('scheduled')));
        },
      },
    );
    await sweepOnce(p.sweepPorts);
    assert.deepEqual(p.calls.slice(0, 2), [`wake lost_a ${NOW}`, `wake lost_b ${NOW}`]);
    assert.ok(p.calls.includes('a tick settles'));
  });
});

describe('Sweeper', () => {
  it('sweeps every interval, one sweep at a time, and stops after the one in progress', async (t) => {
    t.mock.timers.enable({ apis: ['setInterval'] });
    let started = 0;
    let finish: () => void = () => undefined;
    const sweeper = new Sweeper(() => {
      started++;
      return new Promise<void>((resolve) => {
        finish = resolve;
      });
    }, rig().logger);
    sweeper.start(1_000);
    t.mock.timers.tick(1_000);
    t.mock.timers.tick(1_000); // the first is still running: not joined by a second
    assert.equal(started, 1);
    finish();
    await new Promise((resolve) => setImmediate(resolve));
    t.mock.timers.tick(1_000);
    assert.equal(started, 2);
    let stopped = false;
    const stopping = sweeper.stop().then(() => {
      stopped = true;
    });
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(stopped, false, 'waits for the sweep in progress');
    finish();
    await stopping;
    t.mock.timers.tick(5_000);
    assert.equal(started, 2, 'no sweep after stop');
  });
});
