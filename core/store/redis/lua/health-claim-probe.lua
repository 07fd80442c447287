-- A gateway takes a provider's health checks for `ttl` ms: taken when free, renewed when the
-- gateway holds them already, refused when another does. So one gateway probes each provider
-- at a time while it lives, and another takes over once it stops renewing.
--
-- KEYS: the provider's probe claim (probeKey)
-- ARGV: the gateway's id; ttl (ms)
-- Returns 1 when the gateway holds the claim, 0 when another does.
local holder = redis.call('GET', KEYS[1])
if holder and holder ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return 1
