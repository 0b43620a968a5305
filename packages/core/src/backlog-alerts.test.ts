import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  type AlertThresholds,
  type BacklogSample,
  countCap,
  evaluateAlerts,
  type FiringAlert,
  observed,
  resolveBelow,
} from './backlog-alerts.ts';

const NOW = 1_700_000_000_000;
const thresholds: AlertThresholds = { pendingCount: 10, pendingAgeSeconds: 60 };

const sample = (pending: number, ageSeconds: number | null, destinationId = 'dst_a'): BacklogSample => ({
  destinationId,
  tenantId: 'ten_a',
  pending,
  oldestDueAt: ageSeconds === null ? null : NOW - ageSeconds * 1_000,
});

const firing = (kind: FiringAlert['kind'], destinationId = 'dst_a'): FiringAlert => ({
  destinationId,
  tenantId: 'ten_a',
  kind,
  threshold: kind === 'pending_count' ? 10 : 60,
  value: 99,
  raisedAt: NOW - 5_000,
});

const actions = (changes: ReturnType<typeof evaluateAlerts>) =>
  changes.map((c) => `${c.action} ${c.destinationId} ${c.kind} ${c.value}`);

describe('evaluateAlerts', () => {
  it('raises a kind once its value passes the threshold, not at it', () => {
    assert.deepEqual(actions(evaluateAlerts([sample(10, 60)], [], thresholds, NOW)), []);
    assert.deepEqual(actions(evaluateAlerts([sample(11, 61)], [], thresholds, NOW)), [
      'raise dst_a pending_count 11',
      'raise dst_a pending_age 61',
    ]);
  });

  it('never raises a firing alert again', () => {
    const changes = evaluateAlerts([sample(500, 1)], [firing('pending_count')], thresholds, NOW);
    assert.deepEqual(actions(changes), []);
  });

  it('resolves with hysteresis: only at or below half the threshold', () => {
    const alert = firing('pending_count');
    assert.deepEqual(actions(evaluateAlerts([sample(9, 0)], [alert], thresholds, NOW)), []);
    assert.deepEqual(actions(evaluateAlerts([sample(6, 0)], [alert], thresholds, NOW)), []);
    const changes = evaluateAlerts([sample(5, 0)], [alert], thresholds, NOW);
    assert.deepEqual(actions(changes), ['resolve dst_a pending_count 5']);
    assert.equal(changes[0]?.raised, alert);
    assert.equal(changes[0]?.threshold, 10);
  });

  it('a drained or deleted destination (no sample) resolves every kind', () => {
    const changes = evaluateAlerts([], [firing('pending_count'), firing('pending_age')], thresholds, NOW);
    assert.deepEqual(actions(changes), ['resolve dst_a pending_count 0', 'resolve dst_a pending_age 0']);
  });

  it('a kind turned off raises nothing and resolves what fires', () => {
    const off: AlertThresholds = { pendingCount: null, pendingAgeSeconds: 60 };
    const changes = evaluateAlerts([sample(1_000, 0)], [firing('pending_count')], off, NOW);
    assert.deepEqual(actions(changes), ['resolve dst_a pending_count 1000']);
  });

  it('destinations are independent', () => {
    const changes = evaluateAlerts(
      [sample(20, 0, 'dst_a'), sample(1, 0, 'dst_b')],
      [firing('pending_count', 'dst_b')],
      thresholds,
      NOW,
    );
    assert.deepEqual(actions(changes), ['resolve dst_b pending_count 1', 'raise dst_a pending_count 20']);
  });
});

describe('observed and the cap', () => {
  it('age counts from when the oldest delivery came due; not yet due is 0', () => {
    assert.equal(observed(sample(1, 90), 'pending_age', NOW), 90);
    assert.equal(observed({ ...sample(1, null), oldestDueAt: NOW + 5_000 }, 'pending_age', NOW), 0);
    assert.equal(observed(undefined, 'pending_count', NOW), 0);
  });

  it('the store counts one past the count threshold: enough for both edges', () => {
    assert.equal(countCap(thresholds), 11);
    assert.equal(countCap({ pendingCount: null, pendingAgeSeconds: 60 }), 1);
    assert.ok(resolveBelow(10) < countCap(thresholds));
  });
});
