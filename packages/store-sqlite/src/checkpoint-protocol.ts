/**
 * What the main thread (`checkpointer.ts`) and the checkpoint thread (`checkpoint-thread.ts`)
 * exchange: the settings the thread starts with, and the one message it sends back.
 */

export interface CheckpointSettings {
  path: string;
  intervalMs: number;
  /** Frames in the WAL from which the main thread is asked to let it start over. */
  restartPages: number;
}

/** The thread's message: a round found `restartPages` frames or more in the WAL. */
export const WAL_LARGE = 'wal-large';
