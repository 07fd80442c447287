-- How many of a prompt's leading blocks one replica was sent lately (the prefix index,
-- redis-prefix-index.ts): the chain's hashes are looked up in order until one is missing or older
-- than the index keeps, and only that count comes back. One key: a replica's sorted set.
--
-- KEYS: 1 the replica's index (tg:pfx:{<replica>}: block hash -> when it was last sent, ms)
-- ARGV: 1 oldest time that counts (ms), 2 the chain, its hashes joined by ','
-- Returns the number of leading blocks held.

local since = tonumber(ARGV[1])
local held = 0
for hash in string.gmatch(ARGV[2], '[^,]+') do
  local sent = redis.call('ZSCORE', KEYS[1], hash)
  if not sent or tonumber(sent) <= since then break end
  held = held + 1
end
return held
