/**
 * The usual Node approach, as it is commonly written:
 * ONE BullMQ queue for every delivery and one Worker (concurrency 100). Before POSTing, the
 * processor consumes a point of a rate-limiter-flexible `RateLimiterRedis` keyed by
 * destination (points = limit, duration = 1 s); when refused it moves the job to delayed by
 * `msBeforeNext` with the worker's lock token and throws `DelayedError` (BullMQ's documented
 * way: neither completed nor failed). A failed POST throws: BullMQ retries it (attempts and
 * exponential backoff as the workload says), through the limiter again. Retry-After is not
 * honoured (the usual code does not). A limit change replaces the destination's limiter.
 *
 * It runs in the driver's process (its own process, apart from the runner and the receiver),
 * against the local Redis, under keys `bench-<runId>:*` and `rlf-<runId>:*`, deleted at stop.
 */

import { DelayedError, type Job, Queue, Worker } from 'bullmq';
import { Redis } from 'ioredis';
import { RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';
import { Agent, request } from 'undici';
import { destinationUrl, type PlannedEvent, payloadOf } from '../workload.ts';
import { deleteKeys, redisServerPid } from './redis-keys.ts';
import type { CreateTarget, Target, TargetSetup } from './target.ts';

const CONCURRENCY = 100;
const QUEUE = 'deliveries';

interface JobData {
  dest: string;
  url: string;
  body: string;
}

export const createTarget: CreateTarget = async ({
  workload,
  receiverUrl,
  runId,
  options,
}: TargetSetup): Promise<Target> => {
  const prefix = `bench-${runId}`;
  const rlfPrefix = `rlf-${runId}`;
  const connection = { ...options.redis, maxRetriesPerRequest: null };
  const rlRedis = new Redis({ ...options.redis });
  const admin = new Redis({ ...options.redis });
  const redisPid = await redisServerPid(admin);
  const agent = new Agent({ connections: 512, keepAliveTimeout: 30_000 });
  const urls = new Map(workload.destinations.map((d) => [d.id, destinationUrl(receiverUrl, d)]));
  const timeouts = new Map(workload.destinations.map((d) => [d.id, d.timeoutMs ?? 10_000]));
  const stats = {
    attempts: 0,
    non2xx: 0,
    networkErrors: 0,
    rateLimitedDelays: 0,
    completed: 0,
    failedFinal: 0,
  };

  const limiterOf = (limit: number): RateLimiterRedis =>
    new RateLimiterRedis({ storeClient: rlRedis, keyPrefix: rlfPrefix, points: limit, duration: 1 });
  const limiters = new Map(workload.destinations.map((d) => [d.id, limiterOf(d.limit)]));

  const queue = new Queue<JobData>(QUEUE, {
    connection,
    prefix,
    defaultJobOptions: {
      attempts: workload.retry.attempts,
      backoff: { type: 'exponential', delay: workload.retry.initialDelayMs },
      removeOnComplete: true,
      removeOnFail: 1000,
    },
  });

  const worker = new Worker<JobData>(
    QUEUE,
    async (job: Job<JobData>, token?: string) => {
      const { dest, url, body } = job.data;
      try {
        await (limiters.get(dest) as RateLimiterRedis).consume(dest, 1);
      } catch (refused) {
        if (!(refused instanceof RateLimiterRes)) throw refused; // a Redis error, not a refusal
        stats.rateLimitedDelays++;
        await job.moveToDelayed(Date.now() + refused.msBeforeNext, token);
        throw new DelayedError();
      }
      stats.attempts++;
      let status: number;
      try {
        const res = await request(url, {
          method: 'POST',
          dispatcher: agent,
          headers: { 'content-type': 'application/json' },
          body,
          headersTimeout: timeouts.get(dest),
          bodyTimeout: timeouts.get(dest),
        });
        await res.body.dump();
        status = res.statusCode;
      } catch (err) {
        stats.networkErrors++;
        throw err;
      }
      if (status < 200 || status >= 300) {
        stats.non2xx++;
        throw new Error(`HTTP ${status}`);
      }
    },
    { connection, prefix, concurrency: CONCURRENCY },
  );
  worker.on('completed', () => stats.completed++);
  worker.on('failed', (job) => {
    if (job && job.attemptsMade >= (job.opts.attempts ?? 1)) stats.failedFinal++;
  });
  worker.on('error', (err) => process.stderr.write(`[bullmq-rlf] worker error: ${err.message}\n`));

  return {
    pids: () => ({ 'bullmq-rlf': process.pid, 'redis-server': redisPid }),

    async setup() {
      await worker.waitUntilReady();
      await queue.waitUntilReady();
      return { concurrency: CONCURRENCY, prefix };
    },

    async submit(events: readonly PlannedEvent[], createdAt: number) {
      await queue.addBulk(
        events.map((e) => {
          const d = workload.destinations[e.dest] as (typeof workload.destinations)[number];
          const body = JSON.stringify(payloadOf(e.id, createdAt, workload.payloadBytes));
          return { name: 'deliver', data: { dest: d.id, url: urls.get(d.id) as string, body } };
        }),
      );
      return events.length;
    },

    async setLimit(dest, limit) {
      limiters.set(dest, limiterOf(limit));
    },

    async snapshot() {
      return null;
    },

    async stop() {
      // Requests still in flight (a slow receiver's) are aborted rather than awaited: the
      // worker stops taking jobs, its active ones fail at once and it closes.
      const closing = worker.close();
      await agent.destroy();
      await closing;
      await queue.close();
      rlRedis.disconnect();
      const deleted = (await deleteKeys(admin, `${prefix}:*`)) + (await deleteKeys(admin, `${rlfPrefix}:*`));
      const leftover = await deleteKeys(admin, `*${runId}*`);
      admin.disconnect();
      return { ...stats, concurrency: CONCURRENCY, redisKeysDeleted: deleted, redisLeftoverKeys: leftover };
    },
  };
};
