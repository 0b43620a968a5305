import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { HEALTHY, type Health } from '@sluice/core';
import { completionNotices, type MovedDestination, operationalEvent } from './operational.ts';
import type { CompletedAttempt } from './work.ts';

const NOW = 1_700_000_000_000;

function attempt(
  statusCode: number | null,
  status: CompletedAttempt['status'],
  type = 'order.paid',
): CompletedAttempt {
  return {
    attempt: {
      id: 'att_1',
      deliveryId: 'dlv_1',
      destinationId: 'dst_a',
      attempt: 3,
      startedAt: NOW - 10,
      finishedAt: NOW,
      statusCode,
      errorCode: statusCode === null ? 'ECONNREFUSED' : null,
      errorMessage: statusCode === null ? 'connect ECONNREFUSED' : null,
      responseExcerpt: null,
    },
    status,
    nextAttemptAt: null,
    disableDestination: statusCode === 410,
    event: { id: 'evt_1', type, tenantId: 'ten_1' },
  };
}

const moved = (
  from: Health['state'],
  health: Partial<Health>,
  extra: Partial<MovedDestination> = {},
): MovedDestination => ({
  destinationId: 'dst_a',
  tenantId: 'ten_1',
  from,
  health: { ...HEALTHY, ...health },
  suspendedSince: null,
  disabled: false,
  ...extra,
});

describe('completionNotices', () => {
  it('a breaker opening: suspended, with the failures, the last error and the next probe', () => {
    const notices = completionNotices(
      [attempt(null, 'pending')],
      [
        moved('degraded', {
          state: 'suspended',
          consecutiveFailures: 5,
          windowAttempts: 5,
          windowFailures: 5,
          nextProbeAt: NOW + 1_000,
          suspendReason: 'consecutive',
        }),
      ],
      NOW,
    );
    assert.deepEqual(
      notices.map((n) => [n.type, n.data, n.key]),
      [
        [
          'sluice.destination.suspended',
          {
            reason: 'consecutive',
            failures: 5,
            failureRate: 1,
            lastError: 'ECONNREFUSED: connect ECONNREFUSED',
            nextProbeAt: new Date(NOW + 1_000).toISOString(),
          },
          `suspended:dst_a:${NOW}`,
        ],
      ],
    );
  });

  it('a breaker opened by the failure rate says so, with the rate', () => {
    const [n] = completionNotices(
      [attempt(null, 'pending')],
      [
        moved('degraded', {
          state: 'suspended',
          consecutiveFailures: 3,
          windowAttempts: 24,
          windowFailures: 18,
          nextProbeAt: NOW + 1_000,
          suspendReason: 'failure_rate',
        }),
      ],
      NOW,
    );
    assert.equal(n?.data.reason, 'failure_rate');
    assert.equal(n?.data.failureRate, 0.75);
    assert.equal(n?.data.failures, 3);
  });

  it('a breaker closing: recovered, with how long it was suspended', () => {
    const [n] = completionNotices(
      [attempt(200, 'delivered')],
      [moved('suspended', {}, { suspendedSince: NOW - 60_000 })],
      NOW,
    );
    assert.equal(n?.type, 'sluice.destination.recovered');
    assert.deepEqual(n?.data, { suspendedForMs: 60_000 });
  });

  it('a dead delivery, unless the breaker holds it or its event is a sluice.… one', () => {
    const [dead] = completionNotices([attempt(400, 'dead')], [], NOW);
    assert.deepEqual(dead?.data, {
      deliveryId: 'dlv_1',
      eventId: 'evt_1',
      eventType: 'order.paid',
      attempts: 3,
      lastStatusCode: 400,
      lastError: 'HTTP 400',
    });
    // A 5xx of a degraded destination is held (pending again), not dead.
    assert.deepEqual(
      completionNotices([attempt(503, 'dead')], [moved('degraded', { state: 'degraded' })], NOW),
      [],
    );
    assert.deepEqual(completionNotices([attempt(400, 'dead', 'sluice.delivery.dead')], [], NOW), []);
  });

  it('a 410 that disabled the destination: disabled', () => {
    const notices = completionNotices(
      [attempt(410, 'dead')],
      [moved('healthy', {}, { disabled: true })],
      NOW,
    );
    assert.deepEqual(
      notices.map((n) => n.type),
      ['sluice.destination.disabled', 'sluice.delivery.dead'],
    );
  });
});

describe('operationalEvent', () => {
  it('goes to the destinations naming the type or sluice.*, never * nor the destination itself', () => {
    const event = operationalEvent(
      {
        tenantId: 'ten_1',
        destinationId: 'dst_a',
        type: 'sluice.delivery.dead',
        occurredAt: NOW,
        data: { x: 1 },
        key: 'dead:dlv_1:3',
      },
      [
        { id: 'dst_a', eventTypes: ['sluice.*'] },
        { id: 'dst_b', eventTypes: ['sluice.*'] },
        { id: 'dst_c', eventTypes: ['*'] },
        { id: 'dst_d', eventTypes: ['sluice.delivery.dead'] },
        { id: 'dst_e', eventTypes: ['sluice.destination.*'] },
      ],
    );
    assert.deepEqual(event.destinationIds, ['dst_b', 'dst_d']);
    assert.equal(event.idempotencyKey, 'sluice:dead:dlv_1:3');
    assert.deepEqual(JSON.parse(event.payload), {
      type: 'sluice.delivery.dead',
      tenantId: 'ten_1',
      destinationId: 'dst_a',
      occurredAt: new Date(NOW).toISOString(),
      data: { x: 1 },
    });
  });
});
