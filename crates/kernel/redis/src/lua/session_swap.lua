-- Replaces a session's record if it is still the one read (compare-and-swap on its SHA-1); the
-- key's expiry is kept (a hash field written keeps it).
-- KEYS: the session.
-- ARGV: SHA-1 of the record read, new record.
local current = redis.call('HGET', KEYS[1], 'record')
if not current then
  return 'gone'
end
if redis.sha1hex(current) ~= ARGV[1] then
  return 'conflict'
end
redis.call('HSET', KEYS[1], 'record', ARGV[2])
return 'ok'
