-- Marks one of a user's keys revoked. A key revoked before keeps its first revocation time.
--
-- KEYS: 1 user's keys hash
-- ARGV: 1 key id, 2 revoked_at (ISO)
-- Returns the key record (JSON) after the change, or false when the user has no such key.

local raw = redis.call('HGET', KEYS[1], ARGV[1])
if not raw then return false end
local key = cjson.decode(raw)
if key.revoked_at ~= cjson.null then return raw end
key.revoked_at = ARGV[2]
local updated = cjson.encode(key)
redis.call('HSET', KEYS[1], ARGV[1], updated)
return updated
