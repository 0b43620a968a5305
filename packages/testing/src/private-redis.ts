/**
 * A Redis server of a test's or a benchmark's own, never the machine's shared one: one
 * `redis-server` on a free loopback port keeping nothing on disk, which its user may kill (a
 * crash) and start again on the same port, empty, as a Redis that kept nothing comes back.
 * The Redis-loss and outage tests and the bench sessions use it; a Redis Cluster of such
 * servers is private-cluster.ts'.
 *
 * Whatever is still running when the process exits is killed then, so a crashed test leaves
 * no server behind.
 */

import type { ChildProcess } from 'node:child_process';
import { listenOnce } from './ports.ts';
import { isRunning, launchRedis, RedisExitedError, signalAndWait, stopProcess } from './redis-process.ts';
import { INSTALL_REDIS, requireCommands } from './required.ts';

export interface PrivateRedis {
  host: '127.0.0.1';
  port: number;
  /** `redis://127.0.0.1:<port>/0`. */
  url: string;
  /** SIGKILL: a crash, every connection reset. Resolves once the process has exited. */
  kill(): Promise<void>;
  /** Starts the server again on the same port (empty) and waits until it answers PING. */
  start(): Promise<void>;
  /** SIGTERM, then SIGKILL after 5 s; the server is not started again. */
  stop(): Promise<void>;
}

/**
 * Starts `redis-server --port <port> --bind 127.0.0.1 --save "" --appendonly no` and waits
 * until it answers PING; `port` defaults to a free one (another, should the chosen one be
 * taken before the server binds it). Throws a ServerMissingError where `redis-server` is not
 * installed; rejects when it cannot be started.
 */
export async function startPrivateRedis(options: { port?: number } = {}): Promise<PrivateRedis> {
  requireCommands('a private Redis server', ['redis-server'], INSTALL_REDIS);
  let child: ChildProcess | undefined;
  let port = options.port ?? 0;
  for (let attempt = 1; child === undefined; attempt++) {
    if (options.port === undefined) {
      const free = await listenOnce(0);
      if (free === null) throw new Error('no free loopback port');
      port = free;
    }
    try {
      child = await launchRedis(port);
    } catch (err) {
      if (!(err instanceof RedisExitedError) || options.port !== undefined || attempt === 3) throw err;
    }
  }
  let current: ChildProcess = child;
  const onExit = (): void => {
    if (isRunning(current)) current.kill('SIGKILL');
  };
  process.on('exit', onExit);
  return {
    host: '127.0.0.1',
    port,
    url: `redis://127.0.0.1:${port}/0`,
    kill: () => signalAndWait(current, 'SIGKILL'),
    async start() {
      if (isRunning(current)) throw new Error(`redis-server on ${port} is running: kill it first`);
      current = await launchRedis(port);
    },
    async stop() {
      process.off('exit', onExit);
      await stopProcess(current);
    },
  };
}
