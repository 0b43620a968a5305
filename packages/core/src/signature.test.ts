import assert from 'node:assert/strict';
import { describe, it, type TestContext } from 'node:test';
import { Webhook } from 'standardwebhooks';
import { generateSecret, isValidSecret, secretKey, signatureHeader, signOne } from './signature.ts';

// The test vector published with the Standard Webhooks / Svix libraries.
const VECTOR = {
  secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
  id: 'msg_p5jXN8AQM9LWM0D4loKWxJek',
  timestamp: 1614265330,
  body: '{"test": 2432232314}',
  signature: 'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=',
};

/** An independent HMAC-SHA256 (WebCrypto) of "id.timestamp.body", base64. */
async function webCryptoSign(secret: string, id: string, timestamp: number, body: string): Promise<string> {
  const raw = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
  const key = await crypto.subtle.importKey('raw', raw, { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);
  const mac = await crypto.subtle.sign('HMAC', key, new TextEncoder().encode(`${id}.${timestamp}.${body}`));
  return `v1,${Buffer.from(mac).toString('base64')}`;
}

/** standardwebhooks checks the timestamp against Date.now(): pin the (mocked) clock to it. */
const clockPinned = new WeakSet<TestContext>();
function verifyAt(
  t: TestContext,
  secret: string,
  body: string,
  headers: { id: string; timestamp: number; signature: string },
): unknown {
  if (!clockPinned.has(t)) t.mock.timers.enable({ apis: ['Date'] });
  clockPinned.add(t);
  t.mock.timers.setTime(headers.timestamp * 1_000);
  return new Webhook(secret).verify(body, {
    'webhook-id': headers.id,
    'webhook-timestamp': String(headers.timestamp),
    'webhook-signature': headers.signature,
  });
}

describe('signOne', () => {
  it('reproduces the published test vector', () => {
    assert.equal(signOne(VECTOR.secret, VECTOR), VECTOR.signature);
  });

  it('agrees with an independent HMAC-SHA256 (WebCrypto)', async () => {
    for (let i = 0; i < 20; i++) {
      const secret = generateSecret();
      const input = {
        id: `evt_${i}`,
        timestamp: 1_700_000_000 + i,
        body: JSON.stringify({ i, s: 'ünïcødé ✓' }),
      };
      assert.equal(
        signOne(secret, input),
        await webCryptoSign(secret, input.id, input.timestamp, input.body),
      );
    }
  });

  it('is verified by the standardwebhooks library', (t) => {
    const body = '{"type":"order.paid","data":{"id":42}}';
    const input = { id: 'evt_01jabc', timestamp: 1_750_000_000, body };
    const secret = generateSecret();
    const verified = verifyAt(t, secret, body, { ...input, signature: signOne(secret, input) });
    assert.deepEqual(verified, { type: 'order.paid', data: { id: 42 } });
  });

  it('a tampered body, id or timestamp fails verification', (t) => {
    const secret = generateSecret();
    const input = { id: 'evt_1', timestamp: 1_750_000_000, body: '{"a":1}' };
    const signature = signOne(secret, input);
    assert.throws(() => verifyAt(t, secret, '{"a":2}', { ...input, signature }), /No matching signature/);
    assert.throws(() => verifyAt(t, secret, input.body, { ...input, id: 'evt_2', signature }), /No matching/);
    assert.throws(() => verifyAt(t, secret, input.body, { ...input, timestamp: 1_750_000_001, signature }));
  });

  it('throws TypeError on a secret that is not whsec_', () => {
    assert.throws(() => signOne('not-a-secret', VECTOR), TypeError);
  });
});

describe('signatureHeader (secret rotation)', () => {
  it('carries one space-separated v1 signature per secret, in order', () => {
    const [a, b] = [generateSecret(), generateSecret()];
    const header = signatureHeader([a, b], VECTOR);
    assert.equal(header, `${signOne(a, VECTOR)} ${signOne(b, VECTOR)}`);
    assert.match(header, /^v1,[A-Za-z0-9+/]{43}= v1,[A-Za-z0-9+/]{43}=$/);
    assert.equal(signatureHeader([VECTOR.secret], VECTOR), VECTOR.signature);
  });

  it('either secret verifies the two-signature header; a third does not', (t) => {
    const [oldSecret, newSecret, other] = [generateSecret(), generateSecret(), generateSecret()];
    const input = { id: 'evt_rot', timestamp: 1_760_000_000, body: '{"rotating":true}' };
    const signature = signatureHeader([oldSecret, newSecret], input);
    assert.deepEqual(verifyAt(t, oldSecret, input.body, { ...input, signature }), { rotating: true });
    assert.deepEqual(verifyAt(t, newSecret, input.body, { ...input, signature }), { rotating: true });
    assert.throws(() => verifyAt(t, other, input.body, { ...input, signature }), /No matching signature/);
  });
});

describe('secrets', () => {
  it('generateSecret makes distinct valid whsec_ secrets with a 32-byte key, loadable by standardwebhooks', () => {
    const seen = new Set<string>();
    for (let i = 0; i < 50; i++) {
      const s = generateSecret();
      assert.match(s, /^whsec_[A-Za-z0-9+/]{43}=$/);
      assert.equal(isValidSecret(s), true);
      assert.equal(secretKey(s)?.length, 32);
      assert.doesNotThrow(() => new Webhook(s));
      seen.add(s);
    }
    assert.equal(seen.size, 50);
  });

  it('accepts keys of 16 to 128 bytes', () => {
    for (const n of [16, 24, 32, 64, 128]) {
      assert.equal(isValidSecret(`whsec_${Buffer.alloc(n, 7).toString('base64')}`), true, `${n} bytes`);
    }
  });

  it('rejects what is not a whsec_ secret', () => {
    const key = Buffer.alloc(32, 1).toString('base64');
    for (const bad of [
      '',
      'whsec_',
      key, // no prefix
      `whsk_${key}`,
      `WHSEC_${key}`,
      `whsec_${key.slice(0, 10)}!${key.slice(11)}`, // not base64
      `whsec_ ${key}`,
      `whsec_${key}\n`,
      `whsec_${Buffer.alloc(8).toString('base64')}`, // too short
      `whsec_${Buffer.alloc(15).toString('base64')}`,
      `whsec_${Buffer.alloc(129).toString('base64')}`, // too long
      `whsec_${Buffer.alloc(32, 0xff).toString('base64url')}`, // base64url
    ]) {
      assert.equal(isValidSecret(bad), false, JSON.stringify(bad));
      assert.equal(secretKey(bad), undefined, JSON.stringify(bad));
    }
  });
});
