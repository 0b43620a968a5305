--[[
  roomAt(queued, sends, now, limit, span, queuedExpiry, from): the earliest moment (ms) from
  `from` (≥ now; nil: now) at which at most limit - 1 requests count against a destination's
  window: a scheduling hint, optimistic (an attempt in flight is assumed to arrive by `from`,
  a queued delivery to start then), as SendWindow.roomAt in the single box. `from` is later
  than now when the queued ones were published to start no sooner (core tick.ts publishAhead).

    queued      ZSET delivery -> publish time (ms)
    sends       ZSET attempt  -> the latest moment it can have arrived (ms)
    span        period + window margin (ms)
    queuedExpiry  a queued delivery older than this no longer counts (its publish was lost)
]]
local function roomAt(queued, sends, now, limit, span, queuedExpiry, from)
  from = math.max(now, from or now)
  local waiting = redis.call('ZCOUNT', queued, '(' .. (now - queuedExpiry), '+inf')
  local sent = redis.call('ZCOUNT', sends, '(' .. (from - span), '+inf')
  local excess = sent + waiting - (limit - 1)
  if excess <= 0 then return from end
  if excess > sent then return from + span end
  local kth = redis.call('ZRANGEBYSCORE', sends, '(' .. (from - span), '+inf', 'WITHSCORES', 'LIMIT', excess - 1, 1)
  return math.min(tonumber(kth[2]), from) + span
end
