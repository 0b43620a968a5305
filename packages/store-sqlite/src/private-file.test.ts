/**
 * The database file readable by its owner alone (private-file.ts): a new one and its WAL are
 * 0600 in a 0700 directory; an existing file left 0644 by an older release is made 0600.
 */

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { newKeyring } from '@sluice/core';
import { SqliteStore } from './sqlite-store.ts';

const mode = (path: string) => statSync(path).mode & 0o777;

describe('the database file', () => {
  it('is created 0600, its WAL too, in a directory created 0700', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sluice-mode-'));
    try {
      const path = join(dir, 'data', 'sluice.db');
      const store = new SqliteStore(path, { keyring: newKeyring() });
      await store.createTenant({ id: 'ten_mode', name: 'M', createdAt: 1 }, 'hash');
      assert.equal(mode(path).toString(8), '600');
      assert.equal(mode(`${path}-wal`).toString(8), '600', 'SQLite gives the WAL the file’s mode');
      assert.equal(mode(join(dir, 'data')).toString(8), '700');
      await store.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('an existing file readable by others is made 0600 at open', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sluice-mode-'));
    try {
      const path = join(dir, 'sluice.db');
      writeFileSync(path, '', { mode: 0o644 });
      assert.equal(mode(path).toString(8), '644');
      const store = new SqliteStore(path, { keyring: newKeyring() });
      assert.equal(mode(path).toString(8), '600');
      await store.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
