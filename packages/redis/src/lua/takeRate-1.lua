--[[
  Takes n events from a tenant's events-a-second bucket if they fit, atomically, so every
  API replica takes from one bucket. The same arithmetic as @sluice/core's takeRate (quota.ts),
  operation for operation, so both shapes decide alike to the last bit (rate-counter.test.ts
  checks it): GCRA with T = 1000 / rate and room for `rate` events (a second's worth).
  Input:
    KEYS[1] rate       STRING the bucket's tat (ms: when it is full again); absent = full
    ARGV[1] n, the events of the request
    ARGV[2] the quota, events a second
    ARGV[3] now (ms)
  Output:
    {1, the new tat} when taken (and stored, expiring once the bucket is full again);
    {0, ms until the request fits} when refused, {0, ''} when it never fits (n > the quota).
    Numbers as strings: Redis would truncate a Lua number to an integer.
]]
local n = tonumber(ARGV[1])
local rate = tonumber(ARGV[2])
local now = tonumber(ARGV[3])
local t = 1000 / rate
local room = rate * t
local tat = tonumber(redis.call('GET', KEYS[1]) or '0')
local nextTat = math.max(tat, now) + n * t
if nextTat - now <= room + 1e-9 then
  local stored = string.format('%.17g', nextTat)
  redis.call('SET', KEYS[1], stored, 'PX', math.ceil(nextTat - now) + 1000)
  return {1, stored}
end
if n > rate then return {0, ''} end
return {0, string.format('%.17g', nextTat - now - room)}
