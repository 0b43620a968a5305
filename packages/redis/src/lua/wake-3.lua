--[[
  Schedules a destination's tick no later than `at` (DESIGN flow 1): sooner only, never
  later (ZADD LT). If its tick is running (leased), the wake is remembered in `woken` and
  `settle` honours it, so a wake during a tick that is shutting down is never lost.

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
if redis.call('ZSCORE', KEYS[2], ARGV[1]) then
  redis.call('ZADD', KEYS[3], 'LT', ARGV[2], ARGV[1])
  return 0
end
local changed = redis.call('ZADD', KEYS[1], 'LT', 'CH', ARGV[2], ARGV[1])
if changed == 0 then return 0 end
local head = redis.call('ZRANGE', KEYS[1], 0, 0)
if head[1] == ARGV[1] then return 1 end
return 0
