/**
 * The ceiling: undici POSTs straight to the receiver with no limiter, from the driver's
 * process — as fast as one Node process can send. It bounds what any limiter could reach
 * on this machine. `CONCURRENCY` requests at once over one keep-alive pool; a failed
 * attempt is tried again after its Retry-After or an exponential backoff, like the others.
 */

import { Agent, request } from 'undici';
import { destinationUrl, type PlannedEvent, payloadOf } from '../workload.ts';
import type { CreateTarget, Target, TargetSetup } from './target.ts';

const CONCURRENCY = Number(process.env.BENCH_CEILING_CONCURRENCY ?? 256);

interface Job {
  url: string;
  timeoutMs: number;
  body: string;
  attempt: number;
}

export const createTarget: CreateTarget = async ({ workload, receiverUrl }: TargetSetup): Promise<Target> => {
  const agent = new Agent({ connections: CONCURRENCY, keepAliveTimeout: 30_000 });
  const urls = workload.destinations.map((d) => destinationUrl(receiverUrl, d));
  const timeouts = workload.destinations.map((d) => d.timeoutMs ?? 10_000);
  const queue: Job[] = [];
  let head = 0;
  let active = 0;
  const stats = { attempts: 0, non2xx: 0, networkErrors: 0, dead: 0, retries: 0 };
  const timers = new Set<NodeJS.Timeout>();

  let stopped = false;
  const retryOrDrop = (job: Job, retryAfter: string | undefined): void => {
    if (stopped) return;
    if (job.attempt >= workload.retry.attempts) {
      stats.dead++;
      return;
    }
    const seconds = retryAfter === undefined ? Number.NaN : Number(retryAfter);
    const delay = Number.isFinite(seconds)
      ? seconds * 1_000
      : Math.min(workload.retry.maxDelayMs, workload.retry.initialDelayMs * 2 ** (job.attempt - 1));
    stats.retries++;
    const timer = setTimeout(() => {
      timers.delete(timer);
      queue.push({ ...job, attempt: job.attempt + 1 });
      pump();
    }, delay);
    timers.add(timer);
  };

  const send = async (job: Job): Promise<void> => {
    stats.attempts++;
    try {
      const res = await request(job.url, {
        method: 'POST',
        dispatcher: agent,
        headers: { 'content-type': 'application/json' },
        body: job.body,
        headersTimeout: job.timeoutMs,
        bodyTimeout: job.timeoutMs,
      });
      await res.body.dump();
      if (res.statusCode < 200 || res.statusCode >= 300) {
        stats.non2xx++;
        const ra = res.headers['retry-after'];
        retryOrDrop(job, Array.isArray(ra) ? ra[0] : ra);
      }
    } catch {
      stats.networkErrors++;
      retryOrDrop(job, undefined);
    }
  };

  function pump(): void {
    while (active < CONCURRENCY && head < queue.length) {
      const job = queue[head] as Job;
      queue[head++] = undefined as unknown as Job;
      if (head > 65_536 && head * 2 > queue.length) {
        queue.splice(0, head);
        head = 0;
      }
      active++;
      void send(job).finally(() => {
        active--;
        pump();
      });
    }
  }

  return {
    pids: () => ({ ceiling: process.pid }),
    async setup() {
      return {};
    },
    async submit(events: readonly PlannedEvent[], createdAt: number) {
      for (const e of events) {
        const body = JSON.stringify(payloadOf(e.id, createdAt, workload.payloadBytes));
        queue.push({ url: urls[e.dest] as string, timeoutMs: timeouts[e.dest] as number, body, attempt: 1 });
      }
      pump();
      return events.length;
    },
    async setLimit() {
      // no limiter: nothing to change
    },
    async snapshot() {
      return null;
    },
    async stop() {
      stopped = true;
      for (const timer of timers) clearTimeout(timer);
      await agent.destroy(); // what is still in flight is not waited for
      return { ...stats, concurrency: CONCURRENCY };
    },
  };
};
