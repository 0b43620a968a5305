export { RedisDispatcher, type RedisDispatcherDeps } from './dispatcher.ts';
export { sharedFollowUps } from './follow-ups.ts';
export { openSharedState, type SharedState, type SharedStateOptions } from './shared-state.ts';
export { DistributedSweeper, type DistributedSweeperDeps } from './sweeper.ts';
export { createTickLoop, type TickLoopOptions } from './tick-loop.ts';
export { wakeInRedis } from './wake.ts';
