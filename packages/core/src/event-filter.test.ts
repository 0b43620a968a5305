import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { filterProblem, matchesFilter } from './event-filter.ts';

const order = {
  type: 'order.paid',
  payload: {
    amount: 250,
    currency: 'EUR',
    customer: { email: 'ann@example.com', tier: 'gold' },
    items: [
      { sku: 'A-1', qty: 2 },
      { sku: 'B-7', qty: 1 },
    ],
    tags: ['vip', 'eu'],
  },
};

describe('event filters', () => {
  it('matches by each operator family, over nested paths and arrays', () => {
    const yes: Record<string, unknown>[] = [
      { type: 'order.paid' },
      { 'payload.amount': { $gte: 100, $lt: 1_000 } },
      { 'payload.currency': { $in: ['EUR', 'USD'] } },
      { 'payload.currency': { $nin: ['GBP'] }, 'payload.amount': { $ne: 0 } },
      { 'payload.customer.tier': { $eq: 'gold' } },
      { 'payload.customer.email': { $regex: '@example\\.com$' } },
      { 'payload.customer.email': { $regex: '^ANN', $options: 'i' } },
      { 'payload.refund': { $exists: false } },
      { $or: [{ 'payload.amount': { $gt: 1_000 } }, { 'payload.tags': 'vip' }] },
      { $and: [{ 'payload.amount': { $gt: 1 } }, { 'payload.currency': 'EUR' }] },
      { $nor: [{ 'payload.currency': 'GBP' }] },
      { 'payload.amount': { $not: { $lt: 100 } } },
      { 'payload.items': { $size: 2 } },
      { 'payload.tags': { $all: ['eu', 'vip'] } },
      { 'payload.items': { $elemMatch: { sku: 'A-1', qty: { $gte: 2 } } } },
      { 'payload.items.sku': 'B-7' },
    ];
    for (const f of yes) {
      assert.equal(filterProblem(f), undefined, JSON.stringify(f));
      assert.equal(matchesFilter(f, order), true, JSON.stringify(f));
    }
    const no: Record<string, unknown>[] = [
      { type: 'order.refunded' },
      { 'payload.amount': { $gte: 1_000 } },
      { 'payload.currency': { $in: ['USD'] } },
      { 'payload.items': { $elemMatch: { sku: 'A-1', qty: { $gte: 3 } } } },
      { 'payload.tags': { $all: ['eu', 'us'] } },
      { 'payload.missing.deep': { $exists: true } },
    ];
    for (const f of no) assert.equal(matchesFilter(f, order), false, JSON.stringify(f));
    assert.equal(matchesFilter(null, order), true, 'no filter: every event');
  });

  it('refuses what is not a filter, naming the operator or the limit', () => {
    assert.match(filterProblem({ $where: 'this.amount > 1' }) ?? '', /unknown operator \$where/);
    assert.match(filterProblem({ 'payload.a': { $mod: [2, 0] } }) ?? '', /unknown operator \$mod/);
    assert.match(filterProblem({ 'payload.a': { $regex: '(' } }) ?? '', /regular expression|Invalid/i);
    assert.match(filterProblem({ 'payload.a': { $regex: '(a+)+$' } }) ?? '', /exponential time/);
    assert.match(filterProblem({ 'payload.a': { $regex: 'x'.repeat(300) } }) ?? '', /at most 256 characters/);
    assert.match(filterProblem([{ a: 1 }]) ?? '', /query document/);
    assert.match(filterProblem('type') ?? '', /query document/);
    let deep: Record<string, unknown> = { v: 1 };
    for (let i = 0; i < 11; i++) deep = { a: deep };
    assert.match(filterProblem(deep) ?? '', /at most 10 levels/);
    assert.match(
      filterProblem({ 'payload.a': { $in: Array.from({ length: 800 }, (_, i) => `v${i}`) } }) ?? '',
      /at most 4096 bytes/,
    );
  });
});
