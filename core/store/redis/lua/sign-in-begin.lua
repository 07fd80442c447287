-- Counts a sign-in under way if its bounds allow (redis-sign-ins.ts). The sign-ins under way, in
-- all and from one client, are sorted sets of state hashes scored by when they end: the ended ones
-- are dropped first (ZREMRANGEBYSCORE's work is the entries dropped, never the live ones), then the
-- rest counted. Both keys share the hash tag {sign-ins}: one slot on a Redis Cluster.
-- KEYS: 1 every sign-in under way; 2 its client's. ARGV: 1 now, ms; 2 when it ends, ms; 3 its
-- state's hash; 4 the bound in all; 5 the bound per client; 6 its time to live, ms.
-- Returns 'begun', 'too_many' or 'too_many_from_client'.
local now, ends = tonumber(ARGV[1]), tonumber(ARGV[2])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now)
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[4]) then return 'too_many' end
if redis.call('ZCARD', KEYS[2]) >= tonumber(ARGV[5]) then return 'too_many_from_client' end
redis.call('ZADD', KEYS[1], ends, ARGV[3])
redis.call('ZADD', KEYS[2], ends, ARGV[3])
-- Every sign-in lives the same time: each set ends with the one added last.
redis.call('PEXPIRE', KEYS[1], ARGV[6])
redis.call('PEXPIRE', KEYS[2], ARGV[6])
return 'begun'
