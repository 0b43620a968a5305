import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { newDestination } from './conformance/fixtures.ts';
import { newDestinationRecord } from './destination.ts';
import { DESTINATION_COLUMNS, destinationDecoder, destinationParams } from './rows.ts';

const T0 = 1_700_000_000_000;

describe('destination rows', () => {
  const destination = newDestinationRecord(
    newDestination('ten_1', { rateLimit: { limit: 5, period: 'minute', burst: 2 }, adaptive: true }),
    T0,
  );

  it('params name every column', () => {
    assert.deepEqual(Object.keys(destinationParams(destination)).sort(), [...DESTINATION_COLUMNS].sort());
  });

  it('a row of the params, JSON as text (SQLite), decodes to the destination', () => {
    const fromText = destinationDecoder((v) => JSON.parse(v as string));
    assert.deepEqual(fromText(destinationParams(destination)), destination);
  });

  it('a NULL burst is no burst at all (the key absent)', () => {
    const row = { ...destinationParams({ ...destination, rateLimit: { limit: 5, period: 'minute' } }) };
    const decoded = destinationDecoder((v) => JSON.parse(v as string))(row);
    assert.equal('burst' in decoded.rateLimit, false);
  });
});
