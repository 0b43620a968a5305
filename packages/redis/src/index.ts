export { Keys } from './keys.ts';
export { RedisSchedule, type RedisScheduleOptions, type TickFn } from './redis-schedule.ts';
export { type ClaimedTick, defineScripts, Scripts } from './scripts.ts';
