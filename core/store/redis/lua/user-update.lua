-- Replaces an existing user's spec and the budget fields the ledger's scripts read; never
-- brings back a user deleted in the meantime.
--
-- KEYS: 1 user hash
-- ARGV: 1 spec (JSON UserSpec), 2 budget (micros, '' = unlimited), 3 period ('' | daily | weekly | monthly)
-- Returns the user's created_at, or false when there is no such user.

local created = redis.call('HGET', KEYS[1], 'created_at')
if not created then return false end
redis.call('HSET', KEYS[1], 'spec', ARGV[1], 'budget', ARGV[2], 'period', ARGV[3])
return created
