--[[
  roomAt(queued, sends, now, limit, span, claimLease): the earliest moment (ms) at which at
  most limit - 1 requests count against a destination's window: a scheduling hint,
  optimistic (an attempt in flight is assumed to arrive now, a queued delivery to start now),
  as SendWindow.roomAt in the single box.

    queued      ZSET delivery -> publish time (ms)
    sends       ZSET attempt  -> the latest moment it can have arrived (ms)
    span        period + window margin (ms)
    claimLease  a queued delivery older than this no longer counts (its publish was lost)
]]
local function roomAt(queued, sends, now, limit, span, claimLease)
  local waiting = redis.call('ZCOUNT', queued, '(' .. (now - claimLease), '+inf')
  local sent = redis.call('ZCOUNT', sends, '(' .. (now - span), '+inf')
  local excess = sent + waiting - (limit - 1)
  if excess <= 0 then return now end
  if excess > sent then return now + span end
  local kth = redis.call('ZRANGEBYSCORE', sends, '(' .. (now - span), '+inf', 'WITHSCORES', 'LIMIT', excess - 1, 1)
  return math.min(tonumber(kth[2]), now) + span
end
