--[[
  paceRead(queued, inflight, sends, pace, now, period, margin, queuedExpiry, horizon): one
  destination's pace for a tick (docs/design.md "The tick arithmetic"), dropping entries that can no
  longer count: a queued delivery older than the queued expiry (its publish was lost), an
  in-flight attempt past its timeout (its worker died), a send that can no longer share a
  window with a new request. Also the token bucket of a burst allowance and the effective
  limit of adaptive pacing (docs/adr/0008), from the destination's pace hash. With a horizon
  (> now), also when each send that counts now stops counting, of those that stop by then:
  what a tick held back by its window may publish ahead of (core tick.ts publishAhead). Only
  what can no longer count now is dropped, never what stops counting by the horizon.

    queued     ZSET delivery -> publish time (ms)
    inflight   ZSET attempt  -> its lease's expiry (start + min(timeout, lease), renewed)
    sends      ZSET attempt  -> the latest moment it can have arrived (ms)
    pace       HASH tat, n, T (bucket); lim, per, E, cut, calm, hold, ewma, base (adaptive);
               lat (the moving average of its requests' latency), fin (its last answer;
               paceFinish), bsy (when it last went from none in flight to one; paceStart)

  Returns { queued, inFlight, sentInWindow, tat, lim, per, E, hold, leaving, lat, bsy, fin }
  (tat … hold, lat, bsy and fin as strings, or false when absent; leaving: the moments (ms)
  the sends that stop counting by the horizon do so, ascending).
]]
local function paceRead(queued, inflight, sends, pace, now, period, margin, queuedExpiry, horizon)
  local span = period + margin
  redis.call('ZREMRANGEBYSCORE', queued, '-inf', now - queuedExpiry)
  redis.call('ZREMRANGEBYSCORE', inflight, '-inf', now)
  redis.call('ZREMRANGEBYSCORE', sends, '-inf', now - span)
  local fields = redis.call('HMGET', pace, 'tat', 'lim', 'per', 'E', 'hold', 'lat', 'bsy', 'fin')
  local leaving = {}
  if horizon > now then
    local scores = redis.call('ZRANGEBYSCORE', sends, '-inf', horizon - span, 'WITHSCORES')
    for i = 2, #scores, 2 do leaving[#leaving + 1] = tonumber(scores[i]) + span end
  end
  return {
    redis.call('ZCARD', queued), redis.call('ZCARD', inflight), redis.call('ZCARD', sends),
    fields[1], fields[2], fields[3], fields[4], fields[5], leaving, fields[6], fields[7],
    fields[8],
  }
end
