export { RedisDispatcher, type RedisDispatcherDeps } from './dispatcher.ts';
export { redisFollowUps } from './follow-ups.ts';
export { openRedisState, type RedisState, type RedisStateOptions } from './redis-state.ts';
export { DistributedSweeper, type DistributedSweeperDeps } from './sweeper.ts';
export { createTickLoop, type TickLoopOptions } from './tick-loop.ts';
export { wakeInRedis } from './wake.ts';
