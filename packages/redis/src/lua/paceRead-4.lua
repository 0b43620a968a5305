--[[
  Reads a destination's pace for a tick (DESIGN "The tick arithmetic"), dropping entries
  that can no longer count: a queued delivery older than the claim lease (its publish was
  lost), an in-flight attempt past its timeout (its worker died), a send that can no longer
  share a window with a new request. Also the token bucket of a burst allowance and the
  effective limit of adaptive pacing (docs/adr/0008), from the destination's pace hash.
  With a horizon, also when each send that counts now stops counting, of those that stop by
  then: what a tick held back by its window may publish ahead of (core tick.ts publishAhead).
  Only what can no longer count now is dropped, never what stops counting by the horizon.

  Input:
    KEYS[1] queued     ZSET delivery -> publish time (ms)
    KEYS[2] inflight   ZSET attempt  -> start + timeout (ms)
    KEYS[3] sends      ZSET attempt  -> the latest moment it can have arrived (ms)
    KEYS[4] pace       HASH tat, n, T (bucket); lim, per, E, cut, calm, hold, ewma, base (adaptive)

    ARGV[1] now (ms)
    ARGV[2] period (ms)
    ARGV[3] window margin (ms)
    ARGV[4] claim lease (ms)
    ARGV[5] horizon (ms; ≤ now: none)

  Output:
    { queued, inFlight, sentInWindow, tat, lim, per, E, hold, leaving } (tat … hold as
    strings, or false when absent; leaving: the moments (ms) the sends that stop counting by
    the horizon do so, ascending)
]]
local now = tonumber(ARGV[1])
local span = tonumber(ARGV[2]) + tonumber(ARGV[3])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - tonumber(ARGV[4]))
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now)
redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', now - span)
local pace = redis.call('HMGET', KEYS[4], 'tat', 'lim', 'per', 'E', 'hold')
local leaving = {}
local horizon = tonumber(ARGV[5] or '0')
if horizon > now then
  local scores = redis.call('ZRANGEBYSCORE', KEYS[3], '-inf', horizon - span, 'WITHSCORES')
  for i = 2, #scores, 2 do leaving[#leaving + 1] = tonumber(scores[i]) + span end
end
return {
  redis.call('ZCARD', KEYS[1]), redis.call('ZCARD', KEYS[2]), redis.call('ZCARD', KEYS[3]),
  pace[1], pace[2], pace[3], pace[4], pace[5], leaving,
}
