import assert from 'node:assert/strict';
import { it } from 'node:test';
import { BulkLane } from './bulk-lane.ts';

it('the bulk lane runs one batch at a time, back to back while no light request is about', async () => {
  let now = 0;
  const lane = new BulkLane(() => now);
  const order: string[] = [];
  const first = await lane.enter();
  const second = lane.enter().then((leave) => {
    order.push(`second at ${now}`);
    return leave;
  });
  await new Promise((r) => setImmediate(r));
  assert.deepEqual(order, [], 'waits while the first runs');
  now = 40;
  first();
  (await second)();
  assert.deepEqual(order, ['second at 40'], 'at once after it: nobody else posts');
});

it('with light requests about, a batch waits after the one before for as long as that one took', async (t) => {
  t.mock.timers.enable({ apis: ['setTimeout'] });
  let now = 0;
  const lane = new BulkLane(() => now);
  (
    await lane.enter().then((leave) => {
      now = 30;
      return leave;
    })
  )();
  lane.noteLight();
  let started = false;
  const next = lane.enter().then((leave) => {
    started = true;
    return leave;
  });
  await new Promise((r) => setImmediate(r));
  assert.equal(started, false, 'the room after a 30 ms batch is 30 ms');
  t.mock.timers.tick(30);
  now = 60;
  (await next)();
  assert.equal(started, true);
});
