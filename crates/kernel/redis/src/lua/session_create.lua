-- Stores a new legacy session within its bounds, atomically. Sessions whose idle expiry has passed
-- are swept from the sets first, so they count no more. A session is counted against its client's set
-- (its quota: the principal's digest, else its address's); one counted under no key has no client's
-- set: it counts against the total alone. The hash keeps the owner's digest apart from the client's
-- set, since only the owner binds the session (`session_resume.lua`).
-- KEYS: the session, the set of every session, its client's set (absent when counted under no key).
-- ARGV: id, record (JSON), now (ms), idle expiry (ms), per-client bound, total bound, the owner's
-- digest ('' for no principal).
local now = tonumber(ARGV[3])
local clients = KEYS[3]
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now)
if clients then
  redis.call('ZREMRANGEBYSCORE', clients, '-inf', now)
end
if redis.call('EXISTS', KEYS[1]) == 1 then
  return 'exists'
end
if redis.call('ZCARD', KEYS[2]) >= tonumber(ARGV[6]) then
  return 'total'
end
if clients and redis.call('ZCARD', clients) >= tonumber(ARGV[5]) then
  return 'client'
end
local fields = {'record', ARGV[2]}
if ARGV[7] ~= '' then
  table.insert(fields, 'owner')
  table.insert(fields, ARGV[7])
end
redis.call('ZADD', KEYS[2], ARGV[4], ARGV[1])
if clients then
  table.insert(fields, 'clients')
  table.insert(fields, clients)
  redis.call('ZADD', clients, ARGV[4], ARGV[1])
  -- The client's set lives as long as its longest-lived session.
  local last = redis.call('ZRANGE', clients, -1, -1, 'WITHSCORES')
  redis.call('PEXPIREAT', clients, last[2])
end
redis.call('HSET', KEYS[1], unpack(fields))
redis.call('PEXPIREAT', KEYS[1], ARGV[4])
return 'ok'
