-- A replica was sent a prompt (the prefix index, redis-prefix-index.ts): each of its block hashes
-- is (re)scored with the time, the set is trimmed to its bound (the least recently sent go first)
-- and its expiry renewed. One key: a replica's sorted set.
--
-- KEYS: 1 the replica's index (tg:pfx:{<replica>})
-- ARGV: 1 now (ms), 2 blocks kept at most, 3 time to live (ms), 4 the chain, its hashes joined by ','
-- Returns nothing.

local members = {}
for hash in string.gmatch(ARGV[4], '[^,]+') do
  members[#members + 1] = ARGV[1]
  members[#members + 1] = hash
end
if #members == 0 then return end
redis.call('ZADD', KEYS[1], unpack(members))
redis.call('ZREMRANGEBYRANK', KEYS[1], 0, -(tonumber(ARGV[2]) + 1))
redis.call('PEXPIRE', KEYS[1], ARGV[3])
