--[[
  A published delivery's request starts: it leaves `queued`, and its attempt enters
  `inflight` and `sends`, both scored start + timeout (the request is aborted then, so it
  cannot arrive later; an entry left by a worker that died expires by itself). With a burst
  allowance it takes a token: tat = max(tat, now) + T (GCRA, core bucket.ts `bucketStart`).
  With a cap, only while fewer than `cap` sends count against the window (as paceRead counts
  them): the limit may have been lowered since the tick published this delivery.

  Input:
    KEYS[1] queued     ZSET delivery -> publish time (ms)
    KEYS[2] inflight   ZSET attempt  -> start + timeout (ms)
    KEYS[3] sends      ZSET attempt  -> the latest moment it can have arrived (ms)
    KEYS[4] pace       HASH tat, n (starts so far), T (emission interval; 0 or absent: none)

    ARGV[1] delivery id
    ARGV[2] attempt token
    ARGV[3] start + timeout (ms)
    ARGV[4] now (ms)
    ARGV[5] the window's cap in force now (0: none)
    ARGV[6] the window's span: period + margin (ms)

  Output:
    the request's start index (for paceFinish), or -1 without a bucket; -2 when the window
    had no room under the cap (nothing changed)
]]
local cap = tonumber(ARGV[5] or '0')
if cap > 0 then
  local counted = redis.call('ZCOUNT', KEYS[3], '(' .. (tonumber(ARGV[4]) - tonumber(ARGV[6])), '+inf')
  if counted >= cap then return -2 end
end
redis.call('ZREM', KEYS[1], ARGV[1])
redis.call('ZADD', KEYS[2], ARGV[3], ARGV[2])
redis.call('ZADD', KEYS[3], ARGV[3], ARGV[2])
local emission = tonumber(redis.call('HGET', KEYS[4], 'T') or '0')
if emission <= 0 then return -1 end
local now = tonumber(ARGV[4])
local tat = tonumber(redis.call('HGET', KEYS[4], 'tat') or '0')
local index = redis.call('HINCRBY', KEYS[4], 'n', 1) - 1
redis.call('HSET', KEYS[4], 'tat', math.max(tat, now) + emission)
redis.call('PEXPIRE', KEYS[4], 86400000)
return index
