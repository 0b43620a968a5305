--[[
  A request's response arrived (or it failed): it leaves `inflight`, and its `sends` entry
  is lowered to when it can last have arrived (ZADD LT: only ever lowered). An entry a read
  dropped is added again at ARGV[2], which is then out of the window at once as long as
  ARGV[2] is the sooner of the response and the write's bound (the caller's part: the
  response alone counted a slow receiver's request for another period); after a loss of
  Redis the add puts back a request that was in flight across it. With a burst
  allowance the bucket counts it from that moment (core bucket.ts `bucketFinish`:
  tat >= arrivedBy + (n - index) * T); its time from the start moves the moving average of
  the destination's latency (`lat`, core fair.ts `nextLatency`: the fair bound's estimate),
  and its finish is the destination's last answer (`fin`);
  with adaptive pacing the outcome is fed to the
  effective limit (includes/adapt.lua, core adaptive.ts `adapt`). One round trip.

  Input:
    KEYS[1] inflight   ZSET attempt -> its lease's expiry (ms; paceStart)
    KEYS[2] sends      ZSET attempt -> the latest moment it can have arrived (ms)
    KEYS[3] pace       HASH the destination's pace (see paceRead)

    ARGV[1] attempt token
    ARGV[2] the latest moment it can have arrived (ms): the response, or the write + the
            arrival bound when sooner
    ARGV[3] the request's start index (paceStart), or -1
    ARGV[4] the request's time from its start to now (ms)
    ARGV[5] the weight of one request in the moving average of the latency
    ARGV[6] now: when it finished (ms; `fin`, the latest kept)
    ARGV[7] adaptive: 1 when the outcome follows (ARGV[8..20]), else 0
    ARGV[8] now (ms)           ARGV[9] limit        ARGV[10] period (ms)
    ARGV[11] status (-1: none) ARGV[12] Retry-After (ms; -1: none)  ARGV[13] latency (ms)
    ARGV[14..20] the parameters: decrease, increase, EWMA alpha, baseline drift,
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
local sample = math.max(0, tonumber(ARGV[4]))
local lat = tonumber(redis.call('HGET', KEYS[3], 'lat') or '')
if lat == nil then lat = sample else lat = lat + tonumber(ARGV[5]) * (sample - lat) end
local fin = math.max(tonumber(redis.call('HGET', KEYS[3], 'fin') or '0'), tonumber(ARGV[6]))
redis.call('HSET', KEYS[3], 'lat', lat, 'fin', fin)
if ARGV[7] == '1' then
  local p = {}
  for i = 14, 20 do p[#p + 1] = tonumber(ARGV[i]) end
  adapt(KEYS[3], tonumber(ARGV[8]), tonumber(ARGV[9]), tonumber(ARGV[10]), tonumber(ARGV[11]),
    tonumber(ARGV[12]), tonumber(ARGV[13]), p)
end
redis.call('PEXPIRE', KEYS[3], 86400000)
return 1
