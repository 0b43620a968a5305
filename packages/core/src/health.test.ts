import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  type ClassifiedResult,
  classifyAttempt,
  type ErrorClass,
  HEALTHY,
  type Health,
  type HealthPolicy,
  healthMoves,
  isHeld,
  nextHealth,
  probeDelayMs,
  summarize,
} from './health.ts';

const POLICY: HealthPolicy = {
  degradeAfter: 3,
  suspendAfter: 6,
  windowMs: 10_000,
  windowMinAttempts: 10,
  windowFailurePercent: 50,
  windowSuspendPercent: 75,
  probeInitialMs: 1_000,
  probeMaxMs: 8_000,
};
const T0 = 1_700_000_000_000;

const r = (errorClass: ErrorClass, probe = false): ClassifiedResult => ({ errorClass, probe });

/** Feeds one result per batch, each 10 ms after the last (a fake clock). */
function run(classes: ErrorClass[], from: Health = HEALTHY, start = T0): { h: Health; now: number } {
  let h = from;
  let now = start;
  for (const c of classes) {
    now += 10;
    h = nextHealth(h, summarize([r(c)]), now, POLICY);
  }
  return { h, now };
}

describe('classifyAttempt', () => {
  it('classes statuses', () => {
    assert.equal(classifyAttempt(200, null), 'ok');
    assert.equal(classifyAttempt(204, null), 'ok');
    assert.equal(classifyAttempt(503, null), '5xx');
    assert.equal(classifyAttempt(500, null), '5xx');
    assert.equal(classifyAttempt(408, null), 'timeout');
    assert.equal(classifyAttempt(429, null), '429');
    assert.equal(classifyAttempt(404, null), '4xx');
    assert.equal(classifyAttempt(410, null), '4xx');
    assert.equal(classifyAttempt(302, null), 'other');
  });

  it('classes errors', () => {
    assert.equal(classifyAttempt(null, 'ECONNREFUSED'), 'connection');
    assert.equal(classifyAttempt(null, 'ECONNRESET'), 'connection');
    assert.equal(classifyAttempt(null, 'UND_ERR_SOCKET'), 'connection');
    assert.equal(classifyAttempt(null, 'ENOTFOUND'), 'dns');
    assert.equal(classifyAttempt(null, 'EAI_AGAIN'), 'dns');
    assert.equal(classifyAttempt(null, 'timeout'), 'timeout');
    assert.equal(classifyAttempt(null, 'UND_ERR_CONNECT_TIMEOUT'), 'timeout');
    assert.equal(classifyAttempt(null, 'CERT_HAS_EXPIRED'), 'tls');
    assert.equal(classifyAttempt(null, 'ERR_TLS_CERT_ALTNAME_INVALID'), 'tls');
    assert.equal(classifyAttempt(null, 'DEPTH_ZERO_SELF_SIGNED_CERT'), 'tls');
    assert.equal(classifyAttempt(null, 'destination_not_allowed'), 'other');
    assert.equal(classifyAttempt(null, 'auth_failed'), 'other');
    assert.equal(classifyAttempt(null, 'transform_failed'), 'other');
    assert.equal(classifyAttempt(null, 'transform_cancelled'), 'other');
  });
});

describe('nextHealth', () => {
  it('healthy → degraded → suspended on consecutive breaker failures', () => {
    assert.equal(run(['5xx', 'timeout']).h.state, 'healthy');
    const degraded = run(['5xx', 'timeout', 'connection']);
    assert.equal(degraded.h.state, 'degraded');
    assert.equal(degraded.h.since, degraded.now);
    assert.equal(degraded.h.lastErrorClass, 'connection');
    const suspended = run(['5xx', '5xx', '5xx', 'tls', 'dns', 'timeout']);
    assert.equal(suspended.h.state, 'suspended');
    assert.equal(suspended.h.consecutiveFailures, 6);
    assert.equal(
      suspended.h.nextProbeAt,
      suspended.now + 1_000,
      'the first probe one initial interval later',
    );
    assert.equal(suspended.h.probeFailures, 0);
  });

  it('4xx, 429 and 3xx say the endpoint is up: they neither count nor reset', () => {
    const { h } = run(['5xx', '5xx', '4xx', '429', 'other', '4xx']);
    assert.equal(h.consecutiveFailures, 2);
    assert.equal(h.state, 'healthy');
    assert.equal(run(['4xx', '4xx', '4xx', '4xx', '429', '429', '429']).h.state, 'healthy');
  });

  it('a success resets the count: failures must be consecutive', () => {
    const { h } = run(['5xx', '5xx', 'ok', '5xx', '5xx', 'ok', '5xx', '5xx']);
    assert.equal(h.state, 'healthy');
    assert.equal(h.consecutiveFailures, 2);
  });

  it('one success closes a suspended circuit with a clean slate', () => {
    const suspended = run(Array(6).fill('5xx')).h;
    const after = nextHealth(suspended, summarize([r('ok', true)]), T0 + 5_000, POLICY);
    assert.equal(after.state, 'healthy');
    assert.equal(after.since, T0 + 5_000);
    assert.equal(after.consecutiveFailures, 0);
    assert.equal(after.windowFailures, 0);
    assert.equal(after.nextProbeAt, null);
    assert.equal(after.lastErrorClass, '5xx', 'the last error class stays on record');
  });

  it('one success takes degraded back to healthy', () => {
    const degraded = run(['5xx', '5xx', '5xx']);
    assert.equal(degraded.h.state, 'degraded');
    assert.equal(run(['ok'], degraded.h, degraded.now).h.state, 'healthy');
  });

  it('failed probes double the wait up to the cap; other failures while suspended do not', () => {
    let { h, now } = run(Array(6).fill('connection'));
    const waits: number[] = [];
    for (let i = 0; i < 6; i++) {
      now = h.nextProbeAt as number;
      // A leftover request (not a probe) failing meanwhile changes nothing about the probes.
      const leftover = nextHealth(h, summarize([r('connection')]), now - 1, POLICY);
      assert.equal(leftover.nextProbeAt, h.nextProbeAt);
      assert.equal(leftover.probeFailures, h.probeFailures);
      now += 50; // the probe's request took 50 ms
      h = nextHealth(h, summarize([r('connection', true)]), now, POLICY);
      assert.equal(h.state, 'suspended');
      waits.push((h.nextProbeAt as number) - now);
    }
    assert.deepEqual(waits, [2_000, 4_000, 8_000, 8_000, 8_000, 8_000]);
    assert.equal(probeDelayMs(POLICY, 0), 1_000);
  });

  it('a probe answered with a 4xx is a failed probe but not a breaker failure', () => {
    const { h, now } = run(Array(6).fill('5xx'));
    const after = nextHealth(h, summarize([r('4xx', true)]), now + 1_000, POLICY);
    assert.equal(after.state, 'suspended');
    assert.equal(after.probeFailures, 1);
    assert.equal(after.consecutiveFailures, 6);
  });

  it('a failure ratio over the window degrades a flapping endpoint, and it stays degraded', () => {
    // Fail, ok, fail, ok…: never 3 in a row, but half of the window's attempts fail.
    const flapping: ErrorClass[] = Array.from({ length: 12 }, (_, i) => (i % 2 === 0 ? '5xx' : 'ok'));
    const { h, now } = run(flapping);
    assert.equal(h.state, 'degraded');
    assert.equal(h.windowAttempts, 12);
    assert.equal(h.windowFailures, 6);
    // The window closes windowMs after its first failure: successes then bring it back.
    const later = nextHealth(h, summarize([r('ok')]), now + POLICY.windowMs, POLICY);
    assert.equal(later.state, 'healthy');
  });

  it('a batch counts as its results in order: trailing failures after the last success', () => {
    const b = summarize([r('5xx'), r('5xx'), r('ok'), r('timeout'), r('4xx'), r('5xx')]);
    assert.deepEqual(b, {
      attempts: 6,
      failures: 4,
      successes: 1,
      trailingFailures: 2,
      failedProbes: 0,
      lastErrorClass: '5xx',
      gone: false,
    });
    const big = summarize(Array(7).fill(r('timeout')));
    assert.equal(nextHealth(HEALTHY, big, T0, POLICY).state, 'suspended', 'straight to suspended');
  });

  it('writes nothing for successes on a clean destination (the hot path)', () => {
    const ok = summarize([r('ok'), r('ok'), r('4xx')]);
    assert.equal(healthMoves(HEALTHY, ok, T0, POLICY), false);
    assert.equal(healthMoves(HEALTHY, summarize([r('5xx')]), T0, POLICY), true);
    const once = nextHealth(HEALTHY, summarize([r('5xx')]), T0, POLICY);
    assert.equal(healthMoves(once, ok, T0 + 1, POLICY), true, 'a success resets a count');
  });
});

describe('isHeld', () => {
  it('holds breaker failures of a degraded or suspended destination, and failed probes', () => {
    assert.equal(isHeld('5xx', 'degraded', false), true);
    assert.equal(isHeld('connection', 'suspended', false), true);
    assert.equal(isHeld('5xx', 'healthy', false), false);
    assert.equal(isHeld('connection', 'healthy', true), true, 'a probe out as the circuit closed by hand');
    assert.equal(isHeld('4xx', 'suspended', false), false);
    assert.equal(isHeld('4xx', 'healthy', true), false, "a probe's 4xx is the receiver's answer");
    assert.equal(isHeld('429', 'degraded', false), false);
  });
});
