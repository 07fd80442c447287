-- Adds an API key to an existing user: the key record in the user's keys hash and the index
-- from the key's hash to it. Refuses a key id the user already has, or a hash already indexed
-- (overwriting the index would hand someone else's key to this user).
--
-- KEYS: 1 user hash, 2 user's keys hash, 3 API key index entry (tg:apikey:<hash>)
-- ARGV: 1 key id, 2 key record (JSON ApiKeyRecord), 3 index entry (JSON {user_id, key_id})
-- Returns 'ok' | 'not_found' | 'conflict'.

if redis.call('EXISTS', KEYS[1]) == 0 then return 'not_found' end
if redis.call('HEXISTS', KEYS[2], ARGV[1]) == 1 or redis.call('EXISTS', KEYS[3]) == 1 then return 'conflict' end
redis.call('HSET', KEYS[2], ARGV[1], ARGV[2])
redis.call('SET', KEYS[3], ARGV[3])
return 'ok'
