/**
 * The size limits of docs/design.md "HTTP API", on a box started with small ones (what
 * `SLUICE_MAX_PAYLOAD_BYTES=1024` and `SLUICE_MAX_REQUEST_BYTES=16384` set): an event's payload is measured in bytes of its JSON, a request body on any
 * route; past either → `413 payload_too_large`, and nothing changes. A batch is all or
 * nothing: an oversized event (413) or one naming a destination the tenant does not have
 * (404) rejects the whole batch, with the event's index in `details.index`.
 */

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Sluice } from '@sluice/client';
import { fileBox, rejectsWith, snapshot, unknownLike } from './helpers/client.ts';

const MAX_PAYLOAD = 1_024;
const MAX_REQUEST = 16 * 1_024;
const get = fileBox({ SLUICE_MAX_PAYLOAD_BYTES: MAX_PAYLOAD, SLUICE_MAX_REQUEST_BYTES: MAX_REQUEST });

let api: Sluice;
let dst: string;

/** Runs `call`, which must be refused with `status` and `code`, and checks the store is unchanged. */
async function refused(call: () => Promise<unknown>, status: number, code: string, what: string) {
  const before = await snapshot(get());
  const err = await rejectsWith(call(), status, code, what);
  assert.deepEqual(await snapshot(get()), before, `${what} changed the store`);
  return err;
}

describe('size limits', () => {
  it('a tenant and a paused destination (it keeps what is accepted)', async () => {
    ({ api } = await get().tenant('limits'));
    dst = (
      await api.destinations.create({
        url: get().rcv.url('limits'),
        rateLimit: { limit: 5, period: 'second' },
      })
    ).id;
    await api.destinations.pause(dst);
  });

  it('a payload is measured in bytes of its JSON: the configured limit is accepted, one byte more is 413', async () => {
    // 'x' × 1022 in quotes: 1024 bytes; 'é' is two bytes, so 511 of them make 1024 too.
    await api.events.send({ type: 'size.ok', payload: 'x'.repeat(MAX_PAYLOAD - 2), destinationId: dst });
    await api.events.send({
      type: 'size.ok',
      payload: 'é'.repeat((MAX_PAYLOAD - 2) / 2),
      destinationId: dst,
    });
    const err = await refused(
      () => api.events.send({ type: 'size.big', payload: 'x'.repeat(MAX_PAYLOAD - 1), destinationId: dst }),
      413,
      'payload_too_large',
      'a payload of 1025 bytes',
    );
    assert.deepEqual(err.details, { maxPayloadBytes: MAX_PAYLOAD });
    await refused(
      () => api.events.send({ type: 'size.big', payload: 'é'.repeat(MAX_PAYLOAD / 2), destinationId: dst }),
      413,
      'payload_too_large',
      '512 two-byte characters (514 characters of JSON, 1026 bytes)',
    );
  });

  it('a batch with one oversized event: 413 naming its index, nothing accepted', async () => {
    const events = Array.from({ length: 5 }, (_, i) => ({
      type: 'size.batch',
      payload: i === 3 ? 'x'.repeat(MAX_PAYLOAD) : { i },
      destinationId: dst,
    }));
    const err = await refused(() => api.events.sendBatch(events), 413, 'payload_too_large', 'the batch');
    assert.equal((err.details as { index?: unknown }).index, 3);
    assert.match(err.message, /^events\.3: /);
  });

  it('a batch naming a destination the tenant does not have: 404 naming its index, nothing accepted', async () => {
    const { api: other } = await get().tenant('limits-other');
    const theirs = (
      await other.destinations.create({
        url: get().rcv.url('theirs'),
        rateLimit: { limit: 5, period: 'second' },
      })
    ).id;
    await other.destinations.pause(theirs);
    for (const [index, stranger] of [
      [1, unknownLike(dst)],
      [2, theirs],
    ] as const) {
      const events = Array.from({ length: 4 }, (_, i) => ({
        type: 'size.batch',
        payload: { i },
        destinationId: i === index ? stranger : dst,
      }));
      const err = await refused(() => api.events.sendBatch(events), 404, 'not_found', `events.${index}`);
      assert.equal((err.details as { index?: unknown }).index, index);
    }
  });

  it('a request body past the configured limit is 413 on any route, nothing changed', async () => {
    // Twenty payloads of 900 bytes: each under the payload limit, together past 16 KiB.
    const events = Array.from({ length: 20 }, () => ({
      type: 'size.body',
      payload: 'z'.repeat(900),
      destinationId: dst,
    }));
    await refused(() => api.events.sendBatch(events), 413, 'payload_too_large', 'a batch body of ~19 KB');
    await api.events.sendBatch(events.slice(0, 15)); // ~14 KB: under it
    await refused(
      () => api.destinations.update(dst, { name: 'n'.repeat(MAX_REQUEST) }),
      413,
      'payload_too_large',
      'a PATCH body past the limit',
    );
    await refused(
      () => api.request('POST', '/v1/destinations', { rawBody: `{"pad":"${'p'.repeat(MAX_REQUEST)}"}` }),
      413,
      'payload_too_large',
      'a create body past the limit (before any validation)',
    );
  });
});
