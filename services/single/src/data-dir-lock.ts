/**
 * The single box's hold on its data directory: one box at a time. Two on one directory would
 * share `sluice.db` and each pace every destination to its whole limit, so a destination
 * would get twice its limit, and Sluice's own audit would not see it as a breach.
 *
 * The hold is an exclusive lock on `<data dir>/sluice.lock`, a small SQLite database taken
 * with SQLite's own locking (`PRAGMA locking_mode = EXCLUSIVE` and an exclusive
 * transaction: the connection keeps the lock until it closes). On Unix that is a POSIX
 * advisory lock (`fcntl`), which the kernel drops when the process ends however it ends, so
 * a `kill -9` never leaves the directory held; SQLite also tracks its locks per file within
 * a process, so a second box started in the same process is refused as well. The file holds
 * no data (no pid, no time): there is nothing to judge stale, only a lock held or not. Node
 * has no `flock`; `node:sqlite` is already how the box reaches its files.
 *
 * The distributed services never take it: they share a data directory for their keys.
 */

import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';

/** The lock's file in the data directory. */
const LOCK_FILE = 'sluice.lock';

/** SQLite's SQLITE_BUSY: another connection holds the lock. */
const SQLITE_BUSY = 5;

/** Another Sluice holds the data directory (its message says what to do). */
export class DataDirInUseError extends Error {
  readonly code = 'SLUICE_DATA_DIR_IN_USE';
  readonly dataDir: string;

  constructor(dataDir: string) {
    super(
      `the data directory ${dataDir} is in use by another Sluice (a single box holds its data ` +
        `directory while it runs: two on one directory would each send every destination its ` +
        `whole rate limit). Stop that one first, or give this one a directory and a port of its ` +
        `own: SLUICE_DATA_DIR=<another directory> PORT=<another port>.`,
    );
    this.name = 'DataDirInUseError';
    this.dataDir = dataDir;
  }
}

/** The hold on a data directory, until `release` (or the process's end). */
export interface DataDirLock {
  release(): void;
}

/**
 * Takes `dataDir` (which must exist) for this process, at once or not at all: throws
 * `DataDirInUseError` when another box holds it, whether in another process or this one.
 */
export function lockDataDir(dataDir: string): DataDirLock {
  // `timeout: 0`: a held lock is an answer, not something to wait for.
  const db = new DatabaseSync(join(dataDir, LOCK_FILE), { timeout: 0 });
  try {
    db.exec('PRAGMA locking_mode = EXCLUSIVE');
    db.exec('BEGIN EXCLUSIVE');
    db.exec('COMMIT');
  } catch (err) {
    db.close();
    if ((err as { errcode?: unknown }).errcode === SQLITE_BUSY) throw new DataDirInUseError(dataDir);
    throw err;
  }
  let held = true;
  return {
    release() {
      if (!held) return;
      held = false;
      db.close();
    },
  };
}
