--[[
  A published delivery's request starts: it leaves `queued`, and its attempt enters
  `inflight` and `sends`, both scored start + timeout (the request is aborted then, so it
  cannot arrive later; an entry left by a worker that died expires by itself).

  Input:
    KEYS[1] queued     ZSET delivery -> publish time (ms)
    KEYS[2] inflight   ZSET attempt  -> start + timeout (ms)
    KEYS[3] sends      ZSET attempt  -> the latest moment it can have arrived (ms)

    ARGV[1] delivery id
    ARGV[2] attempt token
    ARGV[3] start + timeout (ms)

  Output: 1
]]
redis.call('ZREM', KEYS[1], ARGV[1])
redis.call('ZADD', KEYS[2], ARGV[3], ARGV[2])
redis.call('ZADD', KEYS[3], ARGV[3], ARGV[2])
return 1
