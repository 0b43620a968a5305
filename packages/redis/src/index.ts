export { Keys } from './keys.ts';
export { RedisPacing, type RedisPacingOptions } from './redis-pacing.ts';
export { RedisSchedule, type RedisScheduleOptions, type TickFn } from './redis-schedule.ts';
export { type ClaimedTick, defineScripts, Scripts } from './scripts.ts';
