/**
 * What the targets that use Redis need of it besides their own work: cleaning up a run's
 * keys without touching anyone else's (every such target keeps its keys under prefixes
 * that carry the run id and deletes them at stop), and redis-server's pid for sampling.
 */

import type { Redis } from 'ioredis';

/** SCAN + UNLINK every key matching `pattern`; answers how many were deleted. */
export async function deleteKeys(redis: Redis, pattern: string): Promise<number> {
  let cursor = '0';
  let n = 0;
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
    cursor = next;
    if (keys.length > 0) n += await redis.unlink(...keys);
  } while (cursor !== '0');
  return n;
}

/** The pid of the redis-server behind a connection (INFO server), for /proc sampling. */
export async function redisServerPid(redis: Redis): Promise<number> {
  return Number(/process_id:(\d+)/.exec(await redis.info('server'))?.[1]);
}
