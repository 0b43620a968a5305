import assert from 'node:assert/strict';
import { it } from 'node:test';
import { BulkLane } from './bulk-lane.ts';

it('the bulk lane runs one batch at a time, back to back while no light request is about', async () => {
  let now = 0;
  const lane = new BulkLane(() => now);
  const order: string[] = [];
  const first = await lane.enter('ten_a');
  const second = lane.enter('ten_a').then((leave) => {
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
    await lane.enter('ten_a').then((leave) => {
      now = 30;
      return leave;
    })
  )();
  lane.noteLight();
  let started = false;
  const next = lane.enter('ten_a').then((leave) => {
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

it("waiting batches go round robin by tenant: one tenant's many do not queue another's", async () => {
  const lane = new BulkLane(() => 0);
  const order: string[] = [];
  const first = await lane.enter('ten_a');
  const entered = ['ten_a', 'ten_a', 'ten_b'].map((tenant, i) =>
    lane.enter(tenant).then((leave) => {
      order.push(`${tenant}#${i}`);
      leave();
    }),
  );
  first();
  await Promise.all(entered);
  assert.deepEqual(order, ['ten_a#0', 'ten_b#2', 'ten_a#1']);
});

it('others are active for a second after a light request (a batch then goes into the store in slices)', () => {
  let now = 0;
  const lane = new BulkLane(() => now);
  assert.equal(lane.othersActive(), false, 'nobody has posted');
  lane.noteLight();
  now = 1_000;
  assert.equal(lane.othersActive(), true);
  now = 1_001;
  assert.equal(lane.othersActive(), false);
});
