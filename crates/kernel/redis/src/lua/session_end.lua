-- Ends a session: its record, its waiting requests and its entries in the set of every session and in
-- its client's set (named by the record's hash), in one step; if it was live, says so on the replies
-- channel, so that every instance ends the session's waits.
-- KEYS: the session, the set of every session, its pending requests.
-- ARGV: id, the replies channel, the message to publish.
-- Returns 1 if the session was live, 0 if not.
local clients = redis.call('HGET', KEYS[1], 'clients')
local existed = redis.call('DEL', KEYS[1])
redis.call('DEL', KEYS[3])
redis.call('ZREM', KEYS[2], ARGV[1])
if clients then
  redis.call('ZREM', clients, ARGV[1])
end
if existed == 1 then
  redis.call('PUBLISH', ARGV[2], ARGV[3])
end
return existed
