-- A worker gives free slots to a router's waiting requests: woken by a release, or at the time
-- the last pass said something would change by itself (queue-common.lua).
--
-- KEYS: stream, waiting, entries, stats, callers, gateways, outcomes, expiries (Q.* of the router;
--       queue-keys.ts routerScriptKeys); then each
--       provider's slots and metrics, in the order of the choice's providers
-- ARGV: the worker's choice, JSON {providers, strategy, seed, scan, probe, engineFreshMs, engineRecheckMs}
-- Returns {given, waiting, wake, now, traced, sent} (assign()): traced flat, 5 fields an answer to
-- a traced request (id, traceparent, outcome, provider, waited ms); sent, on a cluster, the engine
-- fields to count a request toward (one per request).
local R = router_keys()
return assign(R, cjson.decode(ARGV[1]), now_ms(), {})
