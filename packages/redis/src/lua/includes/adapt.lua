--[[
  adapt(pace, at, limit, periodMs, status, retryAfterMs, latencyMs, p): adaptive pacing's
  step for one finished attempt — the same arithmetic as `adapt` in packages/core
  adaptive.ts (read it for the why), on the destination's pace hash. A test holds the two
  to the same answers.

    pace          HASH lim, per, E, cut, calm, hold, ewma, base
    status        the response's status, -1 when the request failed without one
    retryAfterMs  a 429's or 503's Retry-After (ms), -1 when none
    p             { decrease, increase, alpha, drift, factor, floorMs, maxHoldMs }
]]
local function adapt(pace, at, limit, periodMs, status, retryAfterMs, latencyMs, p)
  local f = redis.call('HMGET', pace, 'lim', 'per', 'E', 'cut', 'calm', 'hold', 'ewma', 'base')
  local E, cut, calm, hold, ewma, base
  if tonumber(f[1]) == limit and tonumber(f[2]) == periodMs then
    E, cut, calm = tonumber(f[3]), tonumber(f[4]), tonumber(f[5])
    hold, ewma, base = tonumber(f[6]), tonumber(f[7]), tonumber(f[8])
  else
    E, cut, calm, hold, ewma, base = limit, -1e300, at, 0, 0, 0
  end
  if status >= 0 then
    if ewma == 0 then ewma = latencyMs else ewma = ewma + p[3] * (latencyMs - ewma) end
    if base == 0 or ewma < base then base = ewma else base = base + p[4] * (ewma - base) end
  end
  local refused = status == 429 or status == 503 or retryAfterMs >= 0
  local slow = ewma > base * p[5] and ewma - base > p[6]
  if retryAfterMs >= 0 then hold = math.max(hold, at + math.min(retryAfterMs, p[7])) end
  if refused or slow then
    if at - cut >= periodMs then
      E = math.max(1, E * p[1])
      cut = at
    end
    calm = at
  elseif status >= 200 and status < 300 then
    if E < limit and at - calm >= periodMs then
      E = math.min(limit, E + math.max(1, limit * p[2]))
      calm = at
    end
  end
  redis.call('HSET', pace, 'lim', limit, 'per', periodMs, 'E', E, 'cut', cut, 'calm', calm,
    'hold', hold, 'ewma', ewma, 'base', base)
end
