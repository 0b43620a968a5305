/**
 * What follows a completion in the distributed shape: the policy every shape shares
 * (`completionFollowUps`, packages/engine), acting on the shared state — a wake goes to the
 * Redis schedule, a freed slot wakes at the window's room (`wakeInRedis`), and a changed
 * destination is announced on the change feed to every process.
 */

import { type CompletionFollowUps, completionFollowUps } from '@sluice/engine';
import { publishChange } from '@sluice/redis';
import type { Logger } from 'pino';
import type { RedisState } from './redis-state.ts';
import { wakeInRedis } from './wake.ts';

export function redisFollowUps(
  redisState: Pick<RedisState, 'redis' | 'keys' | 'schedule' | 'destinations' | 'pacing'>,
  logger: Logger,
  clock: () => number,
): CompletionFollowUps {
  const { redis, keys, schedule, destinations } = redisState;
  return completionFollowUps({
    logger,
    clock,
    wake: (id, at) => schedule.wake(id, at),
    wakeAtRoom: ({ id }) => wakeInRedis(redisState, id, clock()),
    refresh: (id) => destinations.refresh(id),
    announce: (id) => publishChange(redis, keys, id),
  });
}
