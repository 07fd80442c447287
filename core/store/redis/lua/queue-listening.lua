-- On a Redis Cluster, a gateway says it still listens for the answers to its requests to a router
-- (queue-common.lua listening()): until now plus Q.LISTENING_TTL_MS, by Redis's clock. It says so
-- every third of that while it listens, for each router it sent requests to.
--
-- KEYS: gateways (Q.* of the router)
-- ARGV: the gateway's id
return redis.call('HSET', KEYS[1], ARGV[1], now_ms() + Q.LISTENING_TTL_MS)
