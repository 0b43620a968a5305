/**
 * Store conformance: readiness on a full disk (`DiskFull`, disk-full.ts). While the disk is
 * full, a write is refused with an error the API answers 503 (`isUnavailable`) and `ping`
 * rejects with a `StoreUnavailableError` that says so, though reads still answer; once there
 * is room, `ping` resolves again (its probe write succeeds) and so do writes. The full disk
 * is each store's own fault hook (`OpenStore.fillDisk`): its engine's error, not a mock.
 */

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isUnavailable, StoreUnavailableError } from '../unavailable.ts';
import { newDestination, newEvent, newTenant, type OpenStore, T0 } from './fixtures.ts';

/** An event that needs room of its own: 256 KiB of payload. */
const BIG = JSON.stringify({ blob: 'x'.repeat(256 * 1024) });

export function diskFullCases(open: OpenStore): void {
  describe('a full disk', () => {
    it('a refused write makes ping reject, saying why, until a probe write succeeds', async () => {
      const { store, cleanup, fillDisk } = await open();
      try {
        const tenant = newTenant();
        await store.createTenant(tenant, `hash-${tenant.id}`);
        const to = await store.createDestination(newDestination(tenant.id), T0);
        const accept = () => store.acceptEvents(tenant.id, [newEvent([to.id], { payload: BIG })], T0);
        await store.ping();
        const makeRoom = await fillDisk();
        await store.ping(); // nothing has been refused yet: nothing to probe

        const refused = await accept().then(
          () => assert.fail('accepted on a full disk'),
          (err: unknown) => err,
        );
        assert.ok(isUnavailable(refused), `a 503, not a 500: ${String(refused)}`);
        for (let i = 0; i < 2; i++) {
          await assert.rejects(store.ping(), (err: unknown) => {
            assert.ok(err instanceof StoreUnavailableError, String(err));
            assert.match(err.message, /disk is full/);
            return true;
          });
        }
        assert.equal((await store.getDestination(to.id))?.id, to.id, 'reads still answer');

        await makeRoom();
        await store.ping();
        await store.ping();
        assert.equal((await accept()).length, 1, 'writes succeed again');
      } finally {
        await cleanup();
      }
    });

    it('an error that is not a full disk leaves ping as it was', async () => {
      const { store, cleanup } = await open();
      try {
        const tenant = newTenant();
        await store.createTenant(tenant, `hash-${tenant.id}`);
        await assert.rejects(store.createTenant(tenant, `hash-${tenant.id}`), 'a duplicate');
        await store.ping();
      } finally {
        await cleanup();
      }
    });
  });
}
