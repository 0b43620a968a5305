--[[
  paceRoom(queued, sends, pace, leases, now, cap, period, margin, queuedExpiry, emission, id,
  fence, startsAt, ids, from, to): records deliveries ARGV[from..to] as published (their
  requests not started yet), if any, then tells when the destination's window may next have
  room for one more (includes/roomAt.lua). A tick calls it with what it publishes, before
  handing them to the delivery queue: counted before publishing, so an over-count only slows
  the destination. With a burst allowance it records the bucket's emission interval T
  (period / limit), which the requests' starts use (paceStart); 0 turns the bucket off.

  Fenced: a tick passes its lease token (fence; '' = not fenced), and a tick whose lease is
  no longer its own — it stalled for a whole lease and another replica took the destination
  over — counts nothing and must publish nothing. The count here is what a later tick reads,
  so a tick either counted before its successor read, or is refused: two ticks never both
  publish for one window (docs/adr/0002).

    queued     ZSET delivery -> publish time (ms)
    sends      ZSET attempt  -> the latest moment it can have arrived (ms)
    pace       HASH the destination's pace (T: the bucket's emission interval)
    leases     ZSET destination -> lease expiry (ms): the running ticks' tokens
    cap        the window's cap (the burst, else the limit)
    startsAt   when the published requests start at the soonest (published ahead of the
               window's room, core tick.ts publishAhead; else now)

  Returns the earliest moment (ms) from startsAt at which at most cap - 1 requests count (as a
  string), or -1 when the lease is not the tick's (nothing counted).
]]
local function paceRoom(queued, sends, pace, leases, now, cap, period, margin, queuedExpiry,
                        emission, id, fence, startsAt, from, to)
  if fence ~= '' then
    local lease = redis.call('ZSCORE', leases, id)
    if not lease or tonumber(lease) ~= tonumber(fence) then return -1 end
  end
  if emission > 0 or redis.call('HEXISTS', pace, 'T') == 1 then
    redis.call('HSET', pace, 'T', emission)
    redis.call('PEXPIRE', pace, 86400000)
  end
  for i = from, to, 500 do
    local members = {}
    for j = i, math.min(i + 499, to) do
      members[#members + 1] = now
      members[#members + 1] = ARGV[j]
    end
    redis.call('ZADD', queued, unpack(members))
  end
  return tostring(roomAt(queued, sends, now, cap, period + margin, queuedExpiry, startsAt))
end
