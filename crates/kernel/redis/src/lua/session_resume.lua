-- Reads a live session of the requesting owner and pushes its idle expiry, in one step: the record's
-- key, and its entries in the set of every session and in its owner's set (the owner's set named by
-- the record's hash). A session of another owner is answered as an unknown one, and left untouched:
-- the owner is compared by the name of its set (which names the owner's digest), '' for no principal.
-- KEYS: the session, the set of every session.
-- ARGV: id, the new idle expiry (ms), the requesting owner's set ('' for no principal).
local fields = redis.call('HMGET', KEYS[1], 'record', 'owners')
local record = fields[1]
if not record then
  return false
end
local owners = fields[2]
if (owners or '') ~= ARGV[3] then
  return false
end
redis.call('PEXPIREAT', KEYS[1], ARGV[2])
redis.call('ZADD', KEYS[2], 'XX', ARGV[2], ARGV[1])
if owners then
  redis.call('ZADD', owners, 'XX', ARGV[2], ARGV[1])
  local last = redis.call('ZRANGE', owners, -1, -1, 'WITHSCORES')
  if last[2] then
    redis.call('PEXPIREAT', owners, last[2])
  end
end
return record
