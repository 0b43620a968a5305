--[[
  wake(schedule, leases, woken, id, at): schedules a destination's tick no later than `at`
  (docs/design.md, flow 1): sooner only, never later (ZADD LT). If its tick is running (leased), the
  wake is remembered in `woken` and `settle` honours it, so a wake during a tick that is
  shutting down is never lost. Returns 1 when the tick is now at the head of the schedule
  sooner than before (the limiters must be kicked so they do not sleep past it), else 0.

    schedule  ZSET destination -> due time (ms)
    leases    ZSET destination -> lease expiry (ms)
    woken     ZSET destination -> earliest wake during its tick (ms)
]]
local function wake(schedule, leases, woken, id, at)
  if redis.call('ZSCORE', leases, id) then
    redis.call('ZADD', woken, 'LT', at, id)
    return 0
  end
  if redis.call('ZADD', schedule, 'LT', 'CH', at, id) == 0 then return 0 end
  local head = redis.call('ZRANGE', schedule, 0, 0)
  if head[1] == id then return 1 end
  return 0
end
