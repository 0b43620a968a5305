/**
 * The bench session's own redis-server: `redis-server --port <free> --bind 127.0.0.1
 * --save "" --appendonly no` (the shared server's persistence settings: none), started by
 * main.ts for a session whose targets use Redis, unless REDIS_HOST or REDIS_PORT name a
 * server or `--quick` runs (the tests keep the configured one). On it, redis-server's CPU and
 * `INFO commandstats` are the bench's alone: the shared server on 6379 also serves every other
 * session on the machine. Stopped with SIGTERM at the end of the session, SIGKILL if the
 * bench itself exits first.
 */

import { type ChildProcess, spawn } from 'node:child_process';
import { Redis } from 'ioredis';
import { freePort, sleep } from './common.ts';

export interface PrivateRedis {
  host: string;
  port: number;
  stop(): Promise<void>;
}

/** Starts it and waits for PING; null when `redis-server` cannot be started. */
export async function startPrivateRedis(): Promise<PrivateRedis | null> {
  const port = await freePort();
  let child: ChildProcess;
  try {
    child = spawn(
      'redis-server',
      ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
      { stdio: 'ignore' },
    );
  } catch {
    return null;
  }
  const failed = new Promise<null>((resolve) => {
    child.once('error', () => resolve(null));
    child.once('exit', () => resolve(null));
  });
  const kill = (): void => {
    if (child.exitCode === null) child.kill('SIGKILL');
  };
  process.once('exit', kill);
  const ready = (async () => {
    for (let i = 0; i < 100; i++) {
      const client = new Redis({ host: '127.0.0.1', port, lazyConnect: true, retryStrategy: () => null });
      client.on('error', () => {});
      try {
        await client.connect();
        if ((await client.ping()) === 'PONG') return true;
      } catch {
        // not listening yet
      } finally {
        client.disconnect();
      }
      await sleep(50);
    }
    return false;
  })();
  const up = await Promise.race([ready, failed]);
  if (!up) {
    kill();
    return null;
  }
  return {
    host: '127.0.0.1',
    port,
    async stop() {
      process.removeListener('exit', kill);
      if (child.exitCode !== null) return;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await Promise.race([exited, sleep(5_000)]);
      kill();
    },
  };
}
