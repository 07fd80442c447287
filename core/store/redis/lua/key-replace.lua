-- Replaces one of a user's key records, only if it is still the one the gateway read (a compare
-- and set: the gateway changes the record in TypeScript, which keeps its JSON as written, and
-- tries again when another change came first), and writes the key's budget hash, which the
-- ledger's scripts read, in the same step.
--
-- KEYS: 1 user's keys hash, 2 the key's budget hash (keys.ts levelKeys); on a Redis Cluster the
--       budget hash is at the user's money home, maybe another slot: absent (ARGV[4] ''), and
--       the store writes it next (redis-accounts.ts)
-- ARGV: 1 key id, 2 the record as read (JSON), 3 the new record (JSON), 4 '1' to write the budget
--       hash ('' to leave it), 5 budget (micros, '' = unlimited), 6 period, 7 alert thresholds, 8 soft
-- Returns 1 when replaced, 0 when the record changed since it was read, false when it is gone.

local raw = redis.call('HGET', KEYS[1], ARGV[1])
if not raw then return false end
if raw ~= ARGV[2] then return 0 end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[3])
if ARGV[4] == '1' then redis.call('HSET', KEYS[2], 'budget', ARGV[5], 'period', ARGV[6], 'alerts', ARGV[7], 'soft', ARGV[8]) end
return 1
