-- Stores or deletes a user's response of the Responses API (store/responses.ts). Storing keeps
-- it for the retention and lets the user's oldest stored responses go while the user's hold more
-- than the limits. The user's index (a sorted set: response id -> when it expires, ms) and sizes
-- (a hash: response id -> bytes, and `total`) keep count; an entry whose response expired by
-- itself is dropped from them when it comes first. One script for both, so that the shared
-- client carries one more script, not two (ioredis copies each onto every pipeline).
--
-- KEYS: 1 the response's key, 2 the user's index, 3 the user's sizes
-- ARGV: 'put', response id, the stored response (JSON), retention (ms), most bytes, most
--       responses
--   or: 'delete', response id
-- Returns, for put, the ids of the older responses let go, whose keys the caller deletes (a
-- script touches only the keys it is given: on a Redis Cluster a key named on the way could not be
-- redirected while its slot moves); for delete, 1 when there was one, else 0.
local op, id = ARGV[1], ARGV[2]

local function forget(old)
  local size = tonumber(redis.call('HGET', KEYS[3], old))
  if size then
    redis.call('HDEL', KEYS[3], old)
    redis.call('HINCRBY', KEYS[3], 'total', -size)
  end
  redis.call('ZREM', KEYS[2], old)
end

if op == 'delete' then
  forget(id)
  return redis.call('DEL', KEYS[1])
end

local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local json, retention = ARGV[3], tonumber(ARGV[4])
local most_bytes, most_count = tonumber(ARGV[5]), tonumber(ARGV[6])

-- Replacing a response: its old size goes first.
forget(id)
redis.call('SET', KEYS[1], json, 'PX', retention)
redis.call('ZADD', KEYS[2], now + retention, id)
redis.call('HSET', KEYS[3], id, #json)
local total = redis.call('HINCRBY', KEYS[3], 'total', #json)
local count = redis.call('ZCARD', KEYS[2])
local dropped = {}
-- The oldest first, while over a limit; the one just stored stays whatever its size (the
-- gateway bounds a single response before it is sent).
while total > most_bytes or count > most_count do
  -- The two oldest: one stored in the same millisecond as this one ties with it on expiry, and
  -- ties are ordered by id, so this one may come first; the other is the oldest then.
  local two = redis.call('ZRANGE', KEYS[2], 0, 1, 'WITHSCORES')
  local oldest, expires = two[1], two[2]
  if oldest == id then oldest, expires = two[3], two[4] end
  if oldest == nil then break end
  forget(oldest)
  if tonumber(expires) > now then dropped[#dropped + 1] = oldest end
  total = tonumber(redis.call('HGET', KEYS[3], 'total')) or 0
  count = count - 1
end
-- The index lives as long as its newest response.
redis.call('PEXPIRE', KEYS[2], retention)
redis.call('PEXPIRE', KEYS[3], retention)
return dropped
