/**
 * The body of the checkpointer (`checkpointer.ts`): its own connection to the database file,
 * running a PASSIVE checkpoint every `intervalMs` — copying committed WAL frames into the
 * database file and syncing it — so the main thread's commits never do. PASSIVE takes no
 * lock that a writer or a reader waits for: it copies what no reader still needs and
 * leaves the rest for the next round.
 *
 * Copying is not enough to keep the WAL small: SQLite starts the WAL over only when a write
 * begins and finds every frame copied, and the main thread commits while this thread copies.
 * When the WAL holds `restartPages` frames or more, the thread tells the main thread
 * (`WAL_LARGE`), which copies what is left — the few frames it committed since,
 * or more when this round could not copy them all — on its own connection: its next write
 * then starts the WAL over.
 */

import { DatabaseSync } from 'node:sqlite';
import { parentPort, workerData } from 'node:worker_threads';
import { type CheckpointSettings, WAL_LARGE } from './checkpoint-protocol.ts';

const port = parentPort;
if (port === null) throw new Error('checkpoint-thread.ts runs as a worker thread');
const { path, intervalMs, restartPages } = workerData as CheckpointSettings;
const db = new DatabaseSync(path, { timeout: 5_000 });
// The checkpoint syncs the WAL before copying and the database file after (as an automatic
// checkpoint of the main connection would at synchronous = NORMAL or FULL).
db.exec('PRAGMA synchronous = NORMAL');
const checkpoint = db.prepare('PRAGMA wal_checkpoint(PASSIVE)');

// One round, then `intervalMs` of rest before the next: the main thread copies its tail in
// that rest, not against a round of ours (two checkpoints at once: one is refused, busy).
const round = (): void => {
  try {
    const { log } = checkpoint.get() as { log: number };
    if (log >= restartPages) port.postMessage(WAL_LARGE);
  } catch {
    // SQLITE_BUSY or a transient error: the next round tries again.
  }
  timer = setTimeout(round, intervalMs);
};
let timer = setTimeout(round, intervalMs);

port.on('message', (message: 'close') => {
  if (message !== 'close') return;
  clearTimeout(timer);
  db.close();
  port.close();
});
