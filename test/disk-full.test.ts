/**
 * A full disk seen from outside (docs/operations.md "Readiness"): while the store cannot
 * write, ingest answers `503 unavailable` and `/readyz` answers 503 saying why (its probe
 * write is refused too), reads still answer; once it can, `/readyz` is 200 and ingest 202.
 *
 * The distributed shape's full disk is Postgres's own `disk_full` (SQLSTATE 53100), raised
 * by triggers on the box's database for inserts into the events and into the probe's table,
 * as "could not extend file" is. The single box's is a real one: test/outage.test.ts fills
 * a tmpfs under its data directory; this file runs in the distributed shape only.
 */

import assert from 'node:assert/strict';
import { it } from 'node:test';
import { SHAPE } from './helpers/shape.ts';
import { createDestination, createTenant, harness } from './helpers/sluice.ts';

const skip = SHAPE !== 'distributed' && 'distributed shape only (the single box: test/outage.test.ts)';

it('the disk full: ingest 503 and /readyz 503 saying why; room again: 200, then 202', { skip }, async (t) => {
  const { box, rcv } = await harness(t);
  const tenant = await createTenant(box, box.adminToken, 'disk-full');
  const dst = await createDestination(box, tenant.apiKey, {
    url: rcv.url('full'),
    rateLimit: { limit: 10, period: 'second' },
  });
  const send = () =>
    box.api(
      'POST',
      '/v1/events',
      { type: 'order.paid', payload: { n: 1 }, destinationId: dst.id },
      tenant.apiKey,
    );
  const readyz = async () => {
    const res = await fetch(`${box.url}/readyz`);
    return { status: res.status, body: (await res.json()) as { status: string; reason?: string } };
  };
  assert.equal((await send()).status, 202);

  await box.query(`CREATE FUNCTION disk_full() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN RAISE EXCEPTION 'could not extend file: No space left on device' USING ERRCODE = 'disk_full'; END $$`);
  for (const table of ['events', 'write_probe'])
    await box.query(`CREATE TRIGGER disk_full BEFORE INSERT ON ${table} EXECUTE FUNCTION disk_full()`);
  assert.equal((await readyz()).status, 200, 'nothing refused yet');
  const refused = await send();
  assert.equal(refused.status, 503, JSON.stringify(refused.body));
  assert.equal((refused.body as { error: { code: string } }).error.code, 'unavailable');
  const full = {
    status: 503,
    body: { status: 'unavailable', reason: 'the store cannot write: its disk is full' },
  };
  assert.deepEqual(await readyz(), full);
  assert.deepEqual(await readyz(), full, 'still: its probe write is refused too');
  assert.equal((await fetch(`${box.url}/healthz`)).status, 200);
  assert.equal((await box.api('GET', `/v1/destinations/${dst.id}`, undefined, tenant.apiKey)).status, 200);

  await box.query('DROP FUNCTION disk_full() CASCADE');
  assert.deepEqual(await readyz(), { status: 200, body: { status: 'ready' } });
  assert.equal((await send()).status, 202);
});
