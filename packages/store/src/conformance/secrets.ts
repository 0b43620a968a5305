/**
 * Store conformance: signing secrets at rest. The store hands its callers the secrets as
 * they were given (the engine signs with them), and holds none of them in the clear: the
 * column a dump or a read replica shows has each one sealed (`@sluice/core`'s secret box).
 */

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { generateSecret } from '@sluice/core';
import { newDestination, newTenant, type OpenStore, T0 } from './fixtures.ts';

export function secretCases(open: OpenStore): void {
  describe('signing secrets', () => {
    it('round-trip through create, read, patch and list, and are sealed in the row', async () => {
      const { store, cleanup, rawSecrets } = await open();
      try {
        const tenant = newTenant();
        await store.createTenant(tenant, `hash-${tenant.id}`);
        const current = generateSecret();
        const previous = generateSecret();
        const secrets = [
          { secret: current, expiresAt: null },
          { secret: previous, expiresAt: T0 + 86_400_000 },
        ];
        const input = newDestination(tenant.id, { secrets });
        assert.deepEqual((await store.createDestination(input, T0)).secrets, secrets);
        assert.deepEqual((await store.getDestination(input.id))?.secrets, secrets);
        assert.deepEqual((await store.listDestinations(tenant.id))[0]?.secrets, secrets);
        assert.deepEqual((await store.pageDestinations(tenant.id, { limit: 10 })).items[0]?.secrets, secrets);
        const assertSealed = async (plain: string[]) => {
          const raw = await rawSecrets(input.id);
          const stored = JSON.parse(raw) as { secret: string; expiresAt: number | null }[];
          assert.equal(stored.length, plain.length);
          for (const s of stored) assert.match(s.secret, /^enc:v1:[A-Za-z0-9_-]+:[A-Za-z0-9_-]+$/);
          // Neither the secret nor its key bytes (what follows `whsec_`) appear in the row.
          for (const p of plain) assert.ok(!raw.includes(p.slice('whsec_'.length)), 'a secret in the clear');
        };
        await assertSealed([current, previous]);

        const rotated = generateSecret();
        const next = [
          { secret: rotated, expiresAt: null },
          { secret: current, expiresAt: T0 + 5 },
        ];
        assert.deepEqual((await store.updateDestination(input.id, { secrets: next }, T0 + 1))?.secrets, next);
        assert.deepEqual((await store.getDestination(input.id))?.secrets, next);
        await assertSealed([rotated, current]);
        // A patch of other settings writes them sealed too.
        await store.updateDestination(input.id, { name: 'renamed' }, T0 + 2);
        assert.deepEqual((await store.getDestination(input.id))?.secrets, next);
        await assertSealed([rotated, current]);
      } finally {
        await cleanup();
      }
    });

    it("headers and a credential round-trip; the credential's secret is sealed in the row; null removes it", async () => {
      const { store, cleanup, rawAuth } = await open();
      try {
        const tenant = newTenant();
        await store.createTenant(tenant, `hash-${tenant.id}`);
        const headers = { 'X-Tenant': 'acme', 'User-Agent': 'acme-hooks/1' };
        const auth = { type: 'basic' as const, username: 'acme', password: 'pw-in-the-clear-9f3' };
        const input = newDestination(tenant.id, { headers, auth });
        const created = await store.createDestination(input, T0);
        assert.deepEqual([created.headers, created.auth], [headers, auth]);
        assert.deepEqual((await store.listDestinations(tenant.id))[0]?.auth, auth);
        const raw = (await rawAuth(input.id)) ?? '';
        assert.ok(!raw.includes('pw-in-the-clear-9f3'), 'the password in the clear');
        assert.match((JSON.parse(raw) as { password: string }).password, /^enc:v1:/);
        assert.equal(
          (JSON.parse(raw) as { username: string }).username,
          'acme',
          'the username is not secret',
        );
        const bearer = { type: 'bearer' as const, token: 'tok-in-the-clear-77a' };
        await store.updateDestination(input.id, { auth: bearer }, T0 + 1);
        assert.deepEqual((await store.getDestination(input.id))?.auth, bearer);
        assert.ok(!((await rawAuth(input.id)) ?? '').includes('tok-in-the-clear-77a'));
        await store.updateDestination(input.id, { name: 'renamed' }, T0 + 2);
        assert.deepEqual((await store.getDestination(input.id))?.auth, bearer, 'another patch keeps it');
        await store.updateDestination(input.id, { auth: null, headers: {} }, T0 + 3);
        const cleared = await store.getDestination(input.id);
        assert.deepEqual([cleared?.auth, cleared?.headers], [null, {}]);
        assert.equal(await rawAuth(input.id), null);
      } finally {
        await cleanup();
      }
    });
  });
}
