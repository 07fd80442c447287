-- The routing queue's shared steps (docs/routing-modes.md): the fleet-wide state of a router's
-- providers, the choice of one with room, the waiting list and its fair share, and the answers
-- sent to the gateway that waits. Loaded before queue-take.lua, queue-assign.lua and the others,
-- after queue-engine.lua (an engine replica's saturation).
-- Keys are named from the prelude's Q (queue-keys.ts), a provider's fields from its H and M
-- (provider-fields.ts); provider health's writes are health-common.lua's, loaded before this.
--
-- A router's queue, R: R.waiting, a sorted set of request ids scored by when they may go
-- (arrival minus priority times the aging step: a higher priority goes first, a lower one ages
-- forward); R.entries, a hash of request id -> JSON entry {gw, u, ep, pr, deadline, mw, st, ex};
-- R.callers, a hash of caller -> requests waiting, and under R.callers .. ':' .. caller the
-- caller's waiting ids (scored as in R.waiting); R.stats, a hash {last, pace, rs, rt, rr,
-- assigned}: when the last slot was given, what the capped providers can serve (slots per ms),
-- the decayed count of slots given and when it was last brought up to date, the round-robin
-- cursor, the slots given in all.
-- A provider: Q.slots(router, id), a sorted set of request ids holding a slot, scored by expiry
-- (ms); Q.metrics(router, id), a hash the gateways write as requests end (queue-release.lua),
-- whose health fields (H.*) every gateway's breakers and health checks write too.
--
-- The take and assign scripts are given the router's keys, then each provider's slots and metrics
-- in the order of the worker's choice (queue-keys.ts routerScriptKeys): router_keys() reads them.
-- On one Redis a request's outcome is a key of its own (Q.outcome), and so is each caller's set of
-- waiting ids; on a cluster, where a script touches only the keys it is given (a key it named on
-- the way could not be redirected while its slot moves), outcomes are a hash of the router with
-- their expiries beside it, and a caller's last waiting request is found in the waiting list.

-- The router's queue from the script's KEYS: stream, waiting, entries, stats, callers, gateways,
-- outcomes, expiries (the last two unused on one Redis).
local function router_keys()
  return {
    name = string.sub(KEYS[1], #'router.' + 1),
    stream = KEYS[1], waiting = KEYS[2], entries = KEYS[3], stats = KEYS[4], callers = KEYS[5], gateways = KEYS[6],
    outcomes = KEYS[7], expiries = KEYS[8],
    -- On a cluster, the engine fields the pass counted a request toward (the worker adds them).
    sent = {},
  }
end

-- What became of request `id` (the provider given, '-' or 'x'), or nil: remembered Q.OUTCOME_TTL_MS.
local function outcome_of(R, id, now)
  if not Q.CLUSTER then return redis.call('GET', Q.outcome(R.name, id)) or nil end
  local until_ms = tonumber(redis.call('ZSCORE', R.expiries, id))
  if not until_ms or until_ms <= now then return nil end
  return redis.call('HGET', R.outcomes, id) or nil
end

local function remember_outcome(R, id, value, now)
  if not Q.CLUSTER then
    redis.call('SET', Q.outcome(R.name, id), value, 'PX', Q.OUTCOME_TTL_MS)
    return
  end
  redis.call('HSET', R.outcomes, id, value)
  redis.call('ZADD', R.expiries, now + Q.OUTCOME_TTL_MS, id)
  -- Forgets a few past their time with each one remembered: the hash stays as large as ten minutes' requests.
  local past = redis.call('ZRANGEBYSCORE', R.expiries, '-inf', now, 'LIMIT', 0, 20)
  if #past > 0 then
    redis.call('HDEL', R.outcomes, unpack(past))
    redis.call('ZREM', R.expiries, unpack(past))
  end
end

local function now_ms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end

local function clamp(value, low, high)
  return math.max(low, math.min(high, value))
end

-- A small generator seeded by the worker, so that each choice of a script call differs.
local function random_from(seed)
  local state = seed % 2147483647
  if state <= 0 then state = state + 2147483646 end
  return function()
    state = (state * 48271) % 2147483647
    return (state - 1) / 2147483646
  end
end

-- The router's providers as the worker passed them ({id, cap, eps}: cap -1 is unlimited, eps the
-- endpoints it serves as ",chat,completions,"), with their live state: slots in use (expired ones
-- dropped), cool-down end (an open circuit breaker's too) and whether a probe may go through it
-- now, health check verdict and moving averages.
local function provider_states(providers, now, fresh_ms)
  local states = {}
  for i, p in ipairs(providers) do
    local slots, metrics = KEYS[7 + 2 * i], KEYS[8 + 2 * i]
    redis.call('ZREMRANGEBYSCORE', slots, '-inf', now)
    local m = redis.call('HMGET', metrics, H.COOL_UNTIL, M.TTFT_MS, M.ANSWERS, H.DOWN, H.PROBE_AT, M.LATENCY_MS)
    local cool = tonumber(m[1]) or 0
    states[i] = {
      id = p.id,
      sk = slots,
      mk = metrics,
      cap = p.cap,
      eps = p.eps,
      used = redis.call('ZCARD', slots),
      cool = cool,
      -- While it cools down, one request every H.PROBE_EVERY_MS, fleet-wide, goes as a probe.
      probe = health_probe_due(cool, m[5], now),
      ttft = tonumber(m[2]) or 0,
      latency = tonumber(m[6]),
      n = tonumber(m[3]) or 0,
      down = m[4] == '1',
      eng = p.eng,
      engine = engine_load(p, now, fresh_ms),
    }
  end
  return states
end

-- Room: not cooling (or a probe due), not down, a slot free, and its engine not saturated.
local function has_room(s, now)
  return (s.cool <= now or s.probe) and not s.down and (s.cap < 0 or s.used < s.cap) and not saturated(s)
end

local function any_room(states, now)
  for _, s in ipairs(states) do
    if has_room(s, now) then return true end
  end
  return false
end

local function serves(s, entry)
  if not string.find(s.eps, ',' .. entry.ep .. ',', 1, true) then return false end
  for _, id in ipairs(entry.ex) do
    if id == s.id then return false end
  end
  return true
end

-- Among the providers with room that may take the entry, the strategy's choice.
local function choose(states, entry, strategy, random, stats_key, probe_share, now)
  local eligible = {}
  for _, s in ipairs(states) do
    if has_room(s, now) and serves(s, entry) then eligible[#eligible + 1] = s end
  end
  if #eligible == 0 then return nil end
  if #eligible == 1 then return eligible[1] end
  if strategy == 'round_robin' then
    local turn = redis.call('HINCRBY', stats_key, 'rr', 1)
    -- In turn over all the router's providers; one that cannot take it now is skipped.
    for step = 0, #states - 1 do
      local s = states[(turn + step) % #states + 1]
      for _, e in ipairs(eligible) do
        if e == s then return s end
      end
    end
    return eligible[1]
  elseif strategy == 'least_busy' then
    -- Fewest slots in use relative to capacity (an unlimited provider counts its slots against a
    -- million); ties at random.
    local best, best_load, ties = {}, math.huge, 0
    for _, s in ipairs(eligible) do
      local load = s.used / (s.cap < 0 and 1000000 or s.cap)
      if load < best_load then best, best_load, ties = { s }, load, 1
      elseif load == best_load then ties = ties + 1; best[ties] = s end
    end
    return best[math.floor(random() * ties) + 1]
  elseif strategy == 'lowest_latency' then
    -- A share of probes keeps the slower providers measured, so a recovered one is noticed; a
    -- provider never measured is tried first. Providers about as fast as the fastest (within a
    -- quarter, plus 5 ms) share the traffic, least busy first: an equal one is not left idle.
    if random() < probe_share then return eligible[math.floor(random() * #eligible) + 1] end
    local fastest = math.huge
    for _, s in ipairs(eligible) do
      if s.n == 0 then return s end
      if s.ttft < fastest then fastest = s.ttft end
    end
    local best, best_load, ties = {}, math.huge, 0
    for _, s in ipairs(eligible) do
      if s.ttft <= fastest * 1.25 + 5 then
        local load = s.used / (s.cap < 0 and 1000000 or s.cap)
        if load < best_load then best, best_load, ties = { s }, load, 1
        elseif load == best_load then ties = ties + 1; best[ties] = s end
      end
    end
    return best[math.floor(random() * ties) + 1]
  end
  return eligible[math.floor(random() * #eligible) + 1]
end

-- Sends an answer to the gateway process waiting for it; returns how many heard it (0: no
-- gateway listens on that channel any more, it died).
local function reply(gw, id, status, detail)
  return redis.call('PUBLISH', Q.reply(gw), id .. '|' .. status .. '|' .. detail)
end

-- Whether gateway `gw` still listens for its answers (its reply channel has a subscriber),
-- remembered in `known` for the rest of the step. On a cluster PUBSUB NUMSUB counts the node's
-- subscribers only: the gateway's own word in R.gateways (until when it listens) tells instead,
-- and a word run out is forgotten.
local function listening(R, gw, known, now)
  local heard = known[gw]
  if heard == nil then
    if Q.CLUSTER then
      local till = tonumber(redis.call('HGET', R.gateways, gw)) or 0
      heard = till > now
      if not heard and till > 0 then redis.call('HDEL', R.gateways, gw) end
    else
      heard = redis.call('PUBSUB', 'NUMSUB', Q.reply(gw))[2] > 0
    end
    known[gw] = heard
  end
  return heard
end

-- The entries of the waiting list: each joins and leaves counted per caller (the fair share), and
-- on one Redis kept in its caller's set too.
local function caller_set(R, caller)
  return R.callers .. ':' .. caller
end

local function join(R, id, entry, score)
  redis.call('HSET', R.entries, id, cjson.encode(entry))
  redis.call('ZADD', R.waiting, score, id)
  if not Q.CLUSTER then redis.call('ZADD', caller_set(R, entry.u or ''), score, id) end
  redis.call('HINCRBY', R.callers, entry.u or '', 1)
end

local function leave(R, id, entry)
  redis.call('ZREM', R.waiting, id)
  redis.call('HDEL', R.entries, id)
  if entry then
    if not Q.CLUSTER then redis.call('ZREM', caller_set(R, entry.u or ''), id) end
    if redis.call('HINCRBY', R.callers, entry.u or '', -1) <= 0 then redis.call('HDEL', R.callers, entry.u or '') end
  end
end

-- The caller's waiting request served last: from its set on one Redis; on a cluster, the last of
-- the waiting list that is the caller's (the caller with the most waiting: near the end).
local function last_of_caller(R, caller)
  if not Q.CLUSTER then return redis.call('ZRANGE', caller_set(R, caller), -1, -1)[1] end
  local from = 0
  while true do
    local ids = redis.call('ZRANGE', R.waiting, -(from + 50), -(from + 1))
    if #ids == 0 then return nil end
    for i = #ids, 1, -1 do
      local packed = redis.call('HGET', R.entries, ids[i])
      if packed and (cjson.decode(packed).u or '') == caller then return ids[i] end
    end
    from = from + 50
  end
end

-- The pace of the queue, in slots per ms. While the router's providers are capped and measured,
-- what they can serve: each one's slots over its moving average latency (a batch of slots given at
-- once says nothing of the pace, the time a slot is held does); the last pass wrote it (`pace`).
-- Otherwise the slots given lately, each weighing less with its age (a time constant of
-- Q.RATE_TAU_MS), read at `at`: the last slot's time for the pace while the queue flowed, or now,
-- slower the longer no slot was given (a queue that stopped draining). nil before any was given.
local function pace_of(stats_key, at)
  local st = redis.call('HMGET', stats_key, 'pace', 'rs', 'rt')
  local pace, rs, rt = tonumber(st[1]), tonumber(st[2]), tonumber(st[3])
  if pace and pace > 0 then return pace end
  if not rs or not rt then return nil end
  return rs * math.exp(-math.max(0, at - rt) / Q.RATE_TAU_MS) / Q.RATE_TAU_MS
end

-- What the capped providers that take requests now can serve, in slots per ms; nil when one is
-- unlimited or not yet measured (the slots given then tell the pace).
local function capacity_pace(states, now)
  local pace = 0
  for _, s in ipairs(states) do
    if not s.down and s.cap ~= 0 then
      -- An engine's load, not its cap, says when it takes more: the pace measured then tells.
      if s.engine or s.cap < 0 or not s.latency or s.latency <= 0 then return nil end
      if s.cool <= now then pace = pace + s.cap / s.latency end
    end
  end
  return pace > 0 and pace or nil
end

-- When to come back, in seconds, for a request with `depth` requests ahead. `resume_ms` (when
-- known) is how long until a provider comes back from cooling down, when every one cools: the
-- queue will then flow again at the pace it had. Before any slot was ever given, the router's wait.
local function retry_after(stats_key, depth, now, max_wait_ms, resume_ms)
  local ms = max_wait_ms
  if resume_ms and resume_ms > 0 then
    local last = tonumber(redis.call('HGET', stats_key, 'rt')) or now
    local pace = pace_of(stats_key, last)
    ms = resume_ms + (pace and (depth + 1) / pace or 0)
  else
    local pace = pace_of(stats_key, now)
    if pace then ms = (depth + 1) / pace end
  end
  return clamp(math.ceil(ms / 1000), 1, 3600)
end

-- How long until a provider that serves anything comes back from its cool-down (or may take a
-- probe), when every provider with room but for that is cooling; 0 otherwise.
local function resume_in(states, now)
  local soonest = nil
  for _, s in ipairs(states) do
    if not s.down and s.cap ~= 0 then
      if s.cool <= now or s.probe then return 0 end
      local probe_at = tonumber(redis.call('HGET', s.mk, H.PROBE_AT)) or 0
      local back = math.min(s.cool, math.max(probe_at, now))
      if soonest == nil or back < soonest then soonest = back end
    end
  end
  return soonest and (soonest - now) or 0
end

-- Tells the gateway its request will not get a slot, and remembers that for a late duplicate.
local function refuse(R, id, entry, status, now, states)
  local seconds = 0
  if status == 'busy' then
    seconds = retry_after(R.stats, redis.call('ZCARD', R.waiting), now, entry.mw, states and resume_in(states, now))
  end
  remember_outcome(R, id, '-', now)
  reply(entry.gw, id, status, tostring(seconds))
end

-- A slot given: its pace counted (retry_after), and the gateway told. A gateway that no longer
-- listens gets none: the slot is taken back at once, and the request is marked dropped.
local function give_slot(R, id, entry, s, now)
  -- The slot lives as long as the gateway that waits for it renews it (entry.st, its setting).
  redis.call('ZADD', s.sk, now + entry.st, id)
  -- On a cluster the answer's count says only whether a subscriber is on this node: listening() told.
  if reply(entry.gw, id, 'ok', s.id) == 0 and not Q.CLUSTER then
    redis.call('ZREM', s.sk, id)
    remember_outcome(R, id, 'x', now)
    return false
  end
  s.used = s.used + 1
  if s.engine then
    -- Counted into the engine's queue until its next reading, for this pass's next choice and
    -- every gateway's (on a cluster by the worker, right after: the hash is in another slot).
    if Q.CLUSTER then R.sent[#R.sent + 1] = s.eng.n else redis.call('HINCRBY', Q.ENGINE_SIGNALS, s.eng.n, 1) end
    s.engine.sent = s.engine.sent + 1
  end
  if s.cool > now then
    -- A probe of a cooling provider: its answer, if good, ends the cool-down (queue-release.lua).
    health_probe_given(s.mk, id, now)
    s.probe = false
  end
  remember_outcome(R, id, s.id, now)
  local st = redis.call('HMGET', R.stats, 'rs', 'rt')
  local rs, rt = tonumber(st[1]) or 0, tonumber(st[2]) or now
  redis.call('HSET', R.stats, 'rs', rs * math.exp(-math.max(0, now - rt) / Q.RATE_TAU_MS) + 1, 'rt', now, 'last', now)
  redis.call('HINCRBY', R.stats, 'assigned', 1)
  return true
end

-- Gives slots to waiting requests, best first, while providers have room. An entry past its
-- deadline is refused; one that no provider of the router can ever take (all excluded, closed
-- or not serving its endpoint) is answered `none`; one whose gateway no longer listens (it died)
-- is dropped, so that it neither keeps a slot nobody uses nor holds a place in the list. Returns
-- {given, waiting, wake, now}: wake is when something that could let a waiting request go happens
-- by itself (a cool-down ending or a probe due, a slot expiring, a saturated engine's next
-- reading, a deadline), in ms, or 0; and
-- the script's now (ms), for the worker to time that.
-- A traced request's answer, for the worker's span (TracedAnswer): appended flat to `traced`.
local function note_traced(traced, id, entry, outcome, provider, now)
  if traced and entry.tp then
    local n = #traced
    traced[n + 1] = id
    traced[n + 2] = entry.tp
    traced[n + 3] = outcome
    traced[n + 4] = provider
    traced[n + 5] = now - (entry.deadline - entry.mw)
  end
end

local function assign(R, C, now, traced)
  local states = provider_states(C.providers, now, C.engineFreshMs)
  local pace = capacity_pace(states, now)
  if pace then redis.call('HSET', R.stats, 'pace', pace) else redis.call('HDEL', R.stats, 'pace') end
  local random = random_from(C.seed)
  local known = {}
  local given = 0
  if any_room(states, now) then
    local ids = redis.call('ZRANGE', R.waiting, 0, C.scan - 1)
    for _, id in ipairs(ids) do
      local packed = redis.call('HGET', R.entries, id)
      if not packed then
        redis.call('ZREM', R.waiting, id)
      else
        local entry = cjson.decode(packed)
        if not listening(R, entry.gw, known, now) then
          leave(R, id, entry)
          remember_outcome(R, id, 'x', now)
        else
          local s = nil
          if entry.deadline > now then s = choose(states, entry, C.strategy, random, R.stats, C.probe, now) end
          local verdict = nil
          if s then
            verdict = 'ok'
          elseif entry.deadline <= now then
            verdict = 'busy'
          else
            verdict = 'none'
            for _, p in ipairs(states) do
              if p.cap ~= 0 and serves(p, entry) then verdict = nil end
            end
          end
          if verdict then
            leave(R, id, entry)
            if verdict == 'ok' then
              if give_slot(R, id, entry, s, now) then
                given = given + 1
                note_traced(traced, id, entry, 'ok', s.id, now)
              end
            else
              refuse(R, id, entry, verdict, now, states)
              note_traced(traced, id, entry, verdict, '', now)
            end
          end
        end
        if not any_room(states, now) then break end
      end
    end
  end
  local waiting = redis.call('ZCARD', R.waiting)
  local wake = 0
  if waiting > 0 then
    for _, s in ipairs(states) do
      local at = 0
      if s.cool > now then
        at = s.cool
        local probe_at = tonumber(redis.call('HGET', s.mk, H.PROBE_AT)) or 0
        if probe_at > now and probe_at < at then at = probe_at end
      elseif s.cap > 0 and s.used >= s.cap then
        local first = redis.call('ZRANGE', s.sk, 0, 0, 'WITHSCORES')
        if first[2] then at = tonumber(first[2]) end
      elseif saturated(s) and (C.engineRecheckMs or 0) > 0 then
        -- Late binding: a saturated engine frees no slot; its next reading may say it has room.
        at = now + C.engineRecheckMs
      end
      if at > 0 and (wake == 0 or at < wake) then wake = at end
    end
    local head = redis.call('ZRANGE', R.waiting, 0, 0)
    if head[1] then
      local packed = redis.call('HGET', R.entries, head[1])
      if packed then
        local deadline = cjson.decode(packed).deadline
        if wake == 0 or deadline < wake then wake = deadline end
      end
    end
  end
  return { given, waiting, wake, now, traced or {}, R.sent }
end

-- With more waiting than the router allows, one request is refused busy: the one that would be
-- served last (so a higher priority, or a longer wait, keeps its place), unless the newcomer's
-- caller has fewer waiting than the caller with the most: then that caller's request served last
-- gives its place, when its priority is no higher than the newcomer's. So one caller filling the
-- list never locks the others out, and a lone caller may still use all of it. Returns the id
-- refused.
local function make_room(R, id, entry, now, states)
  local victim = redis.call('ZRANGE', R.waiting, -1, -1)[1]
  local counts = redis.call('HGETALL', R.callers)
  local heaviest, most_held = nil, 0
  for i = 1, #counts, 2 do
    local held = tonumber(counts[i + 1])
    if held > most_held then heaviest, most_held = counts[i], held end
  end
  local caller = entry.u or ''
  local mine = tonumber(redis.call('HGET', R.callers, caller)) or 0
  if heaviest and heaviest ~= caller and most_held > mine then
    local theirs = last_of_caller(R, heaviest)
    local packed = theirs and redis.call('HGET', R.entries, theirs)
    if packed and (cjson.decode(packed).pr or 0) <= (entry.pr or 0) then victim = theirs end
  end
  local packed = redis.call('HGET', R.entries, victim)
  local refused = packed and cjson.decode(packed) or entry
  leave(R, victim, refused)
  refuse(R, victim, refused, 'busy', now, states)
  return victim
end
