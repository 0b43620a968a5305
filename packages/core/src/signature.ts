/**
 * Standard Webhooks signatures (https://www.standardwebhooks.com):
 * `webhook-signature: v1,<base64 HMAC-SHA256(key, "<id>.<timestamp>.<body>")>`, one per
 * active secret, space-separated; secrets are `whsec_<base64 key>`.
 */

import { createHmac, createSecretKey, type KeyObject, randomBytes } from 'node:crypto';

const SECRET_PREFIX = 'whsec_';

export function generateSecret(): string {
  return SECRET_PREFIX + randomBytes(32).toString('base64');
}

/** The key bytes of a `whsec_` secret, or undefined when it is not one. */
export function secretKey(secret: string): Buffer | undefined {
  if (!secret.startsWith(SECRET_PREFIX)) return undefined;
  const b64 = secret.slice(SECRET_PREFIX.length);
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(b64)) return undefined;
  const key = Buffer.from(b64, 'base64');
  return key.length >= 16 && key.length <= 128 ? key : undefined;
}

export function isValidSecret(secret: string): boolean {
  return secretKey(secret) !== undefined;
}

export interface SignInput {
  /** The message id (`webhook-id`). */
  id: string;
  /** Unix seconds (`webhook-timestamp`). */
  timestamp: number;
  body: string;
}

/**
 * Secrets as KeyObjects, kept: an HMAC over a KeyObject costs a fifth of one over raw key
 * bytes (Node re-imports the bytes on every `createHmac`), and every request is signed.
 * Bounded; the oldest entries go first.
 */
const KEYS_KEPT = 10_000;
const keyObjects = new Map<string, KeyObject>();

function keyObjectOf(secret: string): KeyObject {
  let key = keyObjects.get(secret);
  if (key === undefined) {
    const bytes = secretKey(secret);
    if (bytes === undefined) throw new TypeError('not a whsec_ secret');
    key = createSecretKey(bytes);
    if (keyObjects.size >= KEYS_KEPT) keyObjects.delete(keyObjects.keys().next().value as string);
    keyObjects.set(secret, key);
  }
  return key;
}

export function signOne(secret: string, { id, timestamp, body }: SignInput): string {
  const mac = createHmac('sha256', keyObjectOf(secret)).update(`${id}.${timestamp}.${body}`).digest('base64');
  return `v1,${mac}`;
}

/** The `webhook-signature` header value: one signature per secret. */
export function signatureHeader(secrets: readonly string[], input: SignInput): string {
  return secrets.map((secret) => signOne(secret, input)).join(' ');
}
