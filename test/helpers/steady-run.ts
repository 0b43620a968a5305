/**
 * The measured side of the isolation tests (isolation.test.ts, busy-tenant.test.ts): a steady
 * trickle of single events to some destinations, alone and then beside trouble, and the p99
 * of their latencies (post to first 2xx at the receiver).
 */

import { now, type Receiver, sleep } from './receiver.ts';
import { postEvent, type TestBox } from './sluice.ts';

/** Each destination's events a second, and for how long. */
export const RATE = 5;
export const SECONDS = 6;

export function p99(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.max(0, Math.ceil(sorted.length * 0.99) - 1)] as number;
}

/**
 * Posts RATE events a second of `type` to each destination for SECONDS, waits for every one
 * to arrive, and returns their latencies (post to first 2xx at the receiver, ms).
 */
export async function steadyRun(
  box: TestBox,
  rcv: Receiver,
  key: string,
  destinations: { id: string; path: string }[],
  type: string,
  phase: string,
): Promise<number[]> {
  const sentAt = new Map<string, number>();
  const start = now();
  for (let round = 0; round < RATE * SECONDS; round++) {
    await sleep(Math.max(0, start + (round * 1_000) / RATE - now()));
    await Promise.all(
      destinations.map(async (d, i) => {
        const at = now();
        const accepted = await postEvent(box, key, {
          type,
          destinationId: d.id,
          payload: { phase, i, round },
        });
        sentAt.set(accepted.id, at);
      }),
    );
  }
  const arrived = () => {
    const out = new Map<string, number>();
    for (const d of destinations)
      for (const a of rcv.arrivals(d.path)) {
        const id = String(a.headers['webhook-id']);
        if (sentAt.has(id) && a.status === 200 && !out.has(id)) out.set(id, a.at);
      }
    return out;
  };
  await rcv.waitFor(() => arrived().size === sentAt.size, 30_000, `every ${type} event (${phase})`);
  return [...arrived()].map(([id, at]) => at - (sentAt.get(id) as number));
}
