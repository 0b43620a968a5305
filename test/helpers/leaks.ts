/**
 * Fails the test that leaks a running loop or an open connection (CONTRIBUTING.md "Tests"): after a
 * test's cleanup, nothing may keep the event loop alive beyond what was alive when the
 * test file started (the runner's own pipes). Unref'd timers do not count.
 */

import { sleep } from './receiver.ts';

function tally(kinds: readonly string[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const kind of kinds) counts.set(kind, (counts.get(kind) ?? 0) + 1);
  return counts;
}

// Node opens the handle of process.stdin, stdout or stderr on first use, and that use can come
// from a dependency: debug (ioredis, fastify's swagger) loads supports-color, whose ESM import
// of node:process reads every property of process, stdin's included. Open all three now, so
// that no later first use is taken for a leak.
void process.stdin.fd;
void process.stdout.fd;
void process.stderr.fd;
const baseline = tally(process.getActiveResourcesInfo());

function leaked(): string[] {
  const out: string[] = [];
  for (const [kind, count] of tally(process.getActiveResourcesInfo())) {
    const extra = count - (baseline.get(kind) ?? 0);
    if (extra > 0) out.push(`${extra} × ${kind}`);
  }
  return out;
}

/** Waits up to `graceMs` for closing handles to go, then throws naming what is left. */
export async function assertNoLeaks(graceMs = 3_000): Promise<void> {
  const deadline = Date.now() + graceMs;
  for (;;) {
    const left = leaked();
    if (left.length === 0) return;
    if (Date.now() > deadline) {
      throw new Error(`resources still keep the event loop alive after cleanup: ${left.join(', ')}`);
    }
    await sleep(50);
  }
}
