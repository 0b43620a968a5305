import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { pino } from 'pino';
import { Registry } from 'prom-client';
import { EngineMetrics } from '../ops/metrics.ts';
import { reportRepairs } from './sweeper.ts';

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
