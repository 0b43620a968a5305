--[[
  A request's response arrived (or it failed): it leaves `inflight`, and its `sends` entry
  is lowered to when it can last have arrived (ZADD LT: only ever lowered).

  Input:
    KEYS[1] inflight   ZSET attempt -> start + timeout (ms)
    KEYS[2] sends      ZSET attempt -> the latest moment it can have arrived (ms)

    ARGV[1] attempt token
    ARGV[2] the latest moment it can have arrived (ms)

  Output: 1
]]
redis.call('ZREM', KEYS[1], ARGV[1])
redis.call('ZADD', KEYS[2], 'LT', ARGV[2], ARGV[1])
return 1
