--[[
  A request's response arrived (or it failed): it leaves `inflight`, and its `sends` entry
  is lowered to when it can last have arrived (ZADD LT: only ever lowered). An entry a read
  dropped is added again at ARGV[2], which is then out of the window at once as long as
  ARGV[2] is the sooner of the response and the write's bound (the caller's part: the
  response alone counted a slow receiver's request for another period); after a loss of
  Redis the add puts back a request that was in flight across it. With a burst
  allowance the bucket counts it from that moment (core bucket.ts `bucketFinish`:
  tat >= arrivedBy + (n - index) * T); with adaptive pacing the outcome is fed to the
  effective limit (includes/adapt.lua, core adaptive.ts `adapt`). One round trip.

  Input:
    KEYS[1] inflight   ZSET attempt -> start + timeout (ms)
    KEYS[2] sends      ZSET attempt -> the latest moment it can have arrived (ms)
    KEYS[3] pace       HASH the destination's pace (see paceRead)

    ARGV[1] attempt token
    ARGV[2] the latest moment it can have arrived (ms): the response, or the write + the
            arrival bound when sooner
    ARGV[3] the request's start index (paceStart), or -1
    ARGV[4] adaptive: 1 when the outcome follows (ARGV[5..17]), else 0
    ARGV[5] now (ms)           ARGV[6] limit        ARGV[7] period (ms)
    ARGV[8] status (-1: none)  ARGV[9] Retry-After (ms; -1: none)  ARGV[10] latency (ms)
    ARGV[11..17] the parameters: decrease, increase, EWMA alpha, baseline drift,
                 latency factor, latency floor (ms), longest hold (ms)

  Output: 1
]]
-- @include adapt
redis.call('ZREM', KEYS[1], ARGV[1])
redis.call('ZADD', KEYS[2], 'LT', ARGV[2], ARGV[1])
local index = tonumber(ARGV[3])
if index >= 0 then
  local arrived = tonumber(redis.call('ZSCORE', KEYS[2], ARGV[1]) or ARGV[2])
  local pace = redis.call('HMGET', KEYS[3], 'T', 'n', 'tat')
  local emission = tonumber(pace[1] or '0')
  if emission > 0 then
    local candidate = arrived + (tonumber(pace[2] or '0') - index) * emission
    if candidate > tonumber(pace[3] or '0') then redis.call('HSET', KEYS[3], 'tat', candidate) end
  end
end
if ARGV[4] == '1' then
  local p = {}
  for i = 11, 17 do p[#p + 1] = tonumber(ARGV[i]) end
  adapt(KEYS[3], tonumber(ARGV[5]), tonumber(ARGV[6]), tonumber(ARGV[7]), tonumber(ARGV[8]),
    tonumber(ARGV[9]), tonumber(ARGV[10]), p)
end
redis.call('PEXPIRE', KEYS[3], 86400000)
return 1
