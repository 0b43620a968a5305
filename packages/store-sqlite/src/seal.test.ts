/**
 * Sealing at open (seal.ts): a file written before encryption — secrets in the clear — comes
 * out of its first open with every secret sealed and no plain copy left in the file's bytes
 * (free pages, the WAL); a rotated keyring seals again with its first key.
 */

import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { generateKeyText, generateSecret, newId, parseKeyring } from '@sluice/core';
import { newDestination } from '@sluice/store/conformance';
import { SqliteStore } from './sqlite-store.ts';

const T0 = 1_700_000_000_000;

/** The database file's bytes and its WAL's, as latin1 text to search. */
function fileBytes(file: string): string {
  const parts = [file, `${file}-wal`].filter((f) => existsSync(f)).map((f) => readFileSync(f));
  return Buffer.concat(parts).toString('latin1');
}

const rawSecrets = (store: SqliteStore, id: string) =>
  JSON.parse(
    (store.db.prepare('SELECT secrets FROM destinations WHERE id = ?').get(id) as { secrets: string })
      .secrets,
  ) as { secret: string; expiresAt: number | null }[];

describe('sealing secrets at open', () => {
  it('seals the plain secrets of an older file and leaves no plain copy in its bytes', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sluice-seal-'));
    const file = join(dir, 'sluice.db');
    const keyText = generateKeyText();
    const keyring = parseKeyring(keyText);
    try {
      const before = new SqliteStore(file, { keyring });
      const tenant = { id: newId('ten'), name: 'a', createdAt: T0 };
      await before.createTenant(tenant, 'hash');
      const plain = Array.from({ length: 50 }, () => generateSecret());
      const ids: string[] = [];
      for (const secret of plain) {
        const d = await before.createDestination(
          newDestination(tenant.id, { secrets: [{ secret, expiresAt: null }] }),
          T0,
        );
        ids.push(d.id);
      }
      // As a release before encryption wrote them: each secret in the clear.
      const update = before.db.prepare('UPDATE destinations SET secrets = ? WHERE id = ?');
      for (const [i, id] of ids.entries())
        update.run(JSON.stringify([{ secret: plain[i], expiresAt: null }]), id);
      await before.close();
      const bytes = fileBytes(file);
      assert.ok(
        plain.every((s) => bytes.includes(s)),
        'the test starts from a file with its secrets in the clear',
      );

      const after = new SqliteStore(file, { keyring });
      try {
        for (const [i, id] of ids.entries()) {
          assert.match(rawSecrets(after, id)[0]?.secret ?? '', /^enc:v1:/);
          assert.deepEqual((await after.getDestination(id))?.secrets, [
            { secret: plain[i], expiresAt: null },
          ]);
        }
        const sealed = fileBytes(file);
        for (const s of plain)
          assert.ok(!sealed.includes(s.slice('whsec_'.length)), 'a plain secret is left');
      } finally {
        await after.close();
      }

      // Rotation: a new key first, the old one after; the next open seals again with the new one.
      const rotated = parseKeyring(`${generateKeyText()},${keyText}`);
      const again = new SqliteStore(file, { keyring: rotated });
      try {
        const id = ids[0] as string;
        assert.ok(rawSecrets(again, id)[0]?.secret.startsWith(`enc:v1:${rotated.keys[0].id}:`));
        assert.deepEqual((await again.getDestination(id))?.secrets, [{ secret: plain[0], expiresAt: null }]);
      } finally {
        await again.close();
      }
      // The old key alone no longer opens them (the rows name the new one): it does not start.
      assert.throws(() => new SqliteStore(file, { keyring }), { code: 'SLUICE_KEY_UNKNOWN' });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("seals every credential's secret again with a rotated keyring, OAuth2's clientSecret too", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sluice-seal-'));
    const file = join(dir, 'sluice.db');
    const keyText = generateKeyText();
    try {
      const first = new SqliteStore(file, { keyring: parseKeyring(keyText) });
      const tenant = { id: newId('ten'), name: 'a', createdAt: T0 };
      await first.createTenant(tenant, 'hash');
      const auths = [
        { type: 'bearer' as const, token: 'tok-1' },
        { type: 'basic' as const, username: 'u', password: 'pw-2' },
        { type: 'header' as const, name: 'x-key', value: 'key-3' },
        {
          type: 'oauth2_client_credentials' as const,
          tokenUrl: 'https://auth.example/token',
          clientId: 'c',
          clientSecret: 'cs-4',
        },
      ];
      const ids: string[] = [];
      for (const auth of auths)
        ids.push((await first.createDestination(newDestination(tenant.id, { auth }), T0)).id);
      await first.close();
      const rotated = parseKeyring(`${generateKeyText()},${keyText}`);
      const again = new SqliteStore(file, { keyring: rotated });
      try {
        for (const [i, id] of ids.entries()) {
          const raw = (
            again.db.prepare('SELECT auth FROM destinations WHERE id = ?').get(id) as { auth: string }
          ).auth;
          assert.ok(
            raw.includes(`enc:v1:${rotated.keys[0].id}:`),
            `${auths[i]?.type}: sealed with the new key`,
          );
          assert.deepEqual((await again.getDestination(id))?.auth, auths[i]);
        }
      } finally {
        await again.close();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
