/**
 * What is sent is what was posted (docs/api.md "What a destination receives"), in the shape
 * under test: payloads with 64-bit integers, long decimals, exponents and `1.0` arrive byte for
 * byte, alone and in a batch, and the event log answers them so; a body that is not valid UTF-8,
 * or holds a lone surrogate, is refused with `400 validation_failed` and accepts nothing.
 */

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { fileBox } from './helpers/client.ts';

const get = fileBox();

/** Payload texts that JavaScript's numbers would change, each as it must arrive. */
const EXACT = [
  '{"id":18446744073709551615,"n":1e400}',
  '{"amount":12345678901234567890.123456789,"tiny":1E-400,"one":1.0,"neg":-0}',
  '[9007199254740993,0.1000000000000000055511151231257827,2.5e+10]',
];

describe('payloads kept exact', () => {
  it('numbers arrive byte for byte, one event or a batch, and the event log shows them so', async () => {
    const box = get();
    const { tenant, api } = await box.tenant('exact');
    const d = await api.destinations.create({
      url: box.rcv.url('exact'),
      rateLimit: { limit: 50, period: 'second' },
    });
    const post = (path: string, body: string) =>
      fetch(`${box.url}${path}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${tenant.apiKey}`, 'content-type': 'application/json' },
        body,
      });
    const ids: string[] = [];
    for (const payload of EXACT.slice(0, 2)) {
      const res = await post(
        '/v1/events',
        `{"type":"exact.test","destinationId":"${d.id}","payload":${payload}}`,
      );
      assert.equal(res.status, 202);
      ids.push(((await res.json()) as { id: string }).id);
    }
    const batch = await post(
      '/v1/events/batch',
      `{"events":[{"type":"exact.test","destinationId":"${d.id}","payload":{"plain":1}},{"type":"exact.test","destinationId":"${d.id}","payload":${EXACT[2]}}]}`,
    );
    assert.equal(batch.status, 202);
    const batched = ((await batch.json()) as { data: { id: string }[] }).data.map((e) => e.id);
    ids.push(batched[1] as string);
    await box.rcv.waitFor(
      () => ids.every((id) => box.rcv.deliveredIds(box.rcv.path('exact')).has(id)),
      20_000,
      'the events',
    );
    const bodyOf = (id: string) =>
      box.rcv.arrivals(box.rcv.path('exact')).find((a) => a.headers['webhook-id'] === id)?.body;
    for (const [i, id] of ids.entries()) assert.equal(bodyOf(id), EXACT[i], `event ${i} arrived as posted`);
    assert.equal(bodyOf(batched[0] as string), '{"plain":1}');
    // The event log answers the payload with its numbers as posted.
    const res = await fetch(`${box.url}/v1/events/${ids[0]}`, {
      headers: { authorization: `Bearer ${tenant.apiKey}` },
    });
    assert.match(await res.text(), /"payload":\{"id":18446744073709551615,"n":1e400\}/);
  });

  it('refuses a body that is not valid UTF-8 or holds a lone surrogate, and accepts nothing', async () => {
    const box = get();
    const { tenant, api } = await box.tenant('invalid');
    const d = await api.destinations.create({
      url: box.rcv.url('invalid'),
      rateLimit: { limit: 50, period: 'second' },
    });
    const head = Buffer.from(`{"type":"bad.text","destinationId":"${d.id}","payload":{"s":"`);
    const tail = Buffer.from('"}}');
    for (const [what, body, words] of [
      ['invalid UTF-8', Buffer.concat([head, Buffer.from([0xc3, 0x28]), tail]), /not valid UTF-8/],
      ['a lone high surrogate', Buffer.concat([head, Buffer.from('\\ud800'), tail]), /lone surrogate/],
      [
        'a lone low surrogate in a key',
        Buffer.from(`{"type":"bad.text","destinationId":"${d.id}","payload":{"\\udc00":1}}`),
        /lone surrogate/,
      ],
    ] as const) {
      const res = await fetch(`${box.url}/v1/events`, {
        method: 'POST',
        headers: { authorization: `Bearer ${tenant.apiKey}`, 'content-type': 'application/json' },
        body: body as Buffer,
      });
      assert.equal(res.status, 400, what);
      const { error } = (await res.json()) as { error: { code: string; message: string } };
      assert.equal(error.code, 'validation_failed', what);
      assert.match(error.message, words, what);
    }
    // A well-formed pair is text like any other.
    const ok = await fetch(`${box.url}/v1/events`, {
      method: 'POST',
      headers: { authorization: `Bearer ${tenant.apiKey}`, 'content-type': 'application/json' },
      body: `{"type":"bad.text","destinationId":"${d.id}","payload":{"s":"\\ud83d\\ude00 é"}}`,
    });
    assert.equal(ok.status, 202);
    const events = await api.events.list({ limit: 10 });
    assert.equal(events.data.length, 1, 'only the valid one was accepted');
  });
});
