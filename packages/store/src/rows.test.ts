import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { newKeyring } from '@sluice/core';
import { newDestination } from './conformance/fixtures.ts';
import { newDestinationRecord } from './destination.ts';
import { DESTINATION_COLUMNS, destinationDecoder, destinationParams } from './rows.ts';

const T0 = 1_700_000_000_000;
const keyring = newKeyring();

describe('destination rows', () => {
  const destination = newDestinationRecord(
    newDestination('ten_1', { rateLimit: { limit: 5, period: 'minute', burst: 2 }, adaptive: true }),
    T0,
  );

  it('params name every column', () => {
    assert.deepEqual(
      Object.keys(destinationParams(destination, keyring)).sort(),
      [...DESTINATION_COLUMNS].sort(),
    );
  });

  it('a row of the params, JSON as text (SQLite), decodes to the destination', () => {
    const fromText = destinationDecoder((v) => JSON.parse(v as string));
    assert.deepEqual(fromText(destinationParams(destination, keyring), keyring), destination);
  });

  it('the row holds every secret sealed, none in the clear', () => {
    const params = destinationParams(destination, keyring);
    const stored = JSON.parse(params.secrets as string) as { secret: string }[];
    assert.equal(stored.length, destination.secrets.length);
    for (const [i, s] of stored.entries()) {
      assert.match(s.secret, /^enc:v1:/);
      assert.ok(!(params.secrets as string).includes(destination.secrets[i]?.secret as string));
    }
  });

  it('a NULL burst is no burst at all (the key absent)', () => {
    const row = {
      ...destinationParams({ ...destination, rateLimit: { limit: 5, period: 'minute' } }, keyring),
    };
    const decoded = destinationDecoder((v) => JSON.parse(v as string))(row, keyring);
    assert.equal('burst' in decoded.rateLimit, false);
  });
});
