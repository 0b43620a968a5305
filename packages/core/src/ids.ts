/**
 * Ids carry a prefix that says what they are (Svix's convention) and a ULID, so ids sort
 * by creation time (cursor pagination) and never collide across processes.
 */

import { randomFillSync } from 'node:crypto';
import { monotonicFactory } from 'ulid';

export type IdPrefix = 'ten' | 'key' | 'dst' | 'evt' | 'dlv' | 'att' | 'prt';

/**
 * ulid's own source asks the system for one byte per character (16 calls per id); this one
 * takes the same cryptographic bytes 4 KiB at a time. Returns a number in [0, 1).
 */
const pool = Buffer.alloc(4_096);
let next = pool.length;
function randomByte(): number {
  if (next === pool.length) {
    randomFillSync(pool);
    next = 0;
  }
  return (pool[next++] as number) / 256;
}

const nextUlid = monotonicFactory(randomByte);

export function newId(prefix: IdPrefix): string {
  return `${prefix}_${nextUlid().toLowerCase()}`;
}

export function hasPrefix(id: string, prefix: IdPrefix): boolean {
  return id.startsWith(`${prefix}_`) && id.length === prefix.length + 27;
}
