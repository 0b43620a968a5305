--[[
  Ends one tick that a process without schedule loops ran (the API runs the tick it wakes,
  docs/adr/0013) as settleBatch does (includes/settle.lua), and kicks the rate limiters when
  the next tick is now at the head of the schedule: no loop of the settling process will look
  for it, and the limiters' loops sleep until the head they last saw.

  Input:
    KEYS[1] schedule   ZSET destination -> due time (ms)
    KEYS[2] leases     ZSET destination -> lease expiry (ms)
    KEYS[3] woken      ZSET destination -> earliest wake during its tick (ms)

    ARGV[1] destination id
    ARGV[2] lease token (the lease expiry returned by the claim)
    ARGV[3] next due time (ms; -1 to shut down)
    ARGV[4] kick channel

  Output:
    as settle's: the due time the destination is now scheduled at, -1 when it left the
    schedule, -2 when the lease was lost
]]
-- @include settle
local at = settle(KEYS[1], KEYS[2], KEYS[3], ARGV[1], ARGV[2], tonumber(ARGV[3]))
if at >= 0 then
  local head = redis.call('ZRANGE', KEYS[1], 0, 0)
  if head[1] == ARGV[1] then redis.call('PUBLISH', ARGV[4], ARGV[1]) end
end
return at
