--[[
  When a destination's window may next have room for one more request: a scheduling hint,
  optimistic (an attempt in flight is assumed to arrive now, a queued delivery to start
  now), as SendWindow.roomAt in the single box.

  Input:
    KEYS[1] queued     ZSET delivery -> publish time (ms)
    KEYS[2] sends      ZSET attempt  -> the latest moment it can have arrived (ms)

    ARGV[1] now (ms)
    ARGV[2] limit
    ARGV[3] period (ms)
    ARGV[4] window margin (ms)
    ARGV[5] claim lease (ms)

  Output:
    the earliest moment (ms) at which at most limit - 1 requests count
]]
local now = tonumber(ARGV[1])
local limit = tonumber(ARGV[2])
local span = tonumber(ARGV[3]) + tonumber(ARGV[4])
local queued = redis.call('ZCOUNT', KEYS[1], '(' .. (now - tonumber(ARGV[5])), '+inf')
local sends = redis.call('ZCOUNT', KEYS[2], '(' .. (now - span), '+inf')
local excess = sends + queued - (limit - 1)
if excess <= 0 then return tostring(now) end
if excess > sends then return tostring(now + span) end
local kth = redis.call('ZRANGEBYSCORE', KEYS[2], '(' .. (now - span), '+inf', 'WITHSCORES', 'LIMIT', excess - 1, 1)
local arrived = math.min(tonumber(kth[2]), now)
return tostring(arrived + span)
