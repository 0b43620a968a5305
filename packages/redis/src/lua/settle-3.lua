--[[
  Ends a tick: drops its lease and either schedules the next tick or, when the tick found
  no work, lets the destination leave the schedule — unless a wake arrived while the tick
  ran, which then wins (no lost wake-up). A tick whose lease was lost (it ran past the lease
  and another replica took over) changes nothing: the other replica settles.

  Input:
    KEYS[1] schedule   ZSET destination -> due time (ms)
    KEYS[2] leases     ZSET destination -> lease expiry (ms)
    KEYS[3] woken      ZSET destination -> earliest wake during its tick (ms)

    ARGV[1] destination id
    ARGV[2] lease expiry returned by claimTicks (the lease token)
    ARGV[3] next due time (ms), or -1 to shut down

  Output:
    the due time the destination is now scheduled at, -1 when it left the schedule,
    -2 when the lease was lost.
]]
local lease = redis.call('ZSCORE', KEYS[2], ARGV[1])
if not lease or tonumber(lease) ~= tonumber(ARGV[2]) then return -2 end
redis.call('ZREM', KEYS[2], ARGV[1])

local at = tonumber(ARGV[3])
local woken = redis.call('ZSCORE', KEYS[3], ARGV[1])
if woken then
  redis.call('ZREM', KEYS[3], ARGV[1])
  if at < 0 or tonumber(woken) < at then at = tonumber(woken) end
end
if at < 0 then return -1 end
redis.call('ZADD', KEYS[1], 'LT', at, ARGV[1])
return at
