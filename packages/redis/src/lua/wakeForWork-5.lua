--[[
  Wakes a destination that has new work (an accepted event, a freed concurrency slot): a
  sooner-only wake (includes/wake.lua) at the earliest moment its window may have room
  (includes/roomAt.lua), so an event under the limit goes out at once and a full window is
  not re-ticked on every event; a wake that lands at the head of the schedule kicks the
  rate limiters. One round trip for what an ingest does after its commit.

  Input:
    KEYS[1] schedule   ZSET destination -> due time (ms)
    KEYS[2] leases     ZSET destination -> lease expiry (ms)
    KEYS[3] woken      ZSET destination -> earliest wake during its tick (ms)
    KEYS[4] queued     ZSET delivery -> publish time (ms)
    KEYS[5] sends      ZSET attempt  -> the latest moment it can have arrived (ms)

    ARGV[1] destination id
    ARGV[2] now (ms)
    ARGV[3] limit
    ARGV[4] period (ms)
    ARGV[5] window margin (ms)
    ARGV[6] claim lease (ms)
    ARGV[7] kick channel

  Output:
    the due time asked for (ms)
]]
-- @include roomAt
-- @include wake
local span = tonumber(ARGV[4]) + tonumber(ARGV[5])
local at = roomAt(KEYS[4], KEYS[5], tonumber(ARGV[2]), tonumber(ARGV[3]), span, tonumber(ARGV[6]))
if wake(KEYS[1], KEYS[2], KEYS[3], ARGV[1], at) == 1 then
  redis.call('PUBLISH', ARGV[7], ARGV[1])
end
return tostring(at)
