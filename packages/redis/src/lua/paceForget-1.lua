--[[
  Forgets deliveries the sweeper returned to pending (their job is gone: a tick died between
  counting them and publishing them, or their job failed). Each was counted as queued when
  its tick published it; nothing will start it now, and its entry would hold the
  destination back — as still in the queue — until it expired. An entry newer than the
  cutoff stays: a tick claimed and counted that delivery again after it was returned.

  Input:
    KEYS[1] queued     ZSET delivery -> publish time (ms)

    ARGV[1] cutoff (ms): only entries published before it go
    ARGV[2..] ids of the deliveries returned to pending

  Output:
    how many entries went
]]
local cutoff = tonumber(ARGV[1])
local forgotten = 0
for i = 2, #ARGV do
  local at = redis.call('ZSCORE', KEYS[1], ARGV[i])
  if at and tonumber(at) < cutoff then
    redis.call('ZREM', KEYS[1], ARGV[i])
    forgotten = forgotten + 1
  end
end
return forgotten
