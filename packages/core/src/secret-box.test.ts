import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import {
  generateKeyText,
  isSealed,
  isSealedWithCurrent,
  openSecret,
  parseKeyring,
  SecretBoxError,
  sealSecret,
} from './secret-box.ts';

const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
const key = (id: string) => `${id}:${randomBytes(32).toString('base64')}`;
const code = (c: string) => (err: unknown) => err instanceof SecretBoxError && err.code === c;

describe('secret box', () => {
  it('round-trips a secret, never storing it in the clear, with a fresh IV each time', () => {
    const ring = parseKeyring(key('k1'));
    const a = sealSecret(ring, SECRET);
    const b = sealSecret(ring, SECRET);
    assert.match(a, /^enc:v1:k1:[A-Za-z0-9_-]+$/);
    assert.ok(!a.includes(SECRET) && !a.includes(SECRET.slice(6)));
    assert.notEqual(a, b);
    assert.equal(openSecret(ring, a), SECRET);
    assert.equal(openSecret(ring, b), SECRET);
    assert.ok(isSealed(a) && isSealedWithCurrent(ring, a));
  });

  it('reads a secret stored before encryption as it is', () => {
    const ring = parseKeyring(key('k1'));
    assert.equal(isSealed(SECRET), false);
    assert.equal(openSecret(ring, SECRET), SECRET);
  });

  it('seals with the first key and opens with any: rotation', () => {
    const old = key('k0');
    const sealedOld = sealSecret(parseKeyring(old), SECRET);
    const ring = parseKeyring(`${key('k1')},${old}`);
    assert.equal(openSecret(ring, sealedOld), SECRET);
    assert.equal(isSealedWithCurrent(ring, sealedOld), false);
    const resealed = sealSecret(ring, openSecret(ring, sealedOld));
    assert.match(resealed, /^enc:v1:k1:/);
    assert.ok(isSealedWithCurrent(ring, resealed));
  });

  it('a key the ring does not hold: SLUICE_KEY_UNKNOWN naming it', () => {
    const sealed = sealSecret(parseKeyring(key('gone')), SECRET);
    assert.throws(() => openSecret(parseKeyring(key('k1')), sealed), code('SLUICE_KEY_UNKNOWN'));
    assert.throws(() => openSecret(parseKeyring(key('k1')), sealed), /"gone"/);
  });

  it('the wrong key under the same id, a changed tag or ciphertext, another key id: unreadable', () => {
    const ring = parseKeyring(key('k1'));
    const sealed = sealSecret(ring, SECRET);
    assert.throws(() => openSecret(parseKeyring(key('k1')), sealed), code('SLUICE_SECRET_UNREADABLE'));
    const raw = Buffer.from(sealed.slice('enc:v1:k1:'.length), 'base64url');
    for (const at of [12, raw.length - 1]) {
      const bad = Buffer.from(raw);
      bad[at] = (bad[at] ?? 0) ^ 1;
      assert.throws(
        () => openSecret(ring, `enc:v1:k1:${bad.toString('base64url')}`),
        code('SLUICE_SECRET_UNREADABLE'),
      );
    }
    // The header is authenticated: the same bytes under another id of the same key do not open.
    const bytes = ring.keys[0].bytes.toString('base64');
    const both = parseKeyring(`k2:${bytes},k1:${bytes}`);
    const renamed = sealed.replace('enc:v1:k1:', 'enc:v1:k2:');
    assert.throws(() => openSecret(both, renamed), code('SLUICE_SECRET_UNREADABLE'));
  });

  it('parses what it generates; refuses a malformed keyring, naming the problem', () => {
    const text = generateKeyText();
    assert.match(text, /^k[0-9a-f]{8}:/);
    assert.equal(parseKeyring(text).keys.length, 1);
    assert.deepEqual(
      parseKeyring(` ${key('a')} , ${key('b')} `).keys.map((k) => k.id),
      ['a', 'b'],
    );
    for (const [bad, why] of [
      ['', /no key/],
      [randomBytes(32).toString('base64'), /id/],
      ['k1:c2hvcnQ=', /32 bytes/],
      [`k 1:${randomBytes(32).toString('base64')}`, /id/],
      [`${key('k1')},${key('k1')}`, /same id/],
    ] as const) {
      assert.throws(
        () => parseKeyring(bad),
        (err: unknown) => code('SLUICE_KEY_INVALID')(err) && why.test(String(err)),
      );
    }
  });
});
