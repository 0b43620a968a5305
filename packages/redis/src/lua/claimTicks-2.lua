--[[
  Claims the ticks that are due on one schedule shard, so that exactly one replica runs
  each: a claimed destination leaves the schedule and gets a lease. Leases that expired
  (their replica died mid-tick) are claimed again.

  Input:
    KEYS[1] schedule   ZSET destination -> due time (ms)
    KEYS[2] leases     ZSET destination -> lease expiry (ms)

    ARGV[1] now (ms)
    ARGV[2] lease length (ms)
    ARGV[3] most ticks to claim

  Output:
    { id1, due1, lease1, takenOver1, id2, due2, lease2, takenOver2, ..., nextAt }
    lease: the lease expiry, the token that `settle` must show;
    takenOver: 1 when the tick is an expired lease's (its replica died or froze mid-tick;
      due is then when that lease expired), else 0;
    nextAt: when the shard next has something due (a due tick or an expiring lease), or -1.
]]
local now = tonumber(ARGV[1])
local leaseUntil = now + tonumber(ARGV[2])
local max = tonumber(ARGV[3])
local out = {}
local claimed = 0

local expired = redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', now, 'WITHSCORES', 'LIMIT', 0, max)
for i = 1, #expired, 2 do
  redis.call('ZADD', KEYS[2], leaseUntil, expired[i])
  out[#out + 1] = expired[i]
  out[#out + 1] = expired[i + 1]
  out[#out + 1] = tostring(leaseUntil)
  out[#out + 1] = '1'
  claimed = claimed + 1
end

if claimed < max then
  local due = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now, 'WITHSCORES', 'LIMIT', 0, max - claimed)
  for i = 1, #due, 2 do
    redis.call('ZREM', KEYS[1], due[i])
    redis.call('ZADD', KEYS[2], leaseUntil, due[i])
    out[#out + 1] = due[i]
    out[#out + 1] = due[i + 1]
    out[#out + 1] = tostring(leaseUntil)
    out[#out + 1] = '0'
  end
end

local nextAt = -1
local head = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
if head[2] then nextAt = tonumber(head[2]) end
local lease = redis.call('ZRANGE', KEYS[2], 0, 0, 'WITHSCORES')
if lease[2] and (nextAt == -1 or tonumber(lease[2]) < nextAt) then nextAt = tonumber(lease[2]) end
out[#out + 1] = tostring(nextAt)
return out
