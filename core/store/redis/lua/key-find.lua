-- Finds an API key by the hash of its secret, with its user and the user's team, in one round trip.
--
-- This script reads keys it computes from the index entry (the user's hash and keys hash, the
-- team's hash), not only the keys it is given: it needs every key on one Redis server, so it does
-- not run on a Redis Cluster. The key names are built from the templates of keys.ts passed as
-- arguments.
--
-- KEYS: 1 API key index entry (tg:apikey:<hash>)
-- ARGV: 1-2 prefix and suffix of a user hash's name, 3-4 prefix and suffix of a user's keys hash,
--       5-6 prefix and suffix of a team hash
-- Returns {key record JSON, spec JSON, created_at[, team spec JSON, team created_at]}, or false
-- when the hash, key or user is gone. The team comes when the user has one that exists.

local raw = redis.call('GET', KEYS[1])
if not raw then return false end
local ref = cjson.decode(raw)
local key = redis.call('HGET', ARGV[3] .. ref.user_id .. ARGV[4], ref.key_id)
if not key then return false end
local user = redis.call('HMGET', ARGV[1] .. ref.user_id .. ARGV[2], 'spec', 'created_at')
if not user[1] then return false end
-- Only users in a team pay for decoding their spec: the field is looked for in the text first.
if string.find(user[1], '"team":"', 1, true) then
  local team_id = cjson.decode(user[1]).team
  if type(team_id) == 'string' then
    local team = redis.call('HMGET', ARGV[5] .. team_id .. ARGV[6], 'spec', 'created_at')
    if team[1] then return { key, user[1], user[2], team[1], team[2] } end
  end
end
return { key, user[1], user[2] }
