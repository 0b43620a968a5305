--[[
  Records what the ticks of several destinations of one shard publish, and when each
  destination's window may next have room (includes/paceRoom.lua, fenced): the ticks a rate
  limiter runs side by side count in one call (RedisPacing batches the counts of a turn).
  Each destination is fenced on its own: one tick's lost lease refuses only its own count.

  Input:
    KEYS[4i-3..4i] the i-th destination's keys:
                   queued     ZSET delivery -> publish time (ms)
                   sends      ZSET attempt  -> the latest moment it can have arrived (ms)
                   pace       HASH the destination's pace (T: the bucket's emission interval)
                   leases     ZSET destination -> lease expiry (ms) (its shard's)

    ARGV[1] window margin (ms)
    ARGV[2] queued expiry (ms): a queued entry older than this no longer counts
    then per destination, in KEYS' order:
      now (ms), the window's cap, period (ms), the bucket's emission interval T (ms; 0: no
      burst), destination id, the tick's lease token ('': not fenced), when its requests start
      at the soonest (ms), n, then the n ids of the deliveries being published

  Output:
    one reply per destination, in order, as paceRoom's
]]
-- @include roomAt
-- @include paceRoom
local margin, queuedExpiry = tonumber(ARGV[1]), tonumber(ARGV[2])
local out = {}
local a = 3
for i = 1, #KEYS / 4 do
  local k = 4 * (i - 1)
  local n = tonumber(ARGV[a + 7])
  out[i] = paceRoom(KEYS[k + 1], KEYS[k + 2], KEYS[k + 3], KEYS[k + 4],
    tonumber(ARGV[a]), tonumber(ARGV[a + 1]), tonumber(ARGV[a + 2]), margin, queuedExpiry,
    tonumber(ARGV[a + 3]), ARGV[a + 4], ARGV[a + 5], tonumber(ARGV[a + 6]), a + 8, a + 7 + n)
  a = a + 8 + n
end
return out
