import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { EVENT_TYPE, EVENT_TYPE_PATTERN, matchesEventType } from './event-types.ts';

describe('matchesEventType', () => {
  it('* matches every type', () => {
    for (const type of ['order', 'order.paid', 'order.item.added', 'user_created', 'a-b.c', 'sluicer.x']) {
      assert.equal(matchesEventType(['*'], type), true, type);
    }
  });

  it("* does not match Sluice's own types; sluice.* or the exact name does", () => {
    for (const type of ['sluice.delivery.dead', 'sluice.destination.suspended', 'sluice.test']) {
      assert.equal(matchesEventType(['*'], type), false, type);
      assert.equal(matchesEventType(['sluice.*'], type), true, type);
      assert.equal(matchesEventType(['*', type], type), true, type);
    }
    assert.equal(matchesEventType(['sluice.destination.*'], 'sluice.destination.disabled'), true);
    assert.equal(matchesEventType(['sluice.destination.*'], 'sluice.delivery.dead'), false);
    assert.equal(matchesEventType(['sluice.*'], 'order.paid'), false);
  });

  it('a plain pattern matches exactly', () => {
    assert.equal(matchesEventType(['order.paid'], 'order.paid'), true);
    assert.equal(matchesEventType(['order.paid'], 'order.paid.late'), false);
    assert.equal(matchesEventType(['order.paid'], 'order'), false);
    assert.equal(matchesEventType(['order.paid'], 'Order.paid'), false);
    assert.equal(matchesEventType(['order'], 'orders'), false);
  });

  it('order.* matches order.paid and order.item.added', () => {
    assert.equal(matchesEventType(['order.*'], 'order.paid'), true);
    assert.equal(matchesEventType(['order.*'], 'order.item.added'), true);
  });

  it('order.* does not match order itself, orders.paid, or other types', () => {
    for (const type of ['order', 'orders.paid', 'orderpaid', 'user.order.paid', 'preorder.paid']) {
      assert.equal(matchesEventType(['order.*'], type), false, type);
    }
  });

  it('a nested wildcard matches below its own level only', () => {
    assert.equal(matchesEventType(['order.item.*'], 'order.item.added'), true);
    assert.equal(matchesEventType(['order.item.*'], 'order.item'), false);
    assert.equal(matchesEventType(['order.item.*'], 'order.items.added'), false);
    assert.equal(matchesEventType(['order.item.*'], 'order.paid'), false);
  });

  it('any of several patterns; none matches with no patterns', () => {
    assert.equal(matchesEventType(['user.created', 'order.*'], 'order.paid'), true);
    assert.equal(matchesEventType(['user.created', 'order.*'], 'user.created'), true);
    assert.equal(matchesEventType(['user.created', 'order.*'], 'user.deleted'), false);
    assert.equal(matchesEventType([], 'order.paid'), false);
  });
});

describe('EVENT_TYPE_PATTERN', () => {
  it('accepts *, dotted names and a trailing .*', () => {
    for (const p of ['*', 'order', 'order.paid', 'order.item.added', 'order.*', 'order.item.*', 'a_b-C9.x']) {
      assert.match(p, EVENT_TYPE_PATTERN);
    }
  });

  it('rejects empty segments, inner or bare wildcards and odd characters', () => {
    for (const p of [
      '',
      '.',
      'order.',
      '.order',
      'order..paid',
      '*.paid',
      'order.*.paid',
      'order*',
      'order.**',
      '**',
      'order paid',
      'order/paid',
      'ordér',
    ]) {
      assert.doesNotMatch(p, EVENT_TYPE_PATTERN, JSON.stringify(p));
    }
  });
});

describe('EVENT_TYPE', () => {
  it('takes dotted words and refuses wildcards', () => {
    for (const t of ['order', 'order.paid', 'a_b-c.D9']) assert.match(t, EVENT_TYPE);
    for (const t of ['*', 'order.*', 'order.', '.order', 'order paid', ''])
      assert.doesNotMatch(t, EVENT_TYPE);
  });
});
