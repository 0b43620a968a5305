export {
  BullPublisher,
  DELIVERY_QUEUE,
  type DeliveryQueueOptions,
  type DeliveryWorkerOptions,
  startDeliveryWorker,
} from './delivery-queue.ts';
export { Keys } from './keys.ts';
export { RedisPacing, type RedisPacingOptions } from './redis-pacing.ts';
export { RedisSchedule, type RedisScheduleOptions, type TickFn } from './redis-schedule.ts';
export { type ClaimedTick, defineScripts, Scripts } from './scripts.ts';
