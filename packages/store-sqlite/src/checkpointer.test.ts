/**
 * WAL checkpoints on their own thread (checkpointer.ts): the main connection's automatic
 * checkpoints are off, the thread copies committed pages into the database file, and when
 * the thread ends the automatic checkpoints come back.
 */

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import type { Worker } from 'node:worker_threads';
import { newKeyring } from '@sluice/core';
import { SqliteStore, type SqliteStoreOptions } from './sqlite-store.ts';

const keyring = newKeyring();

function tempStore(checkpointIntervalMs: number | undefined, options: Partial<SqliteStoreOptions> = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'sluice-ckpt-'));
  const path = join(dir, 'sluice.db');
  const store = new SqliteStore(path, { keyring, checkpointIntervalMs, ...options });
  store.db.exec('CREATE TABLE scratch (v BLOB NOT NULL)');
  const fill = (rows: number) => {
    const insert = store.db.prepare('INSERT INTO scratch (v) VALUES (randomblob(4000))');
    for (let i = 0; i < rows; i++) insert.run();
  };
  const autocheckpoint = () =>
    (store.db.prepare('PRAGMA wal_autocheckpoint').get() as { wal_autocheckpoint: number })
      .wal_autocheckpoint;
  return {
    dir,
    path,
    store,
    fill,
    autocheckpoint,
    cleanup: () => rmSync(dir, { recursive: true, force: true }),
  };
}

const until = async (check: () => boolean, ms: number) => {
  const end = Date.now() + ms;
  while (!check() && Date.now() < end) await new Promise((r) => setTimeout(r, 10));
  return check();
};

describe('Checkpointer', () => {
  it('the thread, not a commit, moves the WAL into the database file', async () => {
    const t = tempStore(20);
    try {
      assert.equal(t.autocheckpoint(), 0, 'no automatic checkpoint inside the main connection’s commits');
      const before = statSync(t.path).size;
      t.fill(500); // ~2 MB of pages, all in the WAL until a checkpoint copies them
      assert.ok(
        await until(() => statSync(t.path).size > before + 1_000_000, 5_000),
        `the database file grew by the checkpointed pages (${before} -> ${statSync(t.path).size} bytes)`,
      );
    } finally {
      await t.store.close();
      t.cleanup();
    }
  });

  it('under steady writes the WAL starts over instead of growing without bound', async () => {
    // A checkpoint on another connection copies the frames committed before it began, and
    // the writer commits more meanwhile: the WAL is never wholly copied when a write begins,
    // which is the only moment SQLite starts it over. Without the main connection's own
    // checkpoint of that short tail, a soak's WAL grows without bound.
    const t = tempStore(20, { synchronous: 'normal', walRestartPages: 256 });
    try {
      const wal = `${t.path}-wal`;
      // The thread is up once it has copied something into the database file.
      const before = statSync(t.path).size;
      t.fill(300);
      assert.ok(await until(() => statSync(t.path).size > before, 5_000), 'the thread checkpoints');
      let largest = 0;
      const rows = 16_000; // ~64 MB of pages, each row on a page of its own, over ~4 s
      for (let i = 0; i < rows; i += 20) {
        t.fill(20);
        largest = Math.max(largest, statSync(wal).size);
        await new Promise((r) => setTimeout(r, 5));
      }
      largest = Math.max(largest, statSync(wal).size);
      // Without the main thread's part the WAL holds nearly all of it; with it, at most the
      // longest stretch between two restarts, a small part, even beside two busy loops.
      const written = rows * 4_096;
      assert.ok(
        largest < written / 2,
        `the WAL started over: ${largest} bytes at most, for ${written} written`,
      );
      const n = (t.store.db.prepare('SELECT count(*) AS n FROM scratch').get() as { n: number }).n;
      assert.equal(n, rows + 300);
    } finally {
      await t.store.close();
      t.cleanup();
    }
  });

  it('without a checkpointer the pages stay in the WAL below the automatic threshold', async () => {
    const t = tempStore(undefined);
    try {
      assert.equal(t.autocheckpoint(), 1_000);
      const before = statSync(t.path).size;
      t.fill(200); // ~800 KB: under 1,000 pages, so no automatic checkpoint runs
      await new Promise((r) => setTimeout(r, 100));
      assert.equal(statSync(t.path).size, before, 'the control: nothing checkpointed on its own');
    } finally {
      await t.store.close();
      t.cleanup();
    }
  });

  it('when the thread ends, the main connection checkpoints automatically again', async () => {
    const t = tempStore(1_000);
    try {
      const worker = (t.store as unknown as { checkpointer: { worker: Worker } }).checkpointer.worker;
      await worker.terminate();
      assert.ok(await until(() => t.autocheckpoint() === 1_000, 2_000), 'automatic checkpoints restored');
    } finally {
      await t.store.close();
      t.cleanup();
    }
  });

  it('close ends the thread and leaves a database that opens with everything in it', async () => {
    const t = tempStore(20);
    t.fill(50);
    await t.store.close();
    const again = new SqliteStore(t.path, { keyring });
    try {
      const n = (again.db.prepare('SELECT count(*) AS n FROM scratch').get() as { n: number }).n;
      assert.equal(n, 50);
    } finally {
      await again.close();
      t.cleanup();
    }
  });
});
