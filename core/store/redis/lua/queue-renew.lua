-- A gateway keeps the slots of its requests still running: each one's expiry moves on by the slot
-- lifetime, so a long stream keeps its slot, and a gateway that died loses its slots by itself.
-- A slot already gone (expired, or the provider removed) is not made again.
--
-- KEYS: each slot's provider's slots (Q.slots), one a slot; on a cluster, of one router's providers
-- ARGV: slot lifetime (ms); then each slot's request id, in the order of KEYS
-- Returns how many slots were renewed.
local ttl = tonumber(ARGV[1])
local at = now_ms() + ttl
local renewed = 0
for i, slots in ipairs(KEYS) do
  renewed = renewed + redis.call('ZADD', slots, 'XX', 'CH', at, ARGV[i + 1])
end
return renewed
