export { type ChangeFeed, followChanges, publishChange } from './change-feed.ts';
export {
  type BullConnection,
  bullConnection,
  closeBullConnection,
  connectRedis,
  deleteMatching,
  mastersOf,
  type RedisClient,
  type RedisTarget,
} from './connection.ts';
export { BullPublisher, DELIVERY_QUEUE, type DeliveryQueueOptions } from './delivery-queue.ts';
export { type DeliveryWorkerOptions, type DeliveryWorkers, startDeliveryWorker } from './delivery-worker.ts';
export { Keys } from './keys.ts';
export { RedisTokenCache } from './oauth-token-cache.ts';
export { RedisRateCounter } from './rate-counter.ts';
export { RedisPacing, type RedisPacingOptions } from './redis-pacing.ts';
export { RedisTickLoop, type RedisTickLoopOptions, type TickFn } from './redis-tick-loop.ts';
export { ScheduleClient } from './schedule-client.ts';
export { type ClaimedTick, defineScripts, Scripts } from './scripts.ts';
export { markStateBuilt, markStateRebuilding, stateBuilt } from './state-built.ts';
export { TenantHoldsReader, writeTenantHolds } from './tenant-holds.ts';
