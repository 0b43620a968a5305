/**
 * A Redis server of one test's own (never the machine's shared one): `redis-server` on a
 * free loopback port, keeping nothing on disk, which the test may kill and start again on
 * the same port (empty, as a Redis that kept nothing comes back). `hasRedisServer` says
 * whether the binary is installed.
 */

import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { Redis } from 'ioredis';
import { freePort, waitUntil } from './sluice.ts';

export const hasRedisServer = spawnSync('redis-server', ['--version']).status === 0;

export interface PrivateRedis {
  /** `redis://127.0.0.1:<port>/0`. */
  url: string;
  port: number;
  /** SIGKILL: a crash, every connection reset. */
  kill(): Promise<void>;
  /** Starts the server again on the same port (empty) and waits until it answers. */
  start(): Promise<void>;
}

/** Starts a server on `port` (default: a free one) and waits until it answers PING. */
export async function startPrivateRedis(port?: number): Promise<PrivateRedis> {
  const own = port ?? (await freePort());
  const url = `redis://127.0.0.1:${own}/0`;
  let child: ChildProcess | undefined;
  const start = async () => {
    child = spawn(
      'redis-server',
      ['--port', String(own), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
      { stdio: 'ignore' },
    );
    const probe = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
    // A refused connect while the server starts: `connect()` rejects, which is what is awaited.
    probe.on('error', () => {});
    try {
      await waitUntil(
        async () => {
          try {
            await probe.connect();
            return (await probe.ping()) === 'PONG';
          } catch {
            return false;
          }
        },
        10_000,
        `redis-server on ${own}`,
        100,
      );
    } finally {
      probe.disconnect();
    }
  };
  await start();
  return {
    url,
    port: own,
    start,
    kill: () =>
      new Promise<void>((resolve) => {
        const running = child;
        if (running === undefined || running.exitCode !== null || running.signalCode !== null)
          return resolve();
        running.once('exit', () => resolve());
        running.kill('SIGKILL');
      }),
  };
}
