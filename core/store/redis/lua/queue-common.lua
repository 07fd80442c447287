-- The routing queue's shared steps (docs/routing-modes.md): the fleet-wide state of a router's
-- providers, the choice of one with room, and the answers sent to the gateway that waits. Loaded
-- before queue-take.lua and queue-assign.lua. Keys are named from the prelude's Q (queue-keys.ts).
--
-- A router's queue: Q.waiting(router), a sorted set of request ids scored by when they may go
-- (arrival minus priority times the aging step: a higher priority goes first, a lower one ages
-- forward); Q.entries(router), a hash of request id -> JSON entry {gw, ep, deadline, ex}; and
-- Q.stats(router), a hash {last, iv, rr, assigned}: when the last slot was given, the moving
-- average interval between two (ms), the round-robin cursor, the slots given in all.
-- A provider: Q.slots(id), a sorted set of request ids holding a slot, scored by expiry (ms);
-- Q.metrics(id), a hash the gateways write as requests end (queue-release.lua).

local function now_ms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
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
-- dropped), cool-down end (an open circuit breaker's too), health check verdict and moving averages.
local function provider_states(providers, now)
  local states = {}
  for i, p in ipairs(providers) do
    local slots = Q.slots(p.id)
    redis.call('ZREMRANGEBYSCORE', slots, '-inf', now)
    local m = redis.call('HMGET', Q.metrics(p.id), 'cool', 'ttft', 'n', 'down')
    states[i] = {
      id = p.id,
      cap = p.cap,
      eps = p.eps,
      used = redis.call('ZCARD', slots),
      cool = tonumber(m[1]) or 0,
      ttft = tonumber(m[2]) or 0,
      n = tonumber(m[3]) or 0,
      down = m[4] == '1',
    }
  end
  return states
end

local function has_room(s, now)
  return s.cool <= now and not s.down and (s.cap < 0 or s.used < s.cap)
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

local function reply(gw, id, status, detail)
  redis.call('PUBLISH', Q.reply(gw), id .. '|' .. status .. '|' .. detail)
end

-- When to come back, in seconds: the requests ahead times the moving interval between two slots
-- given (or the time since the last one, when that is longer: a queue that stopped draining);
-- before any slot was ever given, the router's wait.
local function retry_after(stats_key, depth, now, max_wait_ms)
  local st = redis.call('HMGET', stats_key, 'last', 'iv')
  local last, iv = tonumber(st[1]), tonumber(st[2])
  local ms = max_wait_ms
  if last and iv then ms = (depth + 1) * math.max(iv, now - last) end
  return math.max(1, math.min(3600, math.ceil(ms / 1000)))
end

-- Tells the gateway its request will not get a slot, and remembers that for a late duplicate.
local function refuse(R, id, entry, status, now)
  local seconds = 0
  if status == 'busy' then seconds = retry_after(R.stats, redis.call('ZCARD', R.waiting), now, entry.mw) end
  redis.call('SET', Q.outcome(id), '-', 'PX', Q.OUTCOME_TTL_MS)
  reply(entry.gw, id, status, tostring(seconds))
end

local function give_slot(R, id, entry, s, now)
  -- The slot lives as long as the gateway that waits for it renews it (entry.st, its setting).
  redis.call('ZADD', Q.slots(s.id), now + entry.st, id)
  s.used = s.used + 1
  redis.call('SET', Q.outcome(id), s.id, 'PX', Q.OUTCOME_TTL_MS)
  local last = tonumber(redis.call('HGET', R.stats, 'last'))
  if last then
    local iv = tonumber(redis.call('HGET', R.stats, 'iv'))
    local gap = now - last
    redis.call('HSET', R.stats, 'iv', iv and (iv * 0.9 + gap * 0.1) or gap)
  end
  redis.call('HSET', R.stats, 'last', now)
  redis.call('HINCRBY', R.stats, 'assigned', 1)
  reply(entry.gw, id, 'ok', s.id)
end

-- Gives slots to waiting requests, best first, while providers have room. An entry past its
-- deadline is refused; one that no provider of the router can ever take (all excluded, closed
-- or not serving its endpoint) is answered `none`. Returns {given, waiting, wake, now}: wake is when
-- something that could let a waiting request go happens by itself (a cool-down ending, a slot
-- expiring, a deadline), in ms, or 0; and the script's now (ms), for the worker to time that.
local function assign(R, C, now)
  local states = provider_states(C.providers, now)
  local random = random_from(C.seed)
  local given = 0
  if any_room(states, now) then
    local ids = redis.call('ZRANGE', R.waiting, 0, C.scan - 1)
    for _, id in ipairs(ids) do
      local packed = redis.call('HGET', R.entries, id)
      if not packed then
        redis.call('ZREM', R.waiting, id)
      else
        local entry = cjson.decode(packed)
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
          redis.call('ZREM', R.waiting, id)
          redis.call('HDEL', R.entries, id)
          if verdict == 'ok' then
            give_slot(R, id, entry, s, now)
            given = given + 1
          else
            refuse(R, id, entry, verdict, now)
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
      if s.cool > now then at = s.cool
      elseif s.cap > 0 and s.used >= s.cap then
        local first = redis.call('ZRANGE', Q.slots(s.id), 0, 0, 'WITHSCORES')
        if first[2] then at = tonumber(first[2]) end
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
  return { given, waiting, wake, now }
end
