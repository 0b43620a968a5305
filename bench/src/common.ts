/**
 * Small helpers shared by every part of the bench: one clock, a seeded PRNG, percentiles,
 * and line-oriented reading of child process output.
 *
 * Every time in the bench is milliseconds since the epoch with sub-millisecond precision,
 * `performance.timeOrigin + performance.now()`: the receiver's arrival times, the drivers'
 * creation times and the samplers' times are on that one clock, across processes.
 */

import { createServer } from 'node:net';
import type { Readable } from 'node:stream';

export function now(): number {
  return performance.timeOrigin + performance.now();
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** mulberry32: a tiny seeded PRNG, so failure injection and limit draws repeat exactly. */
export function seededRandom(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Nearest-rank percentile of an ascending array; null when empty. */
export function percentile(sorted: readonly number[], p: number): number | null {
  if (sorted.length === 0) return null;
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[i] ?? null;
}

export function median(values: readonly number[]): number | null {
  if (values.length === 0) return null;
  const s = [...values].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 === 1 ? (s[mid] as number) : ((s[mid - 1] as number) + (s[mid] as number)) / 2;
}

/** Rounds to `digits` decimals; keeps null. */
export function round(x: number | null | undefined, digits = 2): number | null {
  if (x === null || x === undefined || !Number.isFinite(x)) return null;
  const f = 10 ** digits;
  return Math.round(x * f) / f;
}

/** Calls `onLine` for every complete line a stream produces. */
function eachLine(stream: Readable, onLine: (line: string) => void): void {
  let buffer = '';
  stream.setEncoding('utf8');
  stream.on('data', (chunk: string) => {
    buffer += chunk;
    for (let i = buffer.indexOf('\n'); i >= 0; i = buffer.indexOf('\n')) {
      onLine(buffer.slice(0, i));
      buffer = buffer.slice(i + 1);
    }
  });
}

/** Resolves with the first line starting with `prefix` (the rest of it), or rejects. */
export function waitForLine(stream: Readable, prefix: string, timeoutMs: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`no "${prefix}" line within ${timeoutMs} ms`)),
      timeoutMs,
    );
    eachLine(stream, (line) => {
      if (!line.startsWith(prefix)) return;
      clearTimeout(timer);
      resolve(line.slice(prefix.length).trim());
    });
  });
}

/** A short run id, unique enough for key prefixes and directory names. */
export function newRunId(): string {
  return `b${Date.now().toString(36)}${Math.random().toString(36).slice(2, 6)}`;
}

export function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** A TCP port free on 127.0.0.1 just now. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}
