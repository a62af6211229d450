-- Stores a new legacy session within its bounds, atomically. Sessions whose idle expiry has passed
-- are swept from the sets first, so they count no more. A session of no principal has no owner's set:
-- it counts against the total alone.
-- KEYS: the session, the set of every session, its owner's set (absent for a session of nobody).
-- ARGV: id, record (JSON), now (ms), idle expiry (ms), per-owner bound, total bound.
local now = tonumber(ARGV[3])
local owners = KEYS[3]
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now)
if owners then
  redis.call('ZREMRANGEBYSCORE', owners, '-inf', now)
end
if redis.call('EXISTS', KEYS[1]) == 1 then
  return 'exists'
end
if redis.call('ZCARD', KEYS[2]) >= tonumber(ARGV[6]) then
  return 'total'
end
if owners and redis.call('ZCARD', owners) >= tonumber(ARGV[5]) then
  return 'owner'
end
redis.call('ZADD', KEYS[2], ARGV[4], ARGV[1])
if owners then
  redis.call('HSET', KEYS[1], 'record', ARGV[2], 'owners', owners)
  redis.call('ZADD', owners, ARGV[4], ARGV[1])
  -- The owner's set lives as long as its longest-lived session.
  local last = redis.call('ZRANGE', owners, -1, -1, 'WITHSCORES')
  redis.call('PEXPIREAT', owners, last[2])
else
  redis.call('HSET', KEYS[1], 'record', ARGV[2])
end
redis.call('PEXPIREAT', KEYS[1], ARGV[4])
return 'ok'
