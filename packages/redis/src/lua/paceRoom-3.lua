--[[
  Records deliveries as published (their requests not started yet), if any, then tells when
  the destination's window may next have room for one more (includes/roomAt.lua). A tick
  calls it with what it publishes, before handing them to the delivery queue: counted
  before publishing, so an over-count only slows the destination. With a burst allowance it
  records the bucket's emission interval T (period / limit), which the requests' starts use
  (paceStart); 0 turns the bucket off.

  Input:
    KEYS[1] queued     ZSET delivery -> publish time (ms)
    KEYS[2] sends      ZSET attempt  -> the latest moment it can have arrived (ms)
    KEYS[3] pace       HASH the destination's pace (T: the bucket's emission interval)

    ARGV[1] now (ms)
    ARGV[2] the window's cap (the burst, else the limit)
    ARGV[3] period (ms)
    ARGV[4] window margin (ms)
    ARGV[5] claim lease (ms)
    ARGV[6] the bucket's emission interval T (ms; 0: no burst)
    ARGV[7..] ids of the deliveries being published (none: only the hint)

  Output:
    the earliest moment (ms) at which at most cap - 1 requests count
]]
-- @include roomAt
local now = tonumber(ARGV[1])
local emission = tonumber(ARGV[6])
if emission > 0 or redis.call('HEXISTS', KEYS[3], 'T') == 1 then
  redis.call('HSET', KEYS[3], 'T', emission)
  redis.call('PEXPIRE', KEYS[3], 86400000)
end
for i = 7, #ARGV, 500 do
  local members = {}
  for j = i, math.min(i + 499, #ARGV) do
    members[#members + 1] = now
    members[#members + 1] = ARGV[j]
  end
  redis.call('ZADD', KEYS[1], unpack(members))
end
local span = tonumber(ARGV[3]) + tonumber(ARGV[4])
return tostring(roomAt(KEYS[1], KEYS[2], now, tonumber(ARGV[2]), span, tonumber(ARGV[5])))
