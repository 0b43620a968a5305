/**
 * A transform that loops forever or allocates without end costs its own deliveries, never
 * another destination's latency (docs/adr/0017): healthy destinations with a transform of
 * their own are measured alone, then beside another tenant's destinations whose transforms
 * are `while (true) {}` and an allocation loop, each fed a backlog. The healthy p99 beside
 * stays within the isolation tests' bound (2× alone + 50 ms, with their margin for a loaded
 * 2-core machine), every healthy event arrives reshaped, and each hostile delivery ends
 * `dead` with `transform_failed` and why.
 */

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { sleep } from './helpers/receiver.ts';
import { SHAPE } from './helpers/shape.ts';
import { createDestination, createTenant, harness, postBatches, waitUntil } from './helpers/sluice.ts';
import { p99, RATE, SECONDS, steadyRun } from './helpers/steady-run.ts';

const HEALTHY = 10;
const MARGIN_MS = 150;
const BACKLOG = 100;

const HOSTILE = {
  loop: 'function handler(w) { while (true) {} }',
  allocate:
    'function handler(w) { const kept = []; for (;;) { try { kept.push(new Array(1e6).fill(w.payload.i)) } catch (e) {} } }',
};

describe(`transform isolation (${SHAPE})`, () => {
  it("a looping or allocating transform costs its own deliveries, not another's latency", {
    timeout: 150_000,
  }, async (t) => {
    const { box, rcv } = await harness(t);
    const quiet = await createTenant(box, box.adminToken, 'quiet');
    const loud = await createTenant(box, box.adminToken, 'loud');
    const healthy = await Promise.all(
      Array.from({ length: HEALTHY }, async (_, i) => {
        const name = `healthy-${i}`;
        const d = await createDestination(box, quiet.apiKey, {
          url: rcv.url(name),
          rateLimit: { limit: 20, period: 'second' },
          transform: { code: 'function handler(w) { return { payload: { shaped: w.payload } } }' },
        });
        return { id: d.id, path: rcv.path(name) };
      }),
    );
    // Where the healthy deliveries stand if a run does not see them all arrive.
    const measured = (phase: string) =>
      steadyRun(box, rcv, quiet.apiKey, healthy, 'transform.healthy', phase).catch(async (err: unknown) => {
        const seen = await box.query(
          `SELECT d.status, d.last_error, count(*) AS n FROM deliveries d JOIN destinations t ON t.id = d.destination_id
           WHERE t.tenant_id = ? GROUP BY d.status, d.last_error`,
          [quiet.id],
        );
        throw new Error(`${String(err)}; the healthy deliveries: ${JSON.stringify(seen)}`);
      });
    const alone = await measured('alone');

    const hostile = await Promise.all(
      Object.entries(HOSTILE).map(async ([name, code]) => {
        const d = await createDestination(box, loud.apiKey, {
          url: rcv.url(name),
          rateLimit: { limit: 50, period: 'second' },
          transform: { code },
        });
        return { name, id: d.id, path: rcv.path(name) };
      }),
    );
    const accepted = await postBatches(
      box,
      loud.apiKey,
      hostile.flatMap((d) =>
        Array.from({ length: BACKLOG }, (_, i) => ({
          type: 'transform.hostile',
          destinationId: d.id,
          payload: { i },
        })),
      ),
    );
    await sleep(500);
    const beside = await measured('beside');

    const [a, b] = [p99(alone), p99(beside)];
    const bound = 2 * a + 50;
    t.diagnostic(
      `healthy p99 alone ${a.toFixed(1)} ms, beside ${b.toFixed(1)} ms (bound ${bound.toFixed(1)} ms)`,
    );
    assert.equal(beside.length, HEALTHY * RATE * SECONDS, 'every healthy event delivered');
    assert.ok(b <= bound + MARGIN_MS, `healthy p99 beside ${b.toFixed(1)} ms > 2 × ${a.toFixed(1)} + 50 ms`);
    const shaped = rcv.arrivals(healthy[0]?.path ?? '')[0]?.body ?? '';
    assert.match(shaped, /^\{"shaped":\{/, 'the healthy ones arrive reshaped');

    // Every hostile delivery ends dead, nothing sent, each attempt saying why.
    const ids = accepted.flatMap((e) => e.deliveries.map((d) => d.id));
    const rows = await waitUntil(
      async () => {
        const found = await box.query(
          `SELECT d.id, d.status, a.error_code, a.error_message FROM deliveries d
           JOIN attempts a ON a.delivery_id = d.id WHERE d.destination_id IN (?, ?)`,
          hostile.map((h) => h.id),
        );
        return found.length === ids.length && found.every((r) => r.status === 'dead') ? found : undefined;
      },
      60_000,
      'every hostile delivery dead',
    );
    const why = new Map<string, number>();
    for (const r of rows) {
      assert.equal(r.error_code, 'transform_failed');
      const reason = String(r.error_message).replace(/\d+/g, 'N');
      why.set(reason, (why.get(reason) ?? 0) + 1);
    }
    t.diagnostic(`hostile outcomes: ${JSON.stringify(Object.fromEntries(why))}`);
    assert.ok(
      [...why.keys()].every((m) =>
        /^(ran out of (time|memory)|stopped after|not run: it exceeded its limits)/.test(m),
      ),
      [...why.keys()].join('; '),
    );
    for (const h of hostile) assert.equal(rcv.arrivals(h.path).length, 0, `${h.name}: nothing sent`);
  });
});
