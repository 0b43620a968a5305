--[[
  A published delivery's request starts: it leaves `queued`, and its attempt enters
  `sends` scored start + timeout (the request is aborted then, so it cannot arrive later)
  and `inflight` scored by its lease (ARGV[7]: start + the lesser of the timeout and the
  in-flight lease, which the process renews while the request lasts, RedisPacing): an entry
  left by a process that died expires within the lease, as its job's lock does. When it had
  none in flight, the destination is busy from now (`bsy`, the fair bound's stall clock). With a burst
  allowance it takes a token: tat = max(tat, now) + T (GCRA, core bucket.ts `bucketStart`).
  With a cap, only while fewer than `cap` sends count against the window (as paceRead counts
  them): the limit may have been lowered since the tick published this delivery. The cap is
  the lower of the caller's (its cached copy of the destination) and the one the API stored
  when it committed the destination's last change (`cap`, set before it answered): a copy
  that has not heard of a lowered limit yet cannot start a request past it.
  Nothing starts while the shard's `built` marker is missing: Redis lost its state (FLUSHALL,
  a restart with nothing kept, a cluster node that came back empty) and the window would count
  none of the requests sent before the loss until the rebuild puts them back (state-built.ts).

  Input:
    KEYS[1] queued     ZSET delivery -> publish time (ms)
    KEYS[2] inflight   ZSET attempt  -> its lease's expiry (ms; ARGV[7])
    KEYS[3] sends      ZSET attempt  -> the latest moment it can have arrived (ms)
    KEYS[4] pace       HASH tat, n (starts so far), T (emission interval; 0 or absent: none)
    KEYS[5] cap        HASH c (the window's cap the API last committed), v (its version)
    KEYS[6] built      STRING the shard's state was built from the store

    ARGV[1] delivery id
    ARGV[2] attempt token
    ARGV[3] start + timeout (ms)
    ARGV[4] now (ms)
    ARGV[5] the window's cap in force now, as the caller knows it (0: none, and no stored cap)
    ARGV[6] the window's span: period + margin (ms)
    ARGV[7] the in-flight entry's expiry: start + min(timeout, lease) (ms)

  Output:
    -3 when the shard's state is not built (nothing changed);
    -2 when the window had no room under the cap (nothing changed); else
    {the request's start index (for paceFinish) or -1 without a bucket,
     1 if the delivery was counted queued, else 0: a request of it started before (its job
     runs again after its worker died), so this one is a repeat}
]]
if redis.call('EXISTS', KEYS[6]) == 0 then return -3 end
local cap = tonumber(ARGV[5] or '0')
if cap > 0 then
  local stored = tonumber(redis.call('HGET', KEYS[5], 'c') or '0')
  if stored > 0 and stored < cap then cap = stored end
  local counted = redis.call('ZCOUNT', KEYS[3], '(' .. (tonumber(ARGV[4]) - tonumber(ARGV[6])), '+inf')
  if counted >= cap then return -2 end
end
local queued = redis.call('ZREM', KEYS[1], ARGV[1])
local now = tonumber(ARGV[4])
if redis.call('ZCOUNT', KEYS[2], '(' .. now, '+inf') == 0 then
  redis.call('HSET', KEYS[4], 'bsy', now)
  redis.call('PEXPIRE', KEYS[4], 86400000)
end
redis.call('ZADD', KEYS[2], ARGV[7], ARGV[2])
redis.call('ZADD', KEYS[3], ARGV[3], ARGV[2])
local emission = tonumber(redis.call('HGET', KEYS[4], 'T') or '0')
if emission <= 0 then return {-1, queued} end
local tat = tonumber(redis.call('HGET', KEYS[4], 'tat') or '0')
local index = redis.call('HINCRBY', KEYS[4], 'n', 1) - 1
redis.call('HSET', KEYS[4], 'tat', math.max(tat, now) + emission)
redis.call('PEXPIRE', KEYS[4], 86400000)
return {index, queued}
