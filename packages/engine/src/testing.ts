/** What other packages' tests use of the engine's internals (`@sluice/engine/testing`). */

/** The single box's pace state: the reference RedisPacing's tests compare against. */
export { Pacer } from './pace/memory-pacing.ts';
