-- A gateway opened a provider's circuit breaker: every gateway and the router workers keep
-- requests off it until `until` (a cool-down already longer stays), and the other gateways hear
-- of it at once on H.CHANNEL, to open theirs until the same time.
--
-- KEYS: the provider's hash (Q.metrics)
-- ARGV: provider id; until (ms since the epoch); reason
health_open(KEYS[1], ARGV[2], ARGV[3])
redis.call('PUBLISH', H.CHANNEL, ARGV[1] .. '|open|' .. ARGV[2] .. '|' .. ARGV[3])
