--[[
  The API committed a change of a destination: its window's cap, stored before the API
  answers, so every request start from then on checks against it (paceStart), whether or not
  the worker's cached copy has heard of the change yet. Copies are versioned by the
  destination's `updatedAt`: a late write of an older copy changes nothing; two copies of one
  version keep the lower cap. The cap only matters until every cache has heard of the change
  (the change feed, milliseconds), so it expires; without it a start uses the caller's cap.

  Input:
    KEYS[1] cap        HASH c (cap), v (version)

    ARGV[1] the window's cap (0: the destination is gone: forget it)
    ARGV[2] the copy's version (the destination's updatedAt, ms)
    ARGV[3] how long to keep it (ms)

  Output:
    1 when stored, 0 when a newer copy was already there
]]
local cap = tonumber(ARGV[1])
if cap <= 0 then
  redis.call('DEL', KEYS[1])
  return 1
end
local version = tonumber(ARGV[2])
local held = redis.call('HMGET', KEYS[1], 'c', 'v')
local heldCap, heldVersion = tonumber(held[1]), tonumber(held[2])
if heldVersion ~= nil and heldVersion > version then return 0 end
if heldVersion == version and heldCap ~= nil and heldCap < cap then cap = heldCap end
redis.call('HSET', KEYS[1], 'c', cap, 'v', version)
redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[3]))
return 1
