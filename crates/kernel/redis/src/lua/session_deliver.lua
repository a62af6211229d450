-- Takes a waiting request of a live session and publishes its answer, in one step: 1 if it was
-- waiting (it is removed, so an answer is handed over once, and published on the replies channel
-- unless the waiting instance is the caller), 0 if not (never registered, another session's,
-- answered, forgotten, past its deadline, or its session gone), and then nothing is published.
-- KEYS: the session, its pending requests.
-- ARGV: request id, now (ms), the replies channel, the message to publish ('' for none).
if redis.call('EXISTS', KEYS[1]) == 0 then
  return 0
end
local deadline = redis.call('ZSCORE', KEYS[2], ARGV[1])
if not deadline then
  return 0
end
redis.call('ZREM', KEYS[2], ARGV[1])
if tonumber(deadline) <= tonumber(ARGV[2]) then
  return 0
end
if ARGV[4] ~= '' then
  redis.call('PUBLISH', ARGV[3], ARGV[4])
end
return 1
