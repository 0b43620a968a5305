/**
 * Ids carry a prefix that says what they are (Svix's convention) and a ULID, so ids sort
 * by creation time (cursor pagination) and never collide across processes.
 */

import { monotonicFactory } from 'ulid';

export type IdPrefix = 'ten' | 'dst' | 'evt' | 'dlv' | 'att';

const nextUlid = monotonicFactory();

export function newId(prefix: IdPrefix): string {
  return `${prefix}_${nextUlid().toLowerCase()}`;
}

export function hasPrefix(id: string, prefix: IdPrefix): boolean {
  return id.startsWith(`${prefix}_`) && id.length === prefix.length + 27;
}
