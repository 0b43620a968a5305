--[[
  Ends the ticks of several destinations of one shard (includes/settle.lua): the ticks a
  process ran side by side settle in one call (Scripts batches the settles of a turn).

  A process without schedule loops (the API runs the ticks it wakes, docs/adr/0013) asks for
  a kick: when a settled destination's next tick is then at the head of the schedule, the
  rate limiters are told on the kick channel — no loop of the settling process will look for
  it, and the limiters' loops sleep until the head they last saw.

  Input:
    KEYS[1] schedule   ZSET destination -> due time (ms)
    KEYS[2] leases     ZSET destination -> lease expiry (ms)
    KEYS[3] woken      ZSET destination -> earliest wake during its tick (ms)

    ARGV[1]        the kick channel, or '' for no kick
    ARGV[3i-1..3i+1] the i-th tick's destination id, lease token (the lease expiry returned
                   by its claim) and next due time (ms; -1 to shut down)

  Output:
    one reply per tick, in order, as settle's: the due time the destination is now scheduled
    at, -1 when it left the schedule, -2 when the lease was lost
]]
-- @include settle
local out = {}
local scheduled = false
for i = 1, (#ARGV - 1) / 3 do
  local a = 3 * (i - 1) + 1
  out[i] = settle(KEYS[1], KEYS[2], KEYS[3], ARGV[a + 1], ARGV[a + 2], tonumber(ARGV[a + 3]))
  if out[i] >= 0 then scheduled = true end
end
if ARGV[1] ~= '' and scheduled then
  local head = redis.call('ZRANGE', KEYS[1], 0, 0)
  for i = 1, (#ARGV - 1) / 3 do
    if out[i] >= 0 and head[1] == ARGV[3 * (i - 1) + 2] then
      redis.call('PUBLISH', ARGV[1], head[1])
      break
    end
  end
end
return out
