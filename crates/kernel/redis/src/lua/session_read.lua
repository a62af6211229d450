-- Reads a session's record and its SHA-1 (the version a compare-and-swap names).
-- KEYS: the session.
local record = redis.call('HGET', KEYS[1], 'record')
if not record then
  return false
end
return {record, redis.sha1hex(record)}
