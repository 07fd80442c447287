-- A worker takes the entries it read from a router's stream `router.<model_id>`: each is
-- acknowledged and deleted from the stream, and joins the router's waiting requests, which then
-- get the slots there is room for (queue-common.lua). An entry already taken (a worker that
-- claimed it from one presumed dead) or already given up (by its gateway) is only acknowledged:
-- a duplicate is harmless; so is one whose gateway no longer listens (it died). With more waiting
-- than the router allows, one is refused busy (make_room: the one served last, or the place of
-- the caller with the most waiting).
--
-- An entry is anyone's who can write to Redis: its numbers are bounded here (priority, the wait,
-- the aging step, the slot lifetime), so no entry makes a slot that never expires.
--
-- KEYS: stream, waiting, entries, stats, callers, gateways, outcomes, expiries (Q.* of the router;
--       queue-keys.ts routerScriptKeys); then each
--       provider's slots and metrics, in the order of the choice's providers
-- ARGV: group; the worker's choice, JSON {providers, strategy, seed, scan, probe, engineFreshMs, engineRecheckMs};
--       the entries, JSON [{sid, id, gw, u, ep, pr, mw, ag, mq, ex, st}]: stream id, request id,
--       the gateway's reply channel id, caller, endpoint, priority, longest wait (ms), aging step
--       per priority level (ms), most waiting, excluded provider ids, slot lifetime (ms), and
--       when the request is traced its traceparent (tp)
-- Returns {given, waiting, wake, now, traced, sent} (assign()).
local R = router_keys()
local group = ARGV[1]
local C = cjson.decode(ARGV[2])
local now = now_ms()
local known = {}
local traced = {}

local result = { 0, redis.call('ZCARD', R.waiting), 0, now }
for _, e in ipairs(cjson.decode(ARGV[3])) do
  redis.call('XACK', R.stream, group, e.sid)
  redis.call('XDEL', R.stream, e.sid)
  if not outcome_of(R, e.id, now) and redis.call('HEXISTS', R.entries, e.id) == 0 then
    if not listening(R, e.gw, known, now) then
      remember_outcome(R, e.id, 'x', now)
    else
      -- The stream id starts with the Redis time the gateway added the entry at: the wait counts
      -- from there, whichever worker takes it and when.
      local arrived = tonumber(string.match(e.sid, '^(%d+)'))
      local mw = clamp(e.mw, 1, Q.MAX_WAIT_MS)
      local pr = clamp(e.pr, Q.MIN_PRIORITY, Q.MAX_PRIORITY)
      local entry = {
        gw = e.gw,
        u = e.u or '',
        ep = e.ep,
        pr = pr,
        deadline = arrived + mw,
        mw = mw,
        st = clamp(e.st, 1, Q.MAX_SLOT_TTL_MS),
        ex = e.ex,
      }
      -- A W3C traceparent is 55 characters: anything else is not kept.
      if type(e.tp) == 'string' and #e.tp == 55 then entry.tp = e.tp end
      join(R, e.id, entry, arrived - pr * clamp(e.ag, 0, Q.MAX_AGING_MS))
      result = assign(R, C, now, traced)
      if redis.call('HEXISTS', R.entries, e.id) == 1 and result[2] > e.mq then
        make_room(R, e.id, entry, now, provider_states(C.providers, now, C.engineFreshMs))
        result[2] = result[2] - 1
      end
    end
  end
end
result[5] = traced
return result
