--[[
  Records deliveries as published (their requests not started yet), if any, then tells when
  the destination's window may next have room for one more (includes/roomAt.lua). A tick
  calls it with what it publishes, before handing them to the delivery queue: counted
  before publishing, so an over-count only slows the destination. With a burst allowance it
  records the bucket's emission interval T (period / limit), which the requests' starts use
  (paceStart); 0 turns the bucket off.

  Fenced: a tick passes its lease token, and a tick whose lease is no longer its own — it
  stalled for a whole lease and another replica took the destination over — counts nothing
  and must publish nothing. The count here is what a later tick reads, so a tick either
  counted before its successor read, or is refused: two ticks never both publish for one
  window (docs/adr/0002).

  Input:
    KEYS[1] queued     ZSET delivery -> publish time (ms)
    KEYS[2] sends      ZSET attempt  -> the latest moment it can have arrived (ms)
    KEYS[3] pace       HASH the destination's pace (T: the bucket's emission interval)
    KEYS[4] leases     ZSET destination -> lease expiry (ms): the running ticks' tokens

    ARGV[1] now (ms)
    ARGV[2] the window's cap (the burst, else the limit)
    ARGV[3] period (ms)
    ARGV[4] window margin (ms)
    ARGV[5] claim lease (ms)
    ARGV[6] the bucket's emission interval T (ms; 0: no burst)
    ARGV[7] destination id
    ARGV[8] the tick's lease token ('': not fenced)
    ARGV[9] when the published requests start at the soonest (ms; published ahead of the
            window's room, core tick.ts publishAhead; else now)
    ARGV[10..] ids of the deliveries being published (none: only the hint)

  Output:
    the earliest moment (ms) from ARGV[9] at which at most cap - 1 requests count, or -1 when
    the lease is not the tick's (nothing counted)
]]
-- @include roomAt
if ARGV[8] ~= '' then
  local lease = redis.call('ZSCORE', KEYS[4], ARGV[7])
  if not lease or tonumber(lease) ~= tonumber(ARGV[8]) then return -1 end
end
local now = tonumber(ARGV[1])
local emission = tonumber(ARGV[6])
if emission > 0 or redis.call('HEXISTS', KEYS[3], 'T') == 1 then
  redis.call('HSET', KEYS[3], 'T', emission)
  redis.call('PEXPIRE', KEYS[3], 86400000)
end
for i = 10, #ARGV, 500 do
  local members = {}
  for j = i, math.min(i + 499, #ARGV) do
    members[#members + 1] = now
    members[#members + 1] = ARGV[j]
  end
  redis.call('ZADD', KEYS[1], unpack(members))
end
local span = tonumber(ARGV[3]) + tonumber(ARGV[4])
return tostring(roomAt(KEYS[1], KEYS[2], now, tonumber(ARGV[2]), span, tonumber(ARGV[5]), tonumber(ARGV[9])))
