/**
 * `SLUICE_ENCRYPTION_KEY` for `npm start` and `npm run start:distributed`: given, or kept in
 * `<SLUICE_DATA_DIR>/encryption-key`, or generated there on the first start, as the admin
 * token is (docs/operations.md "The encryption key"). A service started on its own has no
 * data directory and must be given it.
 */

import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { generateKeyText, type Keyring, parseKeyring } from '@sluice/core';

/** The file's name in the data directory. */
export const KEY_FILE = 'encryption-key';

/** The keyring as `SLUICE_ENCRYPTION_KEY` writes it, from the data directory's file (generated if missing). */
export function keptKeyText(dataDir: string): { text: string; generated: boolean } {
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const file = join(dataDir, KEY_FILE);
  if (existsSync(file)) return { text: readFileSync(file, 'utf8').trim(), generated: false };
  const text = generateKeyText();
  // `wx`: two processes starting on one new data directory never keep different keys.
  try {
    writeFileSync(file, `${text}\n`, { mode: 0o600, flag: 'wx' });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    return { text: readFileSync(file, 'utf8').trim(), generated: false };
  }
  return { text, generated: true };
}

/** The keyring: the one given (`SLUICE_ENCRYPTION_KEY`), else the data directory's. */
export function encryptionKey(
  dataDir: string,
  given: Keyring | undefined,
): { keyring: Keyring; generated: boolean } {
  if (given !== undefined) return { keyring: given, generated: false };
  const kept = keptKeyText(dataDir);
  return { keyring: parseKeyring(kept.text), generated: kept.generated };
}
