-- Reads a task: its record, the record's SHA-1 (the version a compare-and-swap names) and whether
-- its lease is held. KEYS: task, lease.
local record = redis.call('GET', KEYS[1])
if not record then
  return false
end
return {record, redis.sha1hex(record), redis.call('EXISTS', KEYS[2])}
