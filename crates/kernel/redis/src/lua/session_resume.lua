-- Reads a live session of the requesting owner and pushes its idle expiry, in one step: the record's
-- key, and its entries in the set of every session and in its client's set (named by the record's
-- hash). A session of another owner is answered as an unknown one, and left untouched: the owner is
-- compared by the digest the hash keeps, '' for no principal. The client's set only counts: a session
-- of no principal resumed from another address is still its own.
-- KEYS: the session, the set of every session.
-- ARGV: id, the new idle expiry (ms), the requesting owner's digest ('' for no principal).
local fields = redis.call('HMGET', KEYS[1], 'record', 'owner', 'clients')
local record = fields[1]
if not record then
  return false
end
if (fields[2] or '') ~= ARGV[3] then
  return false
end
redis.call('PEXPIREAT', KEYS[1], ARGV[2])
redis.call('ZADD', KEYS[2], 'XX', ARGV[2], ARGV[1])
local clients = fields[3]
if clients then
  redis.call('ZADD', clients, 'XX', ARGV[2], ARGV[1])
  local last = redis.call('ZRANGE', clients, -1, -1, 'WITHSCORES')
  if last[2] then
    redis.call('PEXPIREAT', clients, last[2])
  end
end
return record
