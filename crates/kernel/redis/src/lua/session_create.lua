-- Stores a new legacy session within its bounds, atomically. Sessions whose idle expiry has passed
-- are swept from both sets first, so they count no more.
-- KEYS: the session, its owner's set, the set of every session.
-- ARGV: id, record (JSON), now (ms), idle expiry (ms), per-owner bound, total bound.
local now = tonumber(ARGV[3])
redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', now)
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now)
if redis.call('EXISTS', KEYS[1]) == 1 then
  return 'exists'
end
if redis.call('ZCARD', KEYS[3]) >= tonumber(ARGV[6]) then
  return 'total'
end
if redis.call('ZCARD', KEYS[2]) >= tonumber(ARGV[5]) then
  return 'owner'
end
redis.call('HSET', KEYS[1], 'record', ARGV[2], 'owners', KEYS[2])
redis.call('PEXPIREAT', KEYS[1], ARGV[4])
redis.call('ZADD', KEYS[3], ARGV[4], ARGV[1])
redis.call('ZADD', KEYS[2], ARGV[4], ARGV[1])
-- The owner's set lives as long as its longest-lived session.
local last = redis.call('ZRANGE', KEYS[2], -1, -1, 'WITHSCORES')
redis.call('PEXPIREAT', KEYS[2], last[2])
return 'ok'
