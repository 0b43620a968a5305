export { type ChangeFeed, followChanges, publishChange } from './change-feed.ts';
export {
  BullPublisher,
  DELIVERY_QUEUE,
  type DeliveryQueueOptions,
  type DeliveryWorkerOptions,
  startDeliveryWorker,
} from './delivery-queue.ts';
export { RedisDispatcher, type RedisDispatcherDeps } from './dispatcher.ts';
export { Keys } from './keys.ts';
export { RedisRateCounter } from './rate-counter.ts';
export { RedisPacing, type RedisPacingOptions } from './redis-pacing.ts';
export { RedisSchedule, type RedisScheduleOptions, type TickFn } from './redis-schedule.ts';
export { ScheduleClient } from './schedule-client.ts';
export { type ClaimedTick, defineScripts, Scripts } from './scripts.ts';
export {
  bullConnection,
  openSharedState,
  type SharedState,
  type SharedStateOptions,
} from './shared-state.ts';
export { type TickingOptions, tickingSchedule } from './ticking.ts';
