/**
 * The schedule (docs/design.md "Words": Schedule, Wake): one entry per destination that has
 * work, scored by the due time of its next tick. Two implementations: the single box's
 * in-process `MemorySchedule`, and the distributed shape's Redis schedule, which any process
 * wakes through `ScheduleClient` (packages/redis) and the rate limiters run (`RedisTickLoop`).
 * Synchronous in the one, a round trip in the other: callers await what they are given.
 */
export interface Schedule {
  /** Schedules the destination's tick no later than `at`; only ever moves a tick sooner. */
  wake(destinationId: string, at: number): void | Promise<void>;
  /** Whether the destination has an entry, or its tick is running. */
  isScheduled(destinationId: string): boolean | Promise<boolean>;
}
