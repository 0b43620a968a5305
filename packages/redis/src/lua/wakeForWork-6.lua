--[[
  Wakes a destination that has new work (an accepted event, a freed concurrency slot): a
  sooner-only wake (includes/wake.lua) at the earliest moment its window may have room
  (includes/roomAt.lua) — and its burst allowance's bucket, and past an adaptive hold
  (docs/adr/0008) — so an event under the limit goes out at once and a full window, an empty
  bucket or a held destination is not re-ticked on every event; a wake that lands at the head
  of the schedule kicks the rate limiters. One round trip for what an ingest does after its
  commit.

  Asked to (ARGV[11] > 0), a wake that finds room now and no tick running claims the tick for
  the caller instead, as claimTicks would (docs/adr/0013): the API runs the tick it wakes, and
  no limiter is kicked.

  Input:
    KEYS[1] schedule   ZSET destination -> due time (ms)
    KEYS[2] leases     ZSET destination -> lease expiry (ms)
    KEYS[3] woken      ZSET destination -> earliest wake during its tick (ms)
    KEYS[4] queued     ZSET delivery -> publish time (ms)
    KEYS[5] sends      ZSET attempt  -> the latest moment it can have arrived (ms)
    KEYS[6] pace       HASH the destination's pace (tat; lim, per, hold)

    ARGV[1] destination id
    ARGV[2] now (ms)
    ARGV[3] the window's cap (the burst, else the limit)
    ARGV[4] period (ms)
    ARGV[5] window margin (ms)
    ARGV[6] queued expiry (ms): a queued entry older than this no longer counts
    ARGV[7] kick channel
    ARGV[8] the burst (0: none)
    ARGV[9] the bucket's emission interval T (ms)
    ARGV[10] the configured limit when adaptive pacing is on, else 0
    ARGV[11] the lease (ms) of a tick claimed for the caller; 0: never claim

  Output:
    { the due time asked for (ms), the claimed tick's lease token (its expiry) or '' }
]]
-- @include roomAt
-- @include wake
local now = tonumber(ARGV[2])
local span = tonumber(ARGV[4]) + tonumber(ARGV[5])
local at = roomAt(KEYS[4], KEYS[5], now, tonumber(ARGV[3]), span, tonumber(ARGV[6]))
local burst = tonumber(ARGV[8])
if burst > 0 then
  local tat = tonumber(redis.call('HGET', KEYS[6], 'tat') or '0')
  local waiting = redis.call('ZCOUNT', KEYS[4], '(' .. (now - tonumber(ARGV[6])), '+inf')
  at = math.max(at, tat + tonumber(ARGV[5]) + (1 + waiting - burst) * tonumber(ARGV[9]))
end
if ARGV[10] ~= '0' then
  local pace = redis.call('HMGET', KEYS[6], 'lim', 'per', 'hold')
  if pace[1] == ARGV[10] and pace[2] == ARGV[4] and tonumber(pace[3] or '0') > at then
    at = tonumber(pace[3])
  end
end
local leaseMs = tonumber(ARGV[11])
if leaseMs > 0 and at <= now and not redis.call('ZSCORE', KEYS[2], ARGV[1]) then
  -- Due now and not running: the caller's, as a claim moves it (a later entry was sooner-only
  -- woken to now anyway).
  redis.call('ZREM', KEYS[1], ARGV[1])
  local lease = now + leaseMs
  redis.call('ZADD', KEYS[2], lease, ARGV[1])
  return { tostring(at), tostring(lease) }
end
if wake(KEYS[1], KEYS[2], KEYS[3], ARGV[1], at) == 1 then
  redis.call('PUBLISH', ARGV[7], ARGV[1])
end
return { tostring(at), '' }
