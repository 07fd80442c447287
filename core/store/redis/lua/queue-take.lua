-- A worker takes the entries it read from a router's stream `router.<model_id>`: each is
-- acknowledged and deleted from the stream, and joins the router's waiting requests, which then
-- get the slots there is room for (queue-common.lua). An entry already taken (a worker that
-- claimed it from one presumed dead) or already given up (by its gateway) is only acknowledged:
-- a duplicate is harmless. With more waiting than the router allows, the newest is refused busy.
--
-- KEYS: stream, waiting, entries, stats (Q.* of the router)
-- ARGV: group; the worker's choice, JSON {providers, strategy, seed, scan, probe};
--       the entries, JSON [{sid, id, gw, ep, pr, mw, ag, mq, ex, st}]: stream id, request id, the
--       gateway's reply channel id, endpoint, priority, longest wait (ms), aging step per
--       priority level (ms), most waiting, excluded provider ids, slot lifetime (ms)
-- Returns {given, waiting, wake, now} (assign()).
local R = { stream = KEYS[1], waiting = KEYS[2], entries = KEYS[3], stats = KEYS[4] }
local group = ARGV[1]
local C = cjson.decode(ARGV[2])
local now = now_ms()

local result = { 0, redis.call('ZCARD', R.waiting), 0, now }
for _, e in ipairs(cjson.decode(ARGV[3])) do
  redis.call('XACK', R.stream, group, e.sid)
  redis.call('XDEL', R.stream, e.sid)
  if redis.call('EXISTS', Q.outcome(e.id)) == 0 and redis.call('HEXISTS', R.entries, e.id) == 0 then
    -- The stream id starts with the Redis time the gateway added the entry at: the wait counts
    -- from there, whichever worker takes it and when.
    local arrived = tonumber(string.match(e.sid, '^(%d+)'))
    local entry = { gw = e.gw, ep = e.ep, deadline = arrived + e.mw, mw = e.mw, st = e.st, ex = e.ex }
    redis.call('HSET', R.entries, e.id, cjson.encode(entry))
    redis.call('ZADD', R.waiting, arrived - e.pr * e.ag, e.id)
    result = assign(R, C, now)
    if redis.call('HEXISTS', R.entries, e.id) == 1 and result[2] > e.mq then
      redis.call('ZREM', R.waiting, e.id)
      redis.call('HDEL', R.entries, e.id)
      refuse(R, e.id, entry, 'busy', now)
      result[2] = result[2] - 1
    end
  end
end
return result
