-- Stores a new task within its bounds, atomically, and takes its lease.
-- KEYS: task, lease, the owner's running set, the stored set.
-- ARGV: id, record, now (ms), removal deadline (ms, or '' for none), per-owner bound, total bound,
--       lease (ms), holder, the prefix of lease keys ('<prefix>:lease:').
local now = tonumber(ARGV[3])
redis.call('ZREMRANGEBYSCORE', KEYS[4], '-inf', now)
redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', now)
if redis.call('EXISTS', KEYS[1]) == 1 then
  return 'exists'
end
if redis.call('ZCARD', KEYS[4]) >= tonumber(ARGV[6]) then
  return 'total'
end
if redis.call('ZCARD', KEYS[3]) >= tonumber(ARGV[5]) then
  -- At the bound, a task whose lease lapsed runs nowhere (its instance stopped, or its creation was
  -- answered "unavailable" and reached Redis later): its next read fails it; it holds no place.
  for _, id in ipairs(redis.call('ZRANGE', KEYS[3], 0, -1)) do
    if redis.call('EXISTS', ARGV[9] .. id) == 0 then
      redis.call('ZREM', KEYS[3], id)
    end
  end
  if redis.call('ZCARD', KEYS[3]) >= tonumber(ARGV[5]) then
    return 'owner'
  end
end
local score = '+inf'
redis.call('SET', KEYS[1], ARGV[2])
if ARGV[4] ~= '' then
  score = ARGV[4]
  redis.call('PEXPIREAT', KEYS[1], ARGV[4])
end
redis.call('ZADD', KEYS[4], score, ARGV[1])
redis.call('ZADD', KEYS[3], score, ARGV[1])
redis.call('SET', KEYS[2], ARGV[8], 'PX', ARGV[7])
return 'ok'
