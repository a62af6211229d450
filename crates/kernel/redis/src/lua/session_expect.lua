-- Registers a server-to-client request of a live session, within the session's bound; entries past
-- their deadline are swept first.
-- KEYS: the session, its pending requests.
-- ARGV: request id, now (ms), when the entry is forgotten (ms), the bound.
if redis.call('EXISTS', KEYS[1]) == 0 then
  return 'gone'
end
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', ARGV[2])
if redis.call('ZSCORE', KEYS[2], ARGV[1]) then
  return 'exists'
end
if redis.call('ZCARD', KEYS[2]) >= tonumber(ARGV[4]) then
  return 'full'
end
redis.call('ZADD', KEYS[2], ARGV[3], ARGV[1])
-- The set lives as long as its last entry.
local last = redis.call('ZRANGE', KEYS[2], -1, -1, 'WITHSCORES')
redis.call('PEXPIREAT', KEYS[2], last[2])
return 'ok'
