--[[
  Reads a destination's pace for a tick (DESIGN "The tick arithmetic"), dropping entries
  that can no longer count: a queued delivery older than the claim lease (its publish was
  lost), an in-flight attempt past its timeout (its worker died), a send that can no longer
  share a window with a new request.

  Input:
    KEYS[1] queued     ZSET delivery -> publish time (ms)
    KEYS[2] inflight   ZSET attempt  -> start + timeout (ms)
    KEYS[3] sends      ZSET attempt  -> the latest moment it can have arrived (ms)

    ARGV[1] now (ms)
    ARGV[2] period (ms)
    ARGV[3] window margin (ms)
    ARGV[4] claim lease (ms)

  Output:
    { queued, inFlight, sentInWindow }
]]
local now = tonumber(ARGV[1])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - tonumber(ARGV[4]))
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now)
redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', now - tonumber(ARGV[2]) - tonumber(ARGV[3]))
return { redis.call('ZCARD', KEYS[1]), redis.call('ZCARD', KEYS[2]), redis.call('ZCARD', KEYS[3]) }
