-- What became of a request a gateway waits for, asked after its connection to Redis came back
-- (an answer may have been missed): the provider it was given, '-' (it will get none), 'x' (it
-- was dropped while no one listened for it), 'waiting' (for a slot), 'queued' (in the stream,
-- not yet taken), or 'lost' (neither: Redis lost it, restarted empty or flushed).
--
-- KEYS: stream, entries, outcomes, expiries (Q.* of the router; the last two unused on one Redis)
-- ARGV: request id, its stream id
local R = { name = string.sub(KEYS[1], #'router.' + 1), outcomes = KEYS[3], expiries = KEYS[4] }
local given = outcome_of(R, ARGV[1], now_ms())
if given then return given end
if redis.call('HEXISTS', KEYS[2], ARGV[1]) == 1 then return 'waiting' end
if #redis.call('XRANGE', KEYS[1], ARGV[2], ARGV[2]) > 0 then return 'queued' end
return 'lost'
