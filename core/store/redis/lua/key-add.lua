-- Adds an API key to an existing user: the key record in the user's keys hash and the index
-- from the key's hash to it. Refuses a key id the user already has, or a hash already indexed
-- (overwriting the index would hand someone else's key to this user), and, when a most is
-- given, a key for a user who already has that many active keys (counted and written in one
-- step, so gateways adding keys at once cannot pass the limit together).
--
-- KEYS: 1 user hash, 2 user's keys hash, 3 API key index entry (tg:apikey:<hash>); on a Redis
--       Cluster the index entry is in another slot: KEYS[3] is absent, and the store has set the
--       entry first (SET NX, which refuses a hash already indexed) and removes it again unless
--       this answers 'ok' (redis-accounts.ts)
-- ARGV: 1 key id, 2 key record (JSON ApiKeyRecord), 3 index entry (JSON {user_id, key_id}),
--       4 most active keys ('' for no limit), 5 now (ISO time, the new key's created_at)
-- Returns 'ok' | 'not_found' | 'conflict' | 'limit'.

if redis.call('EXISTS', KEYS[1]) == 0 then return 'not_found' end
if redis.call('HEXISTS', KEYS[2], ARGV[1]) == 1 or (KEYS[3] and redis.call('EXISTS', KEYS[3]) == 1) then return 'conflict' end
if ARGV[4] ~= '' then
  local most = tonumber(ARGV[4])
  local active = 0
  for _, raw in ipairs(redis.call('HVALS', KEYS[2])) do
    local key = cjson.decode(raw)
    -- Times are all Date.toISOString() text (UTC, same width): their order is their text's.
    -- cjson reads JSON null as cjson.null.
    if key.revoked_at == cjson.null and (key.expires_at == cjson.null or key.expires_at > ARGV[5]) then
      active = active + 1
      if active >= most then return 'limit' end
    end
  end
end
redis.call('HSET', KEYS[2], ARGV[1], ARGV[2])
if KEYS[3] then redis.call('SET', KEYS[3], ARGV[3]) end
return 'ok'
