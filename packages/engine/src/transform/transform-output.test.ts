import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { readOutput, webhookInput } from './transform-output.ts';

const rules = { maxPayloadBytes: 64, auth: true };
const own = { 'X-Team': 'payments' };
const out = (value: unknown) => ({ ok: true as const, output: JSON.stringify(value) });

describe('readOutput', () => {
  test('a payload, with the headers it returns or the destination’s own', () => {
    assert.deepEqual(readOutput(out({ payload: { a: 1 } }), own, rules), {
      kind: 'send',
      body: '{"a":1}',
      headers: own,
    });
    assert.deepEqual(readOutput(out({ payload: [1], headers: { 'X-B': '2' } }), own, rules), {
      kind: 'send',
      body: '[1]',
      headers: { 'X-B': '2' },
    });
  });

  test('a cancel; and what is refused, saying why', () => {
    assert.deepEqual(readOutput(out({ cancel: true, payload: 1 }), own, rules), { kind: 'cancel' });
    const why = (value: unknown) => {
      const r = readOutput(out(value), own, rules);
      return r.kind === 'failed' ? r.message : r.kind;
    };
    assert.match(why(null), /returned no object/);
    assert.match(why({ headers: {} }), /returned no payload/);
    assert.match(why({ payload: 'x'.repeat(100) }), /over the limit \(64\)/);
    assert.match(why({ payload: 1, headers: { authorization: 'Bearer x' } }), /authorization is set by auth/);
    assert.match(why({ payload: 1, headers: { 'webhook-id': 'x' } }), /webhook-\* headers are set by Sluice/);
    assert.match(why({ payload: 1, headers: { 'X-A': 'a\nb' } }), /visible ASCII/);
  });

  test("the code's failure with its line; the sandbox's own failure is unavailable, to be tried again", () => {
    assert.deepEqual(readOutput({ ok: false, message: 'TypeError: x', line: 3 }, own, rules), {
      kind: 'failed',
      message: 'TypeError: x (line 3)',
    });
    assert.deepEqual(
      readOutput({ ok: false, message: 'the transform pool closed', host: true }, own, rules),
      {
        kind: 'unavailable',
        message: 'the transform pool closed',
      },
    );
  });

  test('the webhook goes in with its payload’s text as posted', () => {
    assert.equal(
      webhookInput('order.paid', '{"id":18446744073709551615}', own),
      '{"type":"order.paid","payload":{"id":18446744073709551615},"headers":{"X-Team":"payments"}}',
    );
  });
});
