/**
 * The body of the checkpointer (`checkpointer.ts`): its own connection to the database file,
 * running a PASSIVE checkpoint every `intervalMs` — copying committed WAL frames into the
 * database file and syncing it — so the main thread's commits never do. PASSIVE takes no
 * lock that a writer or a reader waits for: it copies what no reader still needs and
 * leaves the rest for the next round.
 */

import { DatabaseSync } from 'node:sqlite';
import { parentPort, workerData } from 'node:worker_threads';

export interface CheckpointSettings {
  path: string;
  intervalMs: number;
}

const port = parentPort;
if (port === null) throw new Error('checkpoint-thread.ts runs as a worker thread');
const { path, intervalMs } = workerData as CheckpointSettings;
const db = new DatabaseSync(path, { timeout: 5_000 });
// The checkpoint syncs the WAL before copying and the database file after (as an automatic
// checkpoint of the main connection would at synchronous = NORMAL or FULL).
db.exec('PRAGMA synchronous = NORMAL');
const checkpoint = db.prepare('PRAGMA wal_checkpoint(PASSIVE)');

const timer = setInterval(() => {
  try {
    checkpoint.get();
  } catch {
    // SQLITE_BUSY or a transient error: the next round tries again.
  }
}, intervalMs);

port.on('message', (message: 'close') => {
  if (message !== 'close') return;
  clearInterval(timer);
  db.close();
  port.close();
});
