-- A gateway gives up waiting for a slot: its client went away, or the router's wait ran out
-- without an answer. A request still waiting leaves the queue; one not yet taken from the stream
-- is marked so that the worker that takes it only acknowledges it; one already given a slot is
-- returned, for the gateway to use or release.
--
-- KEYS: waiting, entries, stats, callers, outcomes, expiries (Q.* of the router; the last two
--       unused on one Redis)
-- ARGV: request id, the router's wait (ms, for the retry-after of a request that waited it all),
--       the router's name
-- Returns {'cancelled', retry-after seconds} or {'assigned', provider id} or {'gone', ''}.
local R = {
  waiting = KEYS[1], entries = KEYS[2], stats = KEYS[3], callers = KEYS[4], outcomes = KEYS[5], expiries = KEYS[6],
  name = ARGV[3],
}
local id = ARGV[1]
local now = now_ms()
local packed = redis.call('HGET', R.entries, id)
if packed then
  leave(R, id, cjson.decode(packed))
  remember_outcome(R, id, '-', now)
  return { 'cancelled', tostring(retry_after(R.stats, redis.call('ZCARD', R.waiting), now, tonumber(ARGV[2]))) }
end
redis.call('ZREM', R.waiting, id)
local given = outcome_of(R, id, now)
if given == '-' or given == 'x' then return { 'gone', '' } end
if given then return { 'assigned', given } end
remember_outcome(R, id, '-', now)
return { 'cancelled', tostring(retry_after(R.stats, redis.call('ZCARD', R.waiting), now, tonumber(ARGV[2]))) }
