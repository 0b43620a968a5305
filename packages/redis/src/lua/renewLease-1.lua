--[[
  Extends a running tick's lease, so a tick that is slow but alive (a claim statement that
  waits on Postgres) is not taken for a dead replica's and run again beside itself. Only the
  holder of the current lease may extend it; the new expiry is the new token.
  Input:
    KEYS[1] leases     ZSET destination -> lease expiry (ms)
    ARGV[1] destination id
    ARGV[2] the lease token held (its expiry, as claimTicks or the last renewal returned it)
    ARGV[3] the new expiry (ms)
  Output:
    1 when extended, 0 when the lease is no longer this tick's (it expired and was claimed again)
]]
local lease = redis.call('ZSCORE', KEYS[1], ARGV[1])
if not lease or tonumber(lease) ~= tonumber(ARGV[2]) then return 0 end
redis.call('ZADD', KEYS[1], 'XX', ARGV[3], ARGV[1])
return 1
