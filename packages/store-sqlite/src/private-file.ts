/**
 * The database file readable by its owner alone: it holds every tenant's payloads. Created
 * 0600 if new, made so if not (where the process may change it); SQLite gives its WAL and
 * shared-memory files the database file's permissions. A directory made for it is 0700.
 */

import { chmodSync, closeSync, mkdirSync, openSync } from 'node:fs';
import { dirname } from 'node:path';

export function createPrivately(path: string): void {
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  closeSync(openSync(path, 'a', 0o600));
  try {
    chmodSync(path, 0o600);
  } catch {
    // Not this process's file to change (another owner): it opens as it is.
  }
}
