import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { claimOrder, concurrencyCap, DEFAULT_ORDERING } from './ordering.ts';

describe('concurrencyCap', () => {
  it('is maxConcurrency without fifo (null: no cap)', () => {
    assert.equal(concurrencyCap('none', null), null);
    assert.equal(concurrencyCap('none', 7), 7);
  });

  it('is one request at a time with fifo, whatever maxConcurrency says', () => {
    assert.equal(concurrencyCap('fifo', null), 1);
    assert.equal(concurrencyCap('fifo', 1), 1);
    assert.equal(concurrencyCap('fifo', 50), 1);
  });
});

describe('claimOrder', () => {
  it('fifo claims by sequence; the default by due time', () => {
    assert.equal(claimOrder('fifo'), 'sequence');
    assert.equal(claimOrder('none'), 'due');
    assert.equal(DEFAULT_ORDERING, 'none');
  });
});
