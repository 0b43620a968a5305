export { type ChangeFeed, followChanges, publishChange } from './change-feed.ts';
export {
  BullPublisher,
  bullConnection,
  DELIVERY_QUEUE,
  type DeliveryQueueOptions,
  type DeliveryWorkerOptions,
  startDeliveryWorker,
} from './delivery-queue.ts';
export { Keys } from './keys.ts';
export { RedisRateCounter } from './rate-counter.ts';
export { RedisPacing, type RedisPacingOptions } from './redis-pacing.ts';
export { RedisTickLoop, type RedisTickLoopOptions, type TickFn } from './redis-tick-loop.ts';
export { ScheduleClient } from './schedule-client.ts';
export { type ClaimedTick, defineScripts, Scripts } from './scripts.ts';
