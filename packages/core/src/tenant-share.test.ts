import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { heldBySlowRequests, mayTakeSlot, reserve, type SlotAsk, tenantShare } from './tenant-share.ts';

const ask = (over: Partial<SlotAsk>): SlotAsk => ({
  slots: 100,
  free: 100,
  tenants: 1,
  held: 0,
  oldestMs: 0,
  quickMs: 1_000,
  ...over,
});

describe('tenant share', () => {
  it('keeps a newcomer’s share free: half alone, a third beside one other, at least one slot', () => {
    assert.equal(tenantShare(100, 1), 50);
    assert.equal(tenantShare(100, 2), 33);
    assert.equal(tenantShare(256, 1), 128);
    assert.equal(tenantShare(10, 50), 1);
    assert.equal(tenantShare(100, 0), 50, 'no tenant yet counts as the one asking');
  });

  it('a tenant alone whose requests hang holds at most its share', () => {
    assert.equal(mayTakeSlot(ask({ held: 49, free: 51, oldestMs: 5_000 })), true);
    assert.equal(mayTakeSlot(ask({ held: 50, free: 50, oldestMs: 5_000 })), false);
    assert.equal(heldBySlowRequests(ask({ held: 50, oldestMs: 5_000 })), true);
  });

  it('a tenant alone whose requests answer quickly uses the rest, a tenth of the pool kept free', () => {
    assert.equal(reserve(100), 10);
    assert.equal(reserve(5), 1);
    assert.equal(mayTakeSlot(ask({ held: 50, free: 50, oldestMs: 20 })), true);
    assert.equal(mayTakeSlot(ask({ held: 89, free: 11, oldestMs: 20 })), true);
    assert.equal(mayTakeSlot(ask({ held: 90, free: 10, oldestMs: 20 })), false);
    assert.equal(heldBySlowRequests(ask({ held: 90, oldestMs: 20 })), false, 'its slots free soon');
  });

  it('beside others the share shrinks; what another holds bounds the free slots', () => {
    // Two tenants: 33 each, and the quick rule keeps the reserve (10) free.
    assert.equal(mayTakeSlot(ask({ tenants: 2, held: 32, free: 10 })), true);
    assert.equal(mayTakeSlot(ask({ tenants: 2, held: 33, free: 40, oldestMs: 2_000 })), false);
    assert.equal(mayTakeSlot(ask({ tenants: 2, held: 40, free: 11, oldestMs: 10 })), true);
    assert.equal(mayTakeSlot(ask({ tenants: 2, held: 40, free: 10, oldestMs: 10 })), false);
    assert.equal(mayTakeSlot(ask({ tenants: 2, held: 0, free: 0 })), false, 'no slot free');
  });
});
