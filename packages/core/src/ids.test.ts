import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { decodeTime } from 'ulid';
import { hasPrefix, type IdPrefix, newId } from './ids.ts';

const PREFIXES: IdPrefix[] = ['ten', 'dst', 'evt', 'dlv', 'att'];
// Lower-case Crockford base32, in ascending order: string order is numeric order.
const CROCKFORD = '0123456789abcdefghjkmnpqrstvwxyz';
const T0 = 4_000_000_000_000; // in 2096: later than any real clock this test runs on.

describe('newId', () => {
  it('is the prefix, an underscore and a lower-case 26-character ULID', () => {
    for (const prefix of PREFIXES) {
      const id = newId(prefix);
      assert.match(id, new RegExp(`^${prefix}_[${CROCKFORD}]{26}$`));
      assert.equal(id.length, prefix.length + 27);
      assert.equal(hasPrefix(id, prefix), true);
    }
  });

  it('the Crockford alphabet sorts the same as its values', () => {
    assert.equal([...CROCKFORD].sort().join(''), CROCKFORD);
  });

  it('carries its creation time (fake clock)', (t) => {
    t.mock.timers.enable({ apis: ['Date'], now: T0 });
    assert.equal(decodeTime(newId('evt').slice(4).toUpperCase()), T0);
    t.mock.timers.setTime(T0 + 1_234);
    assert.equal(decodeTime(newId('evt').slice(4).toUpperCase()), T0 + 1_234);
  });

  it('sorts in creation order: across milliseconds, within one, and when the clock steps back', (t) => {
    t.mock.timers.enable({ apis: ['Date'], now: T0 + 10_000 });
    const ids: string[] = [];
    for (let i = 0; i < 3_000; i++) {
      if (i % 1_000 === 999) t.mock.timers.setTime(T0 + 10_000 + i);
      ids.push(newId(PREFIXES[i % PREFIXES.length] as IdPrefix).slice(4));
    }
    t.mock.timers.setTime(T0 + 5_000); // NTP steps the clock back
    for (let i = 0; i < 100; i++) ids.push(newId('dlv').slice(4));
    for (let i = 1; i < ids.length; i++) {
      assert.ok((ids[i - 1] as string) < (ids[i] as string), `id ${i} does not sort after id ${i - 1}`);
    }
    assert.equal(new Set(ids).size, ids.length);
  });
});

describe('hasPrefix', () => {
  it('checks the prefix, the underscore and the length', () => {
    const id = newId('dst');
    assert.equal(hasPrefix(id, 'dst'), true);
    assert.equal(hasPrefix(id, 'evt'), false);
    assert.equal(hasPrefix(id.replace('_', '-'), 'dst'), false);
    assert.equal(hasPrefix(id.slice(0, -1), 'dst'), false);
    assert.equal(hasPrefix(`${id}0`, 'dst'), false);
    assert.equal(hasPrefix('dst_', 'dst'), false);
    assert.equal(hasPrefix(`dst${id.slice(3)}`, 'dst'), true);
  });
});
