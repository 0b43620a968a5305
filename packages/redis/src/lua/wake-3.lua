--[[
  Schedules a destination's tick no later than `at`: sooner only (includes/wake.lua).

  Input:
    KEYS[1] schedule   ZSET destination -> due time (ms)
    KEYS[2] leases     ZSET destination -> lease expiry (ms)
    KEYS[3] woken      ZSET destination -> earliest wake during its tick (ms)

    ARGV[1] destination id
    ARGV[2] at (ms)

  Output:
    1 when the tick is now at the head of the schedule sooner than before (kick the
    limiters so they do not sleep past it), else 0.
]]
-- @include wake
return wake(KEYS[1], KEYS[2], KEYS[3], ARGV[1], ARGV[2])
