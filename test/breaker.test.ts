/**
 * Endpoint health, a circuit breaker and not a kill switch (docs/adr/0007): an endpoint that
 * is down for a while goes healthy → degraded → suspended; nothing becomes `dead` because it
 * was down; while suspended it gets one probe at a time at the configured growing interval;
 * one successful probe closes the circuit and the backlog is delivered at the limit. A 410
 * still disables. Small thresholds and intervals, given to the shape under test.
 */

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { sleep } from './helpers/receiver.ts';
import {
  createDestination,
  createTenant,
  type Delivery,
  freePort,
  getDelivery,
  harness,
  postEvents,
  type TestBox,
  waitUntil,
} from './helpers/sluice.ts';
import { worstWindow } from './helpers/window.ts';

const HEALTH = {
  SLUICE_BREAKER_DEGRADE_AFTER: 2,
  SLUICE_BREAKER_SUSPEND_AFTER: 8,
  SLUICE_BREAKER_WINDOW_MS: 60_000,
  // The ratio rule stays out of the way here (the core unit tests cover it).
  SLUICE_BREAKER_WINDOW_MIN_ATTEMPTS: 100_000,
  SLUICE_BREAKER_WINDOW_FAILURE_PERCENT: 50,
  SLUICE_BREAKER_PROBE_INITIAL_MS: 500,
  SLUICE_BREAKER_PROBE_MAX_MS: 2_000,
};
/** A small budget: without the breaker, every delivery would be dead after two attempts. */
const RETRY = { maxAttempts: 2, initialDelayMs: 100, maxDelayMs: 200 };
/**
 * The outage test's probes: the first 2 s after the suspension, then 4 s apart (the doubling,
 * capped). Its leftovers — deliveries published before the suspension, some ahead of their
 * window's room (docs/adr/0012) — start within a period of it (1 s at 5/s), later on a loaded
 * machine (CI here: 910 ms): an attempt later than LEFTOVERS_MS after it is a probe.
 */
const PROBE = { SLUICE_BREAKER_PROBE_INITIAL_MS: 2_000, SLUICE_BREAKER_PROBE_MAX_MS: 4_000 };
const LEFTOVERS_MS = 1_500;
const LIMIT = 5;

interface Health {
  state: 'healthy' | 'degraded' | 'suspended';
  since: string | null;
  consecutiveFailures: number;
  suspendReason: 'consecutive' | 'failure_rate' | null;
  failureRate: number | null;
  nextProbeAt: string | null;
  lastErrorClass: string | null;
  transitions: { at: string; from: string; to: string; reason: string; errorClass: string | null }[];
}

async function healthOf(box: TestBox, key: string, id: string): Promise<Health> {
  const res = await box.api<Health>('GET', `/v1/destinations/${id}/health`, undefined, key);
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return res.body;
}

/** The destination's health once it is suspended (within 30 s). */
function untilSuspended(box: TestBox, key: string, id: string): Promise<Health> {
  return waitUntil(
    async () => {
      const h = await healthOf(box, key, id);
      return h.state === 'suspended' ? h : undefined;
    },
    30_000,
    'the destination to be suspended',
  );
}

/**
 * Every distinct `nextProbeAt` the destination's health reports, in the order reported, and
 * when each was first read (`readAt`), read every 20 ms until `stop`. While a probe is out the
 * store reports its hold (the probe's timeout ahead) instead; the real ones are told apart by
 * where they fall.
 */
function watchNextProbeAt(
  box: TestBox,
  key: string,
  id: string,
): { seen: number[]; readAt: number[]; stop(): Promise<void> } {
  const seen: number[] = [];
  const readAt: number[] = [];
  let stopped = false;
  let failure: unknown;
  const loop = (async () => {
    while (!stopped) {
      const { nextProbeAt } = await healthOf(box, key, id);
      const at = nextProbeAt === null ? null : Date.parse(nextProbeAt);
      if (at !== null && seen.at(-1) !== at) {
        seen.push(at);
        readAt.push(Date.now());
      }
      await sleep(20);
    }
  })().catch((err: unknown) => {
    // After a stop (the box closing under it) an error is expected; before, stop reports it.
    if (!stopped) failure = err;
  });
  return {
    seen,
    readAt,
    stop: async () => {
      stopped = true;
      await loop;
      if (failure !== undefined) throw failure;
    },
  };
}

async function deliveries(box: TestBox, key: string, id: string, status?: string): Promise<Delivery[]> {
  const query = `destinationId=${id}&limit=500${status ? `&status=${status}` : ''}`;
  const res = await box.api<{ data: Delivery[] }>('GET', `/v1/deliveries?${query}`, undefined, key);
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return res.body.data;
}

describe('breaker', () => {
  it('an endpoint down for a while: nothing dead, probes at the growing interval, then the backlog at the limit', {
    timeout: 120_000,
  }, async (t) => {
    const { box, rcv } = await harness(t, { ...HEALTH, ...PROBE });
    const tenant = await createTenant(box, box.adminToken);
    const path = rcv.path('down');
    await rcv.setDefault(path, 503);
    const dest = await createDestination(box, tenant.apiKey, {
      url: rcv.url('down'),
      rateLimit: { limit: LIMIT, period: 'second' },
      retry: RETRY,
    });
    const events = Array.from({ length: 30 }, (_, i) => ({
      type: 'breaker.test',
      destinationId: dest.id,
      payload: { i },
    }));
    const watch = watchNextProbeAt(box, tenant.apiKey, dest.id);
    t.after(() => watch.stop().catch(() => undefined));
    await postEvents(box, tenant.apiKey, events);

    const suspended = await untilSuspended(box, tenant.apiKey, dest.id);
    assert.equal(suspended.lastErrorClass, '5xx');
    assert.deepEqual(
      suspended.transitions.map((x) => [x.from, x.to, x.reason]),
      [
        ['degraded', 'suspended', 'failures'],
        ['healthy', 'degraded', 'failures'],
      ],
    );
    const since = Date.parse(suspended.since ?? '');
    assert.ok(suspended.nextProbeAt !== null, 'a suspended destination says when it probes next');

    // Down for a while: the first four probes, as the store recorded them: the attempts
    // started later than LEFTOVERS_MS after the suspension (the leftovers published before it
    // start sooner; then only probes, one at a time).
    const probeAttempts = async () => {
      const started = [];
      for (const d of await deliveries(box, tenant.apiKey, dest.id)) {
        for (const a of (await getDelivery(box, tenant.apiKey, d.id)).attempts) {
          const startedAt = Date.parse(a.startedAt);
          if (startedAt > since + LEFTOVERS_MS)
            started.push({ startedAt, finishedAt: Date.parse(a.finishedAt) });
        }
      }
      return started.sort((a, b) => a.startedAt - b.startedAt);
    };
    const probes = (
      await waitUntil(
        async () => {
          const found = await probeAttempts();
          return found.length >= 4 ? found : undefined;
        },
        30_000,
        'four probes recorded',
        200,
      )
    ).slice(0, 4);
    await watch.stop();
    assert.deepEqual(await deliveries(box, tenant.apiKey, dest.id, 'dead'), [], 'nothing died of the outage');
    assert.equal((await healthOf(box, tenant.apiKey, dest.id)).state, 'suspended');
    t.diagnostic(
      `probes started ${probes.map((p) => p.startedAt - since).join(', ')} ms after the suspension; ` +
        `nextProbeAt reported ${watch.seen.map((at) => at - since).join(', ')} ms after it`,
    );

    // The nextProbeAt in force before each probe, as the health endpoint reported it: the
    // suspension's, probeInitialMs after it; then each failed probe's, written with its
    // outcome, probeInitialMs doubling up to probeMaxMs after it: 4, 4 and 4 s.
    const inForce = [since + PROBE.SLUICE_BREAKER_PROBE_INITIAL_MS];
    assert.ok(
      watch.seen.includes(inForce[0] as number),
      `nextProbeAt ${(inForce[0] as number) - since} ms after the suspension reported`,
    );
    [4_000, 4_000, 4_000].forEach((wait, k) => {
      const failed = probes[k] as { finishedAt: number };
      // Written with the failed probe's outcome (a completion batch: a moment after it ended,
      // longer on a busy machine), so at least `wait` after its end and at most `wait` after
      // the watch first read it.
      const next = watch.seen.find(
        (at, i) => at >= failed.finishedAt + wait && at <= (watch.readAt[i] as number) + wait + 50,
      );
      assert.ok(next !== undefined, `after probe ${k}, a nextProbeAt ${wait} ms after its end reported`);
      inForce.push(next);
    });
    // Each probe starts once its nextProbeAt has come, never sooner (one probe at a time, none
    // early); later by a tick's delay at most, and the first by the send window too (the
    // leftovers started around the suspension fill it for up to a period after it).
    probes.forEach((probe, k) => {
      const due = inForce[k] as number;
      const room = Math.max(due, since + 1_000 + 300);
      assert.ok(
        probe.startedAt >= due,
        `probe ${k} started ${due - probe.startedAt} ms before its nextProbeAt`,
      );
      assert.ok(
        probe.startedAt <= (k === 0 ? room : due) + 1_000,
        `probe ${k} started ${probe.startedAt - due} ms after its nextProbeAt`,
      );
    });

    // The receiver is back: one probe succeeds, the circuit closes, the backlog flows.
    await rcv.setDefault(path, 200);
    const recovered = Date.now();
    await rcv.waitFor(() => rcv.deliveredIds(path).size === 30, 60_000, 'all 30 events delivered');
    const healthy = await healthOf(box, tenant.apiKey, dest.id);
    assert.equal(healthy.state, 'healthy');
    assert.deepEqual(
      healthy.transitions.slice(0, 1).map((x) => [x.from, x.to, x.reason]),
      [['suspended', 'healthy', 'success']],
    );
    const after = rcv.times(path).filter((at) => at >= recovered - 50);
    const worst = worstWindow(after, 1_000);
    assert.ok(worst.count <= LIMIT, `at most ${LIMIT} in any second after recovery, got ${worst.count}`);
    // The receiver answered before the last outcomes were written: wait for them.
    const all = await waitUntil(
      async () => {
        const list = await deliveries(box, tenant.apiKey, dest.id);
        return list.every((d) => d.status === 'delivered') ? list : undefined;
      },
      10_000,
      'every delivery recorded as delivered',
    );
    assert.equal(all.length, 30);
    // The state and the transitions are in the metrics too.
    const metrics = await box.api<string>('GET', '/metrics');
    assert.match(metrics.body, /sluice_destinations_by_health\{state="healthy"\} 1/);
  });

  it('a refused connection suspends it too; a new URL closes the circuit', {
    timeout: 60_000,
  }, async (t) => {
    const { box, rcv } = await harness(t, HEALTH);
    const tenant = await createTenant(box, box.adminToken);
    const closed = await freePort(); // nothing listens there (loopback only)
    const dest = await createDestination(box, tenant.apiKey, {
      url: `http://127.0.0.1:${closed}/hook`,
      rateLimit: { limit: LIMIT, period: 'second' },
      retry: RETRY,
    });
    const [accepted] = await postEvents(box, tenant.apiKey, [
      { type: 'breaker.test', destinationId: dest.id, payload: { refused: true } },
    ]);
    const suspended = await untilSuspended(box, tenant.apiKey, dest.id);
    assert.equal(suspended.lastErrorClass, 'connection');
    const id = accepted?.deliveries[0]?.id ?? assert.fail('no delivery');
    const held = await box.api<Delivery>('GET', `/v1/deliveries/${id}`, undefined, tenant.apiKey);
    assert.equal(held.body.status === 'dead', false, 'eight attempts with a budget of two, and not dead');

    const path = rcv.path('fixed');
    const patched = await box.api(
      'PATCH',
      `/v1/destinations/${dest.id}`,
      { url: rcv.url('fixed') },
      tenant.apiKey,
    );
    assert.equal(patched.status, 200);
    const reset = await healthOf(box, tenant.apiKey, dest.id);
    assert.equal(reset.state, 'healthy', 'a new URL is a new endpoint');
    assert.deepEqual(
      reset.transitions.slice(0, 1).map((x) => [x.from, x.to, x.reason]),
      [['suspended', 'healthy', 'operator']],
    );
    await rcv.waitFor(() => rcv.deliveredIds(path).size === 1, 20_000, 'the held delivery at the new URL');
  });

  it('a receiver failing three requests in four is suspended by its failure rate, and probed', {
    timeout: 60_000,
  }, async (t) => {
    // Never 8 failures in a row, but 6 of every 8 attempts: the window's ratio (70 %) opens it.
    const { box, rcv } = await harness(t, {
      ...HEALTH,
      SLUICE_BREAKER_WINDOW_MIN_ATTEMPTS: 8,
      SLUICE_BREAKER_WINDOW_SUSPEND_PERCENT: 70,
    });
    const tenant = await createTenant(box, box.adminToken);
    const path = rcv.path('flaky');
    await rcv.script(path, Array.from({ length: 10 }, () => [503, 503, 503, 200]).flat());
    const dest = await createDestination(box, tenant.apiKey, {
      url: rcv.url('flaky'),
      rateLimit: { limit: 20, period: 'second' },
      retry: { maxAttempts: 20, initialDelayMs: 50, maxDelayMs: 100 },
      maxConcurrency: 1,
    });
    await postEvents(
      box,
      tenant.apiKey,
      Array.from({ length: 10 }, (_, i) => ({
        type: 'breaker.test',
        destinationId: dest.id,
        payload: { i },
      })),
    );
    const suspended = await untilSuspended(box, tenant.apiKey, dest.id);
    assert.equal(suspended.suspendReason, 'failure_rate');
    assert.ok(
      suspended.consecutiveFailures < HEALTH.SLUICE_BREAKER_SUSPEND_AFTER,
      'not by failures in a row',
    );
    assert.ok((suspended.failureRate ?? 0) >= 0.7, `failure rate ${suspended.failureRate}`);
    assert.ok(suspended.nextProbeAt !== null, 'a probe is planned');
  });

  it('a 410 still disables the destination; resume re-enables it', { timeout: 60_000 }, async (t) => {
    const { box, rcv } = await harness(t, HEALTH);
    const tenant = await createTenant(box, box.adminToken);
    const path = rcv.path('gone');
    await rcv.script(path, [410]);
    const dest = await createDestination(box, tenant.apiKey, {
      url: rcv.url('gone'),
      rateLimit: { limit: LIMIT, period: 'second' },
      retry: RETRY,
    });
    await postEvents(box, tenant.apiKey, [{ type: 'breaker.test', destinationId: dest.id, payload: {} }]);
    const disabled = await waitUntil(
      async () => {
        const res = await box.api<{
          state: string;
          disabledReason: string | null;
          health: { state: string };
        }>('GET', `/v1/destinations/${dest.id}`, undefined, tenant.apiKey);
        return res.body.state === 'disabled' ? res.body : undefined;
      },
      20_000,
      'the destination to be disabled',
    );
    assert.equal(disabled.disabledReason, 'gone');
    assert.equal(disabled.health.state, 'healthy', 'a 410 is an answer: the endpoint is up');
    assert.deepEqual(await deliveries(box, tenant.apiKey, dest.id, 'dead'), []);
    const resumed = await box.api('POST', `/v1/destinations/${dest.id}/resume`, undefined, tenant.apiKey);
    assert.equal(resumed.status, 200);
    await rcv.waitFor(() => rcv.deliveredIds(path).size === 1, 20_000, 'delivered after resume');
  });
});
