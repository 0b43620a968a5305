--[[
  settle(schedule, leases, woken, id, lease, next): ends a tick. Drops its lease and either
  schedules the next tick or, when the tick found no work (next < 0), lets the destination
  leave the schedule — unless a wake arrived while the tick ran, which then wins (no lost
  wake-up). A tick whose lease was lost (it ran past the lease and another replica took over)
  changes nothing: the other replica settles.

    schedule  ZSET destination -> due time (ms)
    leases    ZSET destination -> lease expiry (ms)
    woken     ZSET destination -> earliest wake during its tick (ms)
    lease     the lease expiry returned by claimTicks (the lease token)

  Returns the due time the destination is now scheduled at, -1 when it left the schedule,
  -2 when the lease was lost.
]]
local function settle(schedule, leases, woken, id, lease, next)
  local held = redis.call('ZSCORE', leases, id)
  if not held or tonumber(held) ~= tonumber(lease) then return -2 end
  redis.call('ZREM', leases, id)
  local at = next
  local wokenAt = redis.call('ZSCORE', woken, id)
  if wokenAt then
    redis.call('ZREM', woken, id)
    if at < 0 or tonumber(wokenAt) < at then at = tonumber(wokenAt) end
  end
  if at < 0 then return -1 end
  redis.call('ZADD', schedule, 'LT', at, id)
  return at
end
