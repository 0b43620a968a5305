/**
 * One `redis-server` process on a loopback port, for tests and benchmarks: started with
 * nothing kept on disk (`--save "" --appendonly no`, the shared server's settings), ready once
 * it answers PING, stopped with SIGTERM and then SIGKILL. The single private server
 * (private-redis.ts) and every node of a private cluster (private-cluster.ts) are one of these.
 */

import { type ChildProcess, spawn } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';

export const isRunning = (child: ChildProcess): boolean =>
  child.exitCode === null && child.signalCode === null;

/** Sends `signal` and resolves once the process has exited (at once if it already had). */
export function signalAndWait(child: ChildProcess, signal: NodeJS.Signals): Promise<void> {
  if (!isRunning(child)) return Promise.resolve();
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill(signal);
  return exited;
}

/** SIGTERM (redis-server exits at once, keeping nothing), SIGKILL if it has not within 5 s. */
export async function stopProcess(child: ChildProcess): Promise<void> {
  if (!isRunning(child)) return;
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<boolean>((resolve) => {
    timer = setTimeout(() => resolve(true), 5_000);
  });
  const stuck = await Promise.race([signalAndWait(child, 'SIGTERM').then(() => false), late]);
  clearTimeout(timer);
  if (stuck) await signalAndWait(child, 'SIGKILL');
}

/** A client that never retries nor queues: a probe sees the server as it is now. */
function probeClient(port: number): Redis {
  const client = new Redis({
    host: '127.0.0.1',
    port,
    lazyConnect: true,
    maxRetriesPerRequest: 0,
    enableOfflineQueue: false,
    retryStrategy: () => null,
    connectTimeout: 2_000,
  });
  // A refused or reset connection rejects the command awaited; the event adds nothing.
  client.on('error', () => {});
  return client;
}

/** Runs `fn` on a fresh connection to the server on `port`, then closes it. */
export async function onNode<T>(port: number, fn: (client: Redis) => Promise<T>): Promise<T> {
  const client = probeClient(port);
  try {
    await client.connect();
    return await fn(client);
  } finally {
    client.disconnect();
  }
}

/** Thrown when redis-server exited before answering, e.g. because its port was taken. */
export class RedisExitedError extends Error {
  override name = 'RedisExitedError';
}

/**
 * Starts `redis-server --port <port> --bind 127.0.0.1 --save "" --appendonly no <extra>` and
 * resolves once it answers PING. Rejects with RedisExitedError (carrying the end of its log)
 * if the process exits first, and with an Error after 10 s of silence (the process killed).
 */
export async function launchRedis(port: number, extra: string[] = []): Promise<ChildProcess> {
  const args = ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', ...extra];
  const child = spawn('redis-server', args, { stdio: ['ignore', 'pipe', 'pipe'] });
  // The last lines of its log, for the error that says why it did not start.
  let log = '';
  const keep = (chunk: Buffer) => {
    log = (log + chunk.toString()).slice(-2_000);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  let exit: ((reason: Error) => void) | undefined;
  const gone = new Promise<never>((_, reject) => {
    exit = reject;
  });
  gone.catch(() => {});
  const onExit = (code: number | null, signal: NodeJS.Signals | null) =>
    exit?.(
      new RedisExitedError(`redis-server on ${port} exited (${signal ?? code}) before answering: ${log}`),
    );
  const onError = (err: Error) =>
    exit?.(new RedisExitedError(`redis-server could not start: ${err.message}`));
  child.once('exit', onExit);
  child.once('error', onError);
  const answered = (async () => {
    const deadline = Date.now() + 10_000;
    while (Date.now() < deadline) {
      if (!isRunning(child)) return false;
      const up = await onNode(port, async (c) => (await c.ping()) === 'PONG').catch(() => false);
      if (up) return true;
      await sleep(50);
    }
    return false;
  })();
  try {
    const up = await Promise.race([answered, gone]);
    if (!up) throw new Error(`redis-server on ${port} did not answer PING within 10 s: ${log}`);
    // A server a test or the bench holds does not keep its process alive (the tests' leak
    // check counts what does); it is stopped by its owner, or killed when the process exits.
    child.unref();
    (child.stdout as { unref?: () => void } | null)?.unref?.();
    (child.stderr as { unref?: () => void } | null)?.unref?.();
    return child;
  } catch (err) {
    await signalAndWait(child, 'SIGKILL');
    throw err;
  } finally {
    child.off('exit', onExit);
    child.off('error', onError);
  }
}
