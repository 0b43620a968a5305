/**
 * One tenant's backlog beside another's trickle (the isolation issue, docs/adr/0014): a quiet
 * tenant's twenty destinations (5 events a second each) are measured alone, then while a busy
 * tenant's backlog of 16,000 events to four destinations at 250/s each drains for ~16 s: each
 * tick of a busy destination publishes a run of 250 beside the quiet ones' single
 * deliveries. The quiet p99 beside stays within 2× its p99 alone + 50 ms (one of the few places a
 * test asserts a time, with the margin below for a loaded 2-core machine), every quiet event
 * is delivered, and so is every event of the backlog.
 *
 * The beside run starts once the backlog is accepted: it measures the delivery side (the
 * fair queue, the per-destination bound), not the ingest of the backlog's batches, which
 * shares the machine's cores with the quiet posts whatever the queue's order (the bench's
 * busy-tenant scenario measures both; tenant quotas bound the ingest, docs/operations.md).
 */

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { now, type Receiver, sleep } from './helpers/receiver.ts';
import { SHAPE } from './helpers/shape.ts';
import {
  createDestination,
  createTenant,
  harness,
  postBatches,
  postEvent,
  type TestBox,
} from './helpers/sluice.ts';

const QUIET = 20;
/** Each quiet destination's events a second, and for how long. */
const RATE = 5;
const SECONDS = 6;
/** The busy tenant's backlog, over BUSY destinations at BUSY_LIMIT a second each. */
const BACKLOG = 16_000;
const BUSY = 4;
const BUSY_LIMIT = 250;
/**
 * What a loaded 2-core machine adds to a p99 measured over 600 events, beyond the issue's
 * bound. Measured (2 cores, other sessions running): single box 51 ms alone, 42–53 beside;
 * distributed 78–110 alone, 121–124 beside.
 */
const MARGIN_MS = 150;

function p99(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.max(0, Math.ceil(sorted.length * 0.99) - 1)] as number;
}

/** The ids answered 2xx on these paths. */
function delivered(rcv: Receiver, paths: string[]): Set<string> {
  const ids = new Set<string>();
  for (const path of paths) for (const id of rcv.deliveredIds(path)) ids.add(id);
  return ids;
}

/**
 * Posts RATE events a second to each quiet destination for SECONDS, waits for every one to
 * arrive, and returns their latencies (post to arrival at the receiver, ms).
 */
async function quietRun(
  box: TestBox,
  rcv: Receiver,
  key: string,
  destinations: { id: string; path: string }[],
  phase: string,
): Promise<number[]> {
  const sentAt = new Map<string, number>();
  const start = now();
  for (let round = 0; round < RATE * SECONDS; round++) {
    await sleep(Math.max(0, start + (round * 1_000) / RATE - now()));
    await Promise.all(
      destinations.map(async (d, i) => {
        const at = now();
        const accepted = await postEvent(box, key, {
          type: 'tenant.quiet',
          destinationId: d.id,
          payload: { phase, i, round },
        });
        sentAt.set(accepted.id, at);
      }),
    );
  }
  const arrived = () => {
    const out = new Map<string, number>();
    for (const d of destinations)
      for (const a of rcv.arrivals(d.path)) {
        const id = String(a.headers['webhook-id']);
        if (sentAt.has(id) && a.status === 200 && !out.has(id)) out.set(id, a.at);
      }
    return out;
  };
  await rcv.waitFor(() => arrived().size === sentAt.size, 30_000, `every quiet event (${phase})`);
  return [...arrived()].map(([id, at]) => at - (sentAt.get(id) as number));
}

describe(`one tenant's backlog beside another's trickle (${SHAPE})`, () => {
  it("a backlog of another tenant's events costs the quiet tenant no latency", {
    timeout: 90_000,
  }, async (t) => {
    const { box, rcv } = await harness(t);
    const quiet = await createTenant(box, box.adminToken, 'quiet');
    const busy = await createTenant(box, box.adminToken, 'busy');
    const quietDestinations = await Promise.all(
      Array.from({ length: QUIET }, async (_, i) => {
        const d = await createDestination(box, quiet.apiKey, {
          url: rcv.url(`quiet-${i}`),
          rateLimit: { limit: 10, period: 'second' },
        });
        return { id: d.id, path: rcv.path(`quiet-${i}`) };
      }),
    );
    const busyDestinations = await Promise.all(
      Array.from({ length: BUSY }, async (_, i) => {
        const d = await createDestination(box, busy.apiKey, {
          url: rcv.url(`busy-${i}`),
          rateLimit: { limit: BUSY_LIMIT, period: 'second' },
        });
        return { id: d.id, path: rcv.path(`busy-${i}`) };
      }),
    );
    const busyPaths = busyDestinations.map((d) => d.path);

    const alone = await quietRun(box, rcv, quiet.apiKey, quietDestinations, 'alone');

    const posting = now();
    const backlog = await postBatches(
      box,
      busy.apiKey,
      Array.from({ length: BACKLOG }, (_, i) => ({
        type: 'tenant.busy',
        destinationId: (busyDestinations[i % BUSY] as { id: string }).id,
        payload: { i },
      })),
    );
    const accepted = now();
    const beside = await quietRun(box, rcv, quiet.apiKey, quietDestinations, 'beside');
    const busyDuring = delivered(rcv, busyPaths).size;
    const busyIds = new Set(backlog.map((e) => e.id));
    await rcv.waitFor(
      () => {
        const ids = delivered(rcv, busyPaths);
        return [...busyIds].every((id) => ids.has(id));
      },
      60_000,
      'every event of the backlog',
    );
    const drained = now();

    const [a, b] = [p99(alone), p99(beside)];
    const bound = 2 * a + 50;
    t.diagnostic(
      `quiet p99 alone ${a.toFixed(1)} ms, beside ${b.toFixed(1)} ms (bound ${bound.toFixed(1)} ms + ${MARGIN_MS})`,
    );
    t.diagnostic(
      `backlog: ${BACKLOG} accepted in ${(accepted - posting).toFixed(0)} ms, ${busyDuring} delivered by the end of the beside run, all within ${(drained - accepted).toFixed(0)} ms of the accept`,
    );
    assert.equal(beside.length, QUIET * RATE * SECONDS, 'every quiet event delivered');
    assert.ok(busyDuring < BACKLOG, `the backlog still draining when the beside run ended: ${busyDuring}`);
    assert.ok(b <= bound + MARGIN_MS, `quiet p99 beside ${b.toFixed(1)} ms > 2 × ${a.toFixed(1)} + 50 ms`);
  });
});
