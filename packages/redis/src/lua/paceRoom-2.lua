--[[
  Records deliveries as published (their requests not started yet), if any, then tells when
  the destination's window may next have room for one more (includes/roomAt.lua). A tick
  calls it with what it publishes, before handing them to the delivery queue: counted
  before publishing, so an over-count only slows the destination.

  Input:
    KEYS[1] queued     ZSET delivery -> publish time (ms)
    KEYS[2] sends      ZSET attempt  -> the latest moment it can have arrived (ms)

    ARGV[1] now (ms)
    ARGV[2] limit
    ARGV[3] period (ms)
    ARGV[4] window margin (ms)
    ARGV[5] claim lease (ms)
    ARGV[6..] ids of the deliveries being published (none: only the hint)

  Output:
    the earliest moment (ms) at which at most limit - 1 requests count
]]
-- @include roomAt
local now = tonumber(ARGV[1])
for i = 6, #ARGV, 500 do
  local members = {}
  for j = i, math.min(i + 499, #ARGV) do
    members[#members + 1] = now
    members[#members + 1] = ARGV[j]
  end
  redis.call('ZADD', KEYS[1], unpack(members))
end
local span = tonumber(ARGV[3]) + tonumber(ARGV[4])
return tostring(roomAt(KEYS[1], KEYS[2], now, tonumber(ARGV[2]), span, tonumber(ARGV[5])))
