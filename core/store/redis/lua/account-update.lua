-- Replaces an existing user's (or team's) spec and the budget fields the ledger's scripts read;
-- never brings back one deleted in the meantime.
--
-- KEYS: 1 user (or team) hash
-- ARGV: 1 spec (JSON UserSpec or TeamSpec), 2 budget (micros, '' = unlimited), 3 period ('' | daily | weekly | monthly),
--       4 alert thresholds ('50,80,100'; '' for none), 5 soft ('1' for a budget that only alerts)
-- Returns its created_at, or false when there is none.

local created = redis.call('HGET', KEYS[1], 'created_at')
if not created then return false end
redis.call('HSET', KEYS[1], 'spec', ARGV[1], 'budget', ARGV[2], 'period', ARGV[3], 'alerts', ARGV[4], 'soft', ARGV[5])
return created
