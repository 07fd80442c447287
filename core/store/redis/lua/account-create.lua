-- Creates a user (or a team) unless the id is taken, and lists it in the index, in one step: of
-- two gateways creating the same id at once, exactly one succeeds.
--
-- KEYS: 1 user (or team) hash, 2 users (or teams) index (sorted set); on a Redis Cluster the
--       index is in another slot: KEYS[2] is absent, and the store lists the id itself, first
--       (redis-accounts.ts)
-- ARGV: 1 id, 2 spec (JSON UserSpec or TeamSpec), 3 created_at (ISO), 4 budget (micros, '' = unlimited),
--       5 period ('' | daily | weekly | monthly), 6 alert thresholds ('50,80,100'; '' for none),
--       7 soft ('1' for a budget that only alerts)
-- Returns 1 when created, 0 when the id is taken.

if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
redis.call('HSET', KEYS[1], 'spec', ARGV[2], 'created_at', ARGV[3], 'budget', ARGV[4], 'period', ARGV[5], 'alerts', ARGV[6], 'soft', ARGV[7])
if KEYS[2] then redis.call('ZADD', KEYS[2], 0, ARGV[1]) end
return 1
