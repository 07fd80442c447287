-- A gateway keeps the slots of its requests still running: each one's expiry moves on by the slot
-- lifetime, so a long stream keeps its slot, and a gateway that died loses its slots by itself.
-- A slot already gone (expired, or the provider removed) is not made again.
--
-- ARGV: slot lifetime (ms); then provider id, request id, pairs
-- Returns how many slots were renewed.
local ttl = tonumber(ARGV[1])
local at = now_ms() + ttl
local renewed = 0
for i = 2, #ARGV, 2 do
  renewed = renewed + redis.call('ZADD', Q.slots(ARGV[i]), 'XX', 'CH', at, ARGV[i + 1])
end
return renewed
