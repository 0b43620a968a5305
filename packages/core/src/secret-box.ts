/**
 * Signing secrets encrypted at rest: AES-256-GCM with a key from `SLUICE_ENCRYPTION_KEY`
 * (docs/operations.md "The encryption key").
 *
 * A keyring is written `<id>:<base64 of 32 bytes>[,<id>:<base64>…]`. The first key seals;
 * every key opens, so a new key is prepended to rotate and the old ones stay until every row
 * is sealed again (the stores do that at start). A sealed value names its key:
 *
 *   enc:v1:<key id>:<base64url(iv 12 bytes | tag 16 bytes | ciphertext)>
 *
 * The header `enc:v1:<key id>` is the GCM's associated data, so a value cannot be made to
 * name another key. A value without the `enc:` prefix is a secret stored before encryption:
 * read as it is, and sealed by the next start's migration.
 */

import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

const PREFIX = 'enc:v1:';
const KEY_ID = /^[A-Za-z0-9_-]{1,32}$/;
const IV_BYTES = 12;
const TAG_BYTES = 16;

export type SecretBoxErrorCode = 'SLUICE_KEY_INVALID' | 'SLUICE_KEY_UNKNOWN' | 'SLUICE_SECRET_UNREADABLE';

export class SecretBoxError extends Error {
  readonly code: SecretBoxErrorCode;

  constructor(code: SecretBoxErrorCode, message: string) {
    super(message);
    this.name = 'SecretBoxError';
    this.code = code;
  }
}

interface Key {
  id: string;
  bytes: Buffer;
}

/** The keys of `SLUICE_ENCRYPTION_KEY`, the sealing one first. */
export interface Keyring {
  readonly keys: readonly [Key, ...Key[]];
}

/** What `SLUICE_ENCRYPTION_KEY` must look like, for a config error. */
export const KEYRING_FORMAT = '<id>:<base64 of 32 random bytes>[,<id>:<base64>…], the first one sealing';

/** Parses `SLUICE_ENCRYPTION_KEY`; a malformed one throws SLUICE_KEY_INVALID naming the part. */
export function parseKeyring(text: string): Keyring {
  const keys = text
    .split(',')
    .map((part) => part.trim())
    .filter((part) => part !== '')
    .map(parseKey);
  const [first, ...rest] = keys;
  if (first === undefined) throw invalid('no key');
  const ids = new Set(keys.map((k) => k.id));
  if (ids.size !== keys.length) throw invalid('two keys have the same id');
  return { keys: [first, ...rest] };
}

function parseKey(part: string): Key {
  const colon = part.indexOf(':');
  const id = part.slice(0, colon);
  if (colon < 0 || !KEY_ID.test(id))
    throw invalid(`a key must start with an id of letters, digits, _ or - and a colon`);
  const b64 = part.slice(colon + 1);
  const bytes = Buffer.from(b64, 'base64');
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(b64) || bytes.length !== 32)
    throw invalid(`key ${id} must be 32 bytes in base64 (openssl rand -base64 32)`);
  return { id, bytes };
}

const invalid = (why: string) => new SecretBoxError('SLUICE_KEY_INVALID', `SLUICE_ENCRYPTION_KEY: ${why}`);

/** A new key as `SLUICE_ENCRYPTION_KEY` takes it, with a random id (what `npm start` generates). */
export function generateKeyText(): string {
  return `k${randomBytes(4).toString('hex')}:${randomBytes(32).toString('base64')}`;
}

/** A keyring of one fresh key: for a store whose secrets outlive no process (tests, `:memory:`). */
export function newKeyring(): Keyring {
  return parseKeyring(generateKeyText());
}

/** Whether `stored` is a sealed value (else: a secret stored before encryption). */
export function isSealed(stored: string): boolean {
  return stored.startsWith(PREFIX);
}

/** Whether `stored` is sealed with the keyring's sealing key (nothing to do at rotation). */
export function isSealedWithCurrent(keyring: Keyring, stored: string): boolean {
  return stored.startsWith(`${PREFIX}${keyring.keys[0].id}:`);
}

/** `plain` sealed with the keyring's first key. */
export function sealSecret(keyring: Keyring, plain: string): string {
  const key = keyring.keys[0];
  const header = `${PREFIX}${key.id}`;
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', key.bytes, iv);
  cipher.setAAD(Buffer.from(header));
  const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
  return `${header}:${Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64url')}`;
}

/**
 * The secret `stored` holds: opened with the key it names, or as it is when it was stored
 * before encryption. A key not in the ring throws SLUICE_KEY_UNKNOWN; a value that does not
 * open (another key under the same id, a changed byte) throws SLUICE_SECRET_UNREADABLE.
 */
export function openSecret(keyring: Keyring, stored: string): string {
  if (!isSealed(stored)) return stored;
  const sep = stored.indexOf(':', PREFIX.length);
  const id = stored.slice(PREFIX.length, sep);
  const key = keyring.keys.find((k) => k.id === id);
  if (sep < 0 || key === undefined)
    throw new SecretBoxError(
      'SLUICE_KEY_UNKNOWN',
      `a secret is sealed with key ${JSON.stringify(id)}, which SLUICE_ENCRYPTION_KEY does not hold`,
    );
  const raw = Buffer.from(stored.slice(sep + 1), 'base64url');
  try {
    const decipher = createDecipheriv('aes-256-gcm', key.bytes, raw.subarray(0, IV_BYTES));
    decipher.setAAD(Buffer.from(stored.slice(0, sep)));
    decipher.setAuthTag(raw.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
    return Buffer.concat([decipher.update(raw.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]).toString(
      'utf8',
    );
  } catch {
    throw new SecretBoxError(
      'SLUICE_SECRET_UNREADABLE',
      `a secret sealed with key ${JSON.stringify(id)} does not open with it (another key under that id, or altered)`,
    );
  }
}
