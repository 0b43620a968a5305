--[[
  Deletes a key only while it still holds the value given: a lock released by its owner
  alone (one that expired and was taken by another is not theirs to release), a token dropped
  only if it is the one a receiver refused.
  Input:
    KEYS[1] the key
    ARGV[1] the value it must hold
  Output:
    1 when deleted, 0 when it held another value or none
]]
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
