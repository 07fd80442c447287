-- A worker gives free slots to a router's waiting requests: woken by a release, or at the time
-- the last pass said something would change by itself (queue-common.lua).
--
-- KEYS: stream, waiting, entries, stats, callers (Q.* of the router)
-- ARGV: the worker's choice, JSON {providers, strategy, seed, scan, probe, engineFreshMs, engineRecheckMs}
-- Returns {given, waiting, wake, now, traced} (assign()): traced flat, 5 fields an answer to a
-- traced request (id, traceparent, outcome, provider, waited ms).
local R = { stream = KEYS[1], waiting = KEYS[2], entries = KEYS[3], stats = KEYS[4], callers = KEYS[5] }
return assign(R, cjson.decode(ARGV[1]), now_ms(), {})
