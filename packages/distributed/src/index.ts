export { RedisDispatcher, type RedisDispatcherDeps } from './dispatcher.ts';
export { openSharedState, type SharedState, type SharedStateOptions } from './shared-state.ts';
export { type TickingOptions, tickingSchedule } from './ticking.ts';
export { wakeForWork } from './wake.ts';
