/**
 * WAL checkpoints off the main thread. SQLite runs an automatic checkpoint inside the commit
 * that pushes the WAL past 1,000 pages: the main thread then copies every page into the
 * database file and syncs it, tens of milliseconds in which no request, tick or response
 * is served (the single box's latency tail: docs/performance.md, Decisions). With a
 * checkpointer the main connection turns its automatic checkpoints off
 * (`wal_autocheckpoint = 0`) and a worker thread with a connection of its own checkpoints
 * every `intervalMs` (`checkpoint-thread.ts`).
 *
 * The thread's checkpoints alone would let the WAL grow without bound under steady writes
 * (`checkpoint-thread.ts`): when it reports a large WAL, the main connection copies what is
 * left — mostly the few frames it committed since the thread's round, between two of its own
 * transactions — so its next write starts the WAL over, and `journal_size_limit` cuts the
 * file back then.
 *
 * Should the thread end, the main connection checkpoints automatically again, as SQLite does
 * by default: the WAL never grows without bound.
 */

import type { DatabaseSync } from 'node:sqlite';
import { Worker } from 'node:worker_threads';
import { type CheckpointSettings, WAL_LARGE } from './checkpoint-protocol.ts';

const ENTRY = new URL('./checkpoint-thread.ts', import.meta.url);
/** SQLite's default: an automatic checkpoint past 1,000 WAL pages. */
const AUTO_CHECKPOINT_PAGES = 1_000;
/** Frames (pages) in the WAL from which it is made to start over, unless configured. */
const WAL_RESTART_PAGES = 8_192;
/** The size the WAL file is cut back to when it starts over (bytes). */
const WAL_SIZE_LIMIT = 64 * 1024 * 1024;

export class Checkpointer {
  private readonly worker: Worker;
  private readonly exited: Promise<void>;
  private closing = false;

  constructor(
    db: DatabaseSync,
    {
      restartPages = WAL_RESTART_PAGES,
      ...settings
    }: Omit<CheckpointSettings, 'restartPages'> & {
      restartPages?: number | undefined;
    },
  ) {
    db.exec('PRAGMA wal_autocheckpoint = 0');
    db.exec(`PRAGMA journal_size_limit = ${WAL_SIZE_LIMIT}`);
    const tail = db.prepare('PRAGMA wal_checkpoint(PASSIVE)');
    this.worker = new Worker(ENTRY, {
      workerData: { ...settings, restartPages } satisfies CheckpointSettings,
    });
    // Runs between two of the main connection's transactions (each is synchronous).
    this.worker.on('message', (message: unknown) => {
      if (message !== WAL_LARGE || this.closing || !db.isOpen) return;
      try {
        tail.get();
      } catch {
        // SQLITE_BUSY (the thread is checkpointing): its next report asks again.
      }
    });
    // A checkpointer never keeps the process alive.
    this.worker.unref();
    this.exited = new Promise((resolve) => {
      this.worker.once('exit', () => {
        if (!this.closing && db.isOpen) db.exec(`PRAGMA wal_autocheckpoint = ${AUTO_CHECKPOINT_PAGES}`);
        resolve();
      });
    });
    // An error ends the thread; 'exit' follows and restores the automatic checkpoints.
    this.worker.on('error', () => undefined);
  }

  /** Ends the thread; the main connection's close then checkpoints what is left. */
  async close(): Promise<void> {
    this.closing = true;
    // Awaited, so held: a process with nothing else left would otherwise end in the wait.
    this.worker.ref();
    this.worker.postMessage('close');
    await this.exited;
  }
}
