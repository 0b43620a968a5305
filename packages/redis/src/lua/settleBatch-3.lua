--[[
  Ends the ticks of several destinations of one shard (includes/settle.lua): the ticks a rate
  limiter ran side by side settle in one call (Scripts batches the settles of a turn).

  Input:
    KEYS[1] schedule   ZSET destination -> due time (ms)
    KEYS[2] leases     ZSET destination -> lease expiry (ms)
    KEYS[3] woken      ZSET destination -> earliest wake during its tick (ms)

    ARGV[3i-2..3i] the i-th tick's destination id, lease token (the lease expiry returned by
                   claimTicks) and next due time (ms; -1 to shut down)

  Output:
    one reply per tick, in order, as settle's: the due time the destination is now scheduled
    at, -1 when it left the schedule, -2 when the lease was lost
]]
-- @include settle
local out = {}
for i = 1, #ARGV / 3 do
  local a = 3 * (i - 1)
  out[i] = settle(KEYS[1], KEYS[2], KEYS[3], ARGV[a + 1], ARGV[a + 2], tonumber(ARGV[a + 3]))
end
return out
