/**
 * The Store conformance cases of endpoint health (docs/adr/0007), run by `storeConformance`
 * against every store. The model is @sluice/core's `nextHealth`: after each batch the stored
 * health must be what the pure function says, whether the store applies it in TypeScript
 * (SQLite) or in SQL (Postgres).
 */

import assert from 'node:assert/strict';
import { beforeEach, describe, it } from 'node:test';
import {
  classifyAttempt,
  HEALTHY,
  type Health,
  type HealthPolicy,
  healthMoves,
  newId,
  nextHealth,
  summarize,
} from '@sluice/core';
import type { ClaimedDelivery, CompletedAttempt, Destination } from '../index.ts';
import { newDestination, newEvent, type OpenStore, T0, useStore } from './fixtures.ts';

const POLICY: HealthPolicy = {
  degradeAfter: 2,
  suspendAfter: 4,
  windowMs: 10_000,
  windowMinAttempts: 6,
  windowFailurePercent: 50,
  windowSuspendPercent: 75,
  probeInitialMs: 1_000,
  probeMaxMs: 4_000,
};

interface Result {
  statusCode?: number | null;
  errorCode?: string | null;
  /** What the runner decided without health: dead when the budget is spent. */
  status?: CompletedAttempt['status'];
}

function completion(c: ClaimedDelivery, r: Result, at: number): CompletedAttempt {
  const statusCode = r.statusCode === undefined ? 200 : r.statusCode;
  const ok = statusCode !== null && statusCode >= 200 && statusCode < 300;
  return {
    attempt: {
      id: newId('att'),
      deliveryId: c.id,
      destinationId: c.destinationId,
      attempt: c.attempts + 1,
      startedAt: at - 5,
      finishedAt: at,
      statusCode,
      errorCode: r.errorCode ?? null,
      errorMessage: r.errorCode ?? null,
      responseExcerpt: null,
    },
    status: r.status ?? (ok ? 'delivered' : 'pending'),
    nextAttemptAt: (r.status ?? (ok ? 'delivered' : 'pending')) === 'pending' ? at + 60_000 : null,
    disableDestination: statusCode === 410,
    probe: c.probe === true,
    holdAt: at + 30_000,
  };
}

export function healthConformance(name: string, open: OpenStore): void {
  describe(`${name}: endpoint health`, () => {
    const ctx = useStore(open);
    let dest: Destination;
    /** The model: what nextHealth says the stored health is. */
    let model: Health;

    beforeEach(async () => {
      dest = await ctx.store.createDestination(
        newDestination(ctx.tenant.id, {
          name: 'h',
          url: 'https://hooks.example.com/h',
          rateLimit: { limit: 100, period: 'second' },
          retry: { maxAttempts: 1, initialDelayMs: 1_000, maxDelayMs: 60_000 },
        }),
        T0,
      );
      model = { ...HEALTHY };
    });

    const accept = async (count: number, now = T0): Promise<void> => {
      const events = Array.from({ length: count }, (_, i) => newEvent([dest.id], { payload: `{"n":${i}}` }));
      await ctx.store.acceptEvents(ctx.tenant.id, events, now);
    };

    const health = async (): Promise<Health> =>
      (await ctx.store.getDestination(dest.id))?.health ?? assert.fail();

    /** Claims one delivery per result, completes them as one batch at `at`, checks the model. */
    const batch = async (results: Result[], at: number) => {
      const claimed = (await ctx.store.claimDue(dest.id, results.length, at)).deliveries;
      assert.equal(claimed.length, results.length, 'enough deliveries due');
      const completed = claimed.map((c, i) => completion(c, results[i] ?? {}, at));
      const changes = await ctx.store.completeAttempts(completed, at, POLICY);
      const b = summarize(
        completed.map((c) => ({
          errorClass: classifyAttempt(c.attempt.statusCode, c.attempt.errorCode),
          probe: c.probe === true,
          gone: c.disableDestination,
        })),
      );
      // A 410 writes the destination's row anyway: its health is folded forward with it.
      if (healthMoves(model, b, at, POLICY) || b.gone) model = nextHealth(model, b, at, POLICY);
      assert.deepEqual(await health(), model, `health after the batch at T0+${at - T0}`);
      return { claimed, changes };
    };

    it('a new destination is healthy; successes on it write nothing', async () => {
      assert.deepEqual(dest.health, HEALTHY);
      await accept(3);
      const { changes } = await batch([{}, {}, { statusCode: 404 }], T0 + 10);
      assert.deepEqual(changes, []);
      assert.deepEqual(await health(), HEALTHY);
    });

    it('follows nextHealth through degraded and suspended, and reports the transitions', async () => {
      await accept(20);
      await batch([{ statusCode: 503 }], T0 + 10);
      assert.equal(model.state, 'healthy');
      const degraded = await batch([{ statusCode: null, errorCode: 'ECONNREFUSED' }], T0 + 20);
      assert.equal(model.state, 'degraded');
      assert.deepEqual(degraded.changes, [{ destinationId: dest.id, from: 'healthy', health: model }]);
      const suspended = await batch(
        [{ statusCode: null, errorCode: 'timeout' }, { statusCode: 500 }],
        T0 + 30,
      );
      assert.equal(model.state, 'suspended');
      assert.equal(model.nextProbeAt, T0 + 30 + 1_000);
      assert.deepEqual(suspended.changes, [{ destinationId: dest.id, from: 'degraded', health: model }]);
      const transitions = await ctx.store.healthTransitions(dest.id, 10);
      assert.deepEqual(
        transitions.map((t) => [t.from, t.to, t.reason, t.at, t.errorClass]),
        [
          ['degraded', 'suspended', 'failures', T0 + 30, '5xx'],
          ['healthy', 'degraded', 'failures', T0 + 20, 'connection'],
        ],
      );
      assert.deepEqual(await ctx.store.healthCounts(), { healthy: 0, degraded: 0, suspended: 1 });
    });

    it('retention deletes transitions older than the cutoff, oldest first, in batches', async () => {
      await accept(20);
      await batch([{ statusCode: 503 }], T0 + 10);
      await batch([{ statusCode: 503 }], T0 + 20); // healthy -> degraded at T0+20
      await batch([{ statusCode: 503 }, { statusCode: 503 }], T0 + 30); // -> suspended at T0+30
      const first = await ctx.store.deleteExpired(T0 + 25, 1);
      assert.equal(first.transitions, 1, 'one a batch');
      assert.equal((await ctx.store.deleteExpired(T0 + 25, 1)).transitions, 0, 'the later one is kept');
      assert.deepEqual(
        (await ctx.store.healthTransitions(dest.id, 10)).map((t) => [t.from, t.to, t.at]),
        [['degraded', 'suspended', T0 + 30]],
      );
    });

    it('holds breaker failures of a degraded or suspended destination: pending, not dead, budget kept', async () => {
      await accept(4);
      // Healthy after this batch: the spent budget kills the delivery.
      const first = await batch([{ statusCode: 502, status: 'dead' }], T0 + 10);
      assert.equal((await ctx.store.getDelivery(first.claimed[0]?.id ?? ''))?.delivery.status, 'dead');
      // This batch degrades the destination: its breaker failure is held.
      const second = await batch([{ statusCode: 502, status: 'dead' }], T0 + 20);
      const held = (await ctx.store.getDelivery(second.claimed[0]?.id ?? ''))?.delivery;
      assert.equal(held?.status, 'pending');
      assert.equal(held?.nextAttemptAt, T0 + 20 + 30_000, 'degraded: held until its holdAt');
      assert.equal((held?.attempts ?? 0) - (held?.attemptBase ?? 0), 0, 'the held attempt does not count');
      // A 4xx is the receiver's answer, not an outage: it dies as before.
      const answered = await batch([{ statusCode: 400, status: 'dead' }], T0 + 30);
      assert.equal((await ctx.store.getDelivery(answered.claimed[0]?.id ?? ''))?.delivery.status, 'dead');
      // Suspended: held and due at once (the probe takes the oldest).
      const third = await batch([{ statusCode: null, errorCode: 'ECONNRESET', status: 'dead' }], T0 + 40);
      assert.equal(model.state, 'degraded');
      await accept(2, T0 + 40);
      await batch([{ statusCode: 503 }, { statusCode: 503, status: 'dead' }], T0 + 50);
      assert.equal(model.state, 'suspended');
      const suspendedHeld = (await ctx.store.getDelivery(third.claimed[0]?.id ?? ''))?.delivery;
      assert.equal(suspendedHeld?.status, 'pending');
      const dead = await ctx.store.listDeliveries({ destinationId: dest.id, status: 'dead' }, { limit: 10 });
      assert.equal(dead.items.length, 2, 'only the two that died while it was healthy or answering');
    });

    it('probes: one at a time when due, doubling on failure, and one success closes the circuit', async () => {
      await accept(10);
      await batch(Array(4).fill({ statusCode: 503 }), T0 + 10);
      assert.equal(model.state, 'suspended');
      const notYet = await ctx.store.claimProbe(dest.id, T0 + 500, T0 + 20_000);
      assert.deepEqual(notYet.deliveries, []);
      assert.equal(notYet.nextProbeAt, T0 + 1_010);
      // Due: the oldest pending delivery, even one held to a later time.
      const probe = await ctx.store.claimProbe(dest.id, T0 + 1_010, T0 + 20_000);
      assert.equal(probe.deliveries.length, 1);
      assert.equal(probe.deliveries[0]?.probe, true);
      // Its first claim: it takes the destination's next sequence, after the four claimed above.
      assert.equal(probe.deliveries[0]?.sequence, 5, 'a probe is numbered like any claim');
      assert.equal((await ctx.store.getDelivery(probe.deliveries[0]?.id ?? ''))?.delivery.sequence, 5);
      assert.equal(probe.nextProbeAt, T0 + 20_000, 'held until the probe completes');
      assert.ok(probe.nextPendingAt !== null);
      assert.deepEqual(
        (await ctx.store.claimProbe(dest.id, T0 + 1_020, T0 + 30_000)).deliveries,
        [],
        'one at a time',
      );
      const failed = completion(probe.deliveries[0] as ClaimedDelivery, { statusCode: 503 }, T0 + 1_100);
      const changes = await ctx.store.completeAttempts([failed], T0 + 1_100, POLICY);
      model = nextHealth(model, summarize([{ errorClass: '5xx', probe: true }]), T0 + 1_100, POLICY);
      assert.deepEqual(await health(), model);
      assert.equal(model.nextProbeAt, T0 + 1_100 + 2_000, 'the next probe waits twice as long');
      assert.deepEqual(
        changes,
        [{ destinationId: dest.id, from: 'suspended', health: model }],
        'a failed probe is a change',
      );

      const second = await ctx.store.claimProbe(dest.id, T0 + 3_100, T0 + 40_000);
      assert.equal(second.deliveries.length, 1);
      assert.equal(second.deliveries[0]?.sequence, 6);
      const ok = completion(second.deliveries[0] as ClaimedDelivery, {}, T0 + 3_150);
      const closed = await ctx.store.completeAttempts([ok], T0 + 3_150, POLICY);
      assert.equal((await health()).state, 'healthy');
      assert.equal(closed[0]?.from, 'suspended');
      assert.equal(closed[0]?.health.state, 'healthy');
      assert.equal((await health()).nextProbeAt, null);
      const [last] = await ctx.store.healthTransitions(dest.id, 1);
      assert.deepEqual([last?.from, last?.to, last?.reason], ['suspended', 'healthy', 'success']);
      const notSuspended = await ctx.store.claimProbe(dest.id, T0 + 3_200, T0 + 50_000);
      assert.deepEqual([notSuspended.deliveries, notSuspended.nextProbeAt], [[], null]);
    });

    it('concurrent batches (many workers) lose no failure', async () => {
      await accept(8);
      const claimed = (await ctx.store.claimDue(dest.id, 8, T0 + 1)).deliveries;
      assert.equal(claimed.length, 8);
      // Eight writers at once, one failure each: the fold is atomic, so all eight count.
      const changes = await Promise.all(
        claimed.map((c, i) =>
          ctx.store.completeAttempts([completion(c, { statusCode: 503 }, T0 + 10 + i)], T0 + 10 + i, {
            ...POLICY,
            suspendAfter: 100,
            windowMinAttempts: 100,
          }),
        ),
      );
      const after = await health();
      assert.equal(after.consecutiveFailures, 8);
      assert.equal(after.windowFailures, 8);
      assert.equal(after.state, 'degraded');
      assert.equal(changes.flat().length, 1, 'one transition, reported by the batch that made it');
    });

    it('a flapping endpoint is degraded by the window ratio', async () => {
      await accept(12);
      for (let i = 0; i < 6; i++) {
        await batch([{ statusCode: 500 }, {}], T0 + 10 + i * 10);
      }
      assert.equal(model.state, 'degraded');
      assert.equal(model.consecutiveFailures, 0);
    });

    it('a receiver failing three requests in four is suspended by the window ratio, and says so', async () => {
      await accept(8);
      // 3 failures and a success, twice: never more than 3 in a row (suspendAfter 4); the
      // window then holds 6 failures of 8 (windowMinAttempts 6, windowSuspendPercent 75).
      for (let i = 0; i < 2; i++) {
        await batch(
          [
            { statusCode: 503 },
            { statusCode: null, errorCode: 'UND_ERR_HEADERS_TIMEOUT' },
            { statusCode: 500 },
            {},
          ],
          T0 + 10 + i * 10,
        );
      }
      assert.equal(model.state, 'suspended');
      assert.equal(model.suspendReason, 'failure_rate');
      const after = await health();
      assert.equal(after.state, 'suspended');
      assert.equal(after.suspendReason, 'failure_rate');
      assert.ok(after.consecutiveFailures < POLICY.suspendAfter, 'not by failures in a row');
    });

    it('a 410 still disables the destination, whatever its health', async () => {
      await accept(2);
      await batch([{ statusCode: 503 }], T0 + 10);
      await batch([{ statusCode: 410, status: 'pending' }], T0 + 20);
      const d = await ctx.store.getDestination(dest.id);
      assert.equal(d?.state, 'disabled');
      assert.equal(d?.disabledReason, 'gone');
    });

    it('an operator reset makes it healthy and records why', async () => {
      assert.equal(await ctx.store.resetHealth(dest.id, T0 + 1), null, 'healthy already: no change');
      await accept(4);
      await batch(Array(4).fill({ statusCode: null, errorCode: 'ENOTFOUND' }), T0 + 10);
      const change = await ctx.store.resetHealth(dest.id, T0 + 100);
      assert.equal(change?.from, 'suspended');
      assert.deepEqual(await health(), { ...HEALTHY, since: T0 + 100, lastErrorClass: 'dns' });
      const [last] = await ctx.store.healthTransitions(dest.id, 1);
      assert.deepEqual([last?.from, last?.to, last?.reason], ['suspended', 'healthy', 'operator']);
    });

    it('a probe that fails after the circuit was closed by hand is held, not dead', async () => {
      await accept(5);
      await batch(Array(4).fill({ statusCode: null, errorCode: 'ECONNREFUSED' }), T0 + 10);
      assert.equal(model.state, 'suspended');
      const probeAt = model.nextProbeAt ?? assert.fail('a probe time');
      const [probe] = (await ctx.store.claimProbe(dest.id, probeAt, probeAt + 5_000)).deliveries;
      assert.equal(probe?.probe, true);
      // The operator gives it a new URL while the probe is out; the probe then fails, and the
      // runner, blind to the breaker, calls its budget spent.
      await ctx.store.resetHealth(dest.id, probeAt + 1);
      const failed = completion(
        probe,
        { statusCode: null, errorCode: 'ECONNREFUSED', status: 'dead' },
        probeAt + 2,
      );
      await ctx.store.completeAttempts([failed], probeAt + 2, POLICY);
      const held = (await ctx.store.getDelivery(probe.id))?.delivery;
      assert.equal(held?.status, 'pending');
      assert.equal((held?.attempts ?? 0) - (held?.attemptBase ?? 0), 0, 'the probe does not count');
      assert.equal((await health()).state, 'healthy', 'one failure does not open the new circuit');
    });
  });
}
