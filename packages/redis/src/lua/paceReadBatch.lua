--[[
  Reads the pace of several destinations of one shard for their ticks (includes/paceRead.lua):
  the ticks a rate limiter runs side by side ask in one call (RedisPacing batches the reads
  of a turn), which costs Redis and the client one script call instead of one each.

  Input:
    KEYS[4i-3..4i] the i-th destination's keys:
                   queued     ZSET delivery -> publish time (ms)
                   inflight   ZSET attempt  -> its lease's expiry (ms; paceStart)
                   sends      ZSET attempt  -> the latest moment it can have arrived (ms)
                   pace       HASH the bucket and adaptive pacing

    ARGV[1] window margin (ms)
    ARGV[2] queued expiry (ms): a queued entry older than this no longer counts
    ARGV[3i..3i+2] the i-th destination's now (ms), period (ms) and horizon (ms; ≤ now: none)

  Output:
    one reply per destination, in order, as paceRead's
]]
-- @include paceRead
local margin, queuedExpiry = tonumber(ARGV[1]), tonumber(ARGV[2])
local out = {}
for i = 1, #KEYS / 4 do
  local k, a = 4 * (i - 1), 3 * i
  out[i] = paceRead(KEYS[k + 1], KEYS[k + 2], KEYS[k + 3], KEYS[k + 4],
    tonumber(ARGV[a]), tonumber(ARGV[a + 1]), margin, queuedExpiry, tonumber(ARGV[a + 2]))
end
return out
