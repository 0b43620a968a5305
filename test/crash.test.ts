/**
 * I1 and I6 — no loss, at-least-once. Sluice runs as a child process on a data dir and is
 * killed with SIGKILL at random moments while it delivers, then restarted on the same data
 * dir, port and admin token. In the end every accepted event has reached the receiver with
 * a 2xx and its delivery is `delivered`; a repeat (the same event more than once) carries
 * the same `webhook-id` and the same body.
 */

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { assertNoLeaks } from './helpers/leaks.ts';
import { type Receiver, sleep, startReceiver } from './helpers/receiver.ts';
import { childState } from './helpers/shape.ts';
import {
  type Accepted,
  type ChildBox,
  createDestination,
  createTenant,
  type Delivery,
  freePort,
  postBatches,
  randomToken,
  spawnBox,
  waitUntil,
} from './helpers/sluice.ts';

const DESTINATIONS = 10;
const EVENTS = 2_000;
const LIMIT = 20;
const KILLS = 4;

describe('no loss across kill -9', () => {
  it('every event is delivered across repeated SIGKILLs; repeats keep their webhook-id', {
    timeout: 10 * 60_000,
  }, async (t) => {
    const state = await childState();
    const port = await freePort();
    const adminToken = randomToken();
    const rcv: Receiver = await startReceiver();
    let box: ChildBox | undefined;
    t.after(async () => {
      await box?.kill9();
      await rcv.close();
      await state.close();
      await assertNoLeaks();
    });
    // A claim nothing holds any more returns to pending after the lease: in the distributed
    // shape, a run whose tick died before publishing it, or a job that completed before its
    // outcome was written (the single box returns its claims at start). The default, 2
    // minutes, would outlast the waits below.
    const start = () => spawnBox({ env: { ...state.env, SLUICE_LEASE_MS: '10000' }, port, adminToken });

    box = await start();
    const tenant = await createTenant(box, adminToken);
    const destinations: { id: string; path: string }[] = [];
    for (let i = 0; i < DESTINATIONS; i++) {
      const dest = await createDestination(box, tenant.apiKey, {
        name: `c${i}`,
        url: rcv.url(`c${i}`),
        rateLimit: { limit: LIMIT, period: 'second' },
      });
      destinations.push({ id: dest.id, path: rcv.path(`c${i}`) });
      // Slow answers keep requests in flight, so that kills land mid-request too.
      await rcv.setDelay(rcv.path(`c${i}`), 200);
    }
    const payloads = Array.from({ length: EVENTS }, (_, n) => ({
      n,
      destination: n % DESTINATIONS,
      note: 'crash',
    }));
    // Two batch requests: posting must be over long before delivery is, so the kills below
    // land while events are still undelivered however loaded the machine is.
    const accepted: Accepted[] = await postBatches(
      box,
      tenant.apiKey,
      payloads.map((payload) => ({
        type: 'crash.test',
        destinationId: destinations[payload.destination]!.id,
        payload,
      })),
    );
    const expected = new Map(accepted.map((a, n) => [a.id, JSON.stringify(payloads[n])]));

    // Kill at random moments while delivery is under way, each time restarting on the same dir.
    const progressAtKill: number[] = [];
    for (let k = 0; k < KILLS; k++) {
      await sleep(200 + Math.random() * 1_300);
      progressAtKill.push(rcv.deliveredIds().size);
      await box.kill9();
      box = await start();
    }
    const duringDelivery = progressAtKill.filter((n) => n < EVENTS).length;
    assert.ok(
      duringDelivery >= 3,
      `only ${duringDelivery} kills came while events were still undelivered (delivered at each kill: ${progressAtKill.join(', ')})`,
    );

    await rcv
      .waitFor(
        () => rcv.deliveredIds().size >= EVENTS,
        4 * 60_000,
        `every event to be delivered after the kills (delivered at each kill: ${progressAtKill.join(', ')})`,
      )
      .catch((err: Error) => {
        const missing = [...expected.keys()].filter((id) => !rcv.deliveredIds().has(id));
        throw new Error(
          `${err.message}; ${missing.length} never answered 2xx, e.g. ${missing.slice(0, 5).join(', ')}\n` +
            `last logs:\n${box?.logs.slice(-20).join('\n')}`,
        );
      });

    // Every arrival belongs to an accepted event and carries its exact body; repeats are the same.
    const problems: string[] = [];
    const seen = new Map<string, number>();
    for (const a of rcv.arrivals()) {
      if (!a.complete) continue; // cut off by a kill: the sender died mid-request
      const id = String(a.headers['webhook-id']);
      seen.set(id, (seen.get(id) ?? 0) + 1);
      const body = expected.get(id);
      if (body === undefined) problems.push(`${a.path}: webhook-id ${id} is no accepted event`);
      else if (a.body !== body)
        problems.push(`${a.path}: ${id} arrived with body ${a.body}, expected ${body}`);
    }
    for (const [i, d] of destinations.entries()) {
      const ids = new Set(rcv.arrivals(d.path).map((a) => String(a.headers['webhook-id'])));
      for (const [id, body] of expected) {
        if ((JSON.parse(body) as { destination: number }).destination === i && !ids.has(id)) {
          problems.push(`${d.path}: ${id} went elsewhere`);
        }
      }
    }
    assert.deepEqual(
      problems.slice(0, 20),
      [],
      `${problems.length} problems:\n${problems.slice(0, 20).join('\n')}`,
    );
    const repeats = [...seen.values()].filter((n) => n > 1).length;
    const cutOff = rcv.arrivals().filter((a) => a.status === null).length;
    t.diagnostic(
      `kills at ${progressAtKill.join(', ')} delivered; ${cutOff} requests cut off by a kill; ` +
        `${repeats} events repeated`,
    );

    // The store agrees: every delivery is `delivered`.
    const deliveryIds = accepted.flatMap((a) => a.deliveries.map((d) => d.id));
    const current = box;
    let notDelivered: string[] = [];
    await waitUntil(
      async () => {
        const statuses = await Promise.all(
          deliveryIds.map(async (id) => {
            const res = await current.api<Delivery>('GET', `/v1/deliveries/${id}`, undefined, tenant.apiKey);
            return `${id}: ${res.status === 200 ? res.body.status : `HTTP ${res.status}`}`;
          }),
        );
        notDelivered = statuses.filter((s) => !s.endsWith(': delivered'));
        return notDelivered.length === 0;
      },
      60_000,
      'every delivery to be `delivered` in the store',
      500,
    ).catch((err: Error) => {
      throw new Error(
        `${err.message}; ${notDelivered.length} are not, e.g. ${notDelivered.slice(0, 5).join(', ')}`,
      );
    });

    // SIGTERM drains and exits 0.
    const code = await current.stop();
    box = undefined;
    assert.equal(code, 0, 'SIGTERM should exit 0');
  });
});
