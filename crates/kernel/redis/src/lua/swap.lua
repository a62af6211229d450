-- Replaces a task's record if it is still the one read (compare-and-swap on its SHA-1), keeping its
-- expiry; a task that ended leaves its owner's running set in the same step.
-- KEYS: task, the owner's running set, lease.
-- ARGV: SHA-1 of the record read, new record, '1' if the task ends now, id, '1' to refuse while the
--       lease is held (failing a task whose instance stopped).
local current = redis.call('GET', KEYS[1])
if not current then
  return 'gone'
end
if redis.sha1hex(current) ~= ARGV[1] then
  return 'conflict'
end
if ARGV[5] == '1' and redis.call('EXISTS', KEYS[3]) == 1 then
  return 'leased'
end
redis.call('SET', KEYS[1], ARGV[2], 'KEEPTTL')
if ARGV[3] == '1' then
  redis.call('ZREM', KEYS[2], ARGV[4])
end
return 'ok'
