-- The routing queue's late binding (docs/routing-modes.md, "Engine load"): whether an engine
-- replica has room, from the readings the gateways' scrapes share. Loaded before queue-common.lua,
-- whose provider_states and has_room use it.
--
-- An engine replica's load (a provider passed with eng = {f, n, mw, mkv}): in Q.ENGINE_SIGNALS,
-- field f holds the JSON of its latest reading (redis-engine-signals.ts) and n the requests sent to
-- it since; it is saturated while waiting (plus those sent since) reaches mw or its KV cache's use
-- reaches mkv, as the local placer's engine room judges (gateway/routing/engine/engine-room.ts).

-- The engine's load when it is weighed: a good reading no older than fresh_ms; nil otherwise (no
-- engine, scraping off, the reading stale, failed or unreadable), and the slots alone decide.
local function engine_load(p, now, fresh_ms)
  if not p.eng or not fresh_ms or fresh_ms <= 0 then return nil end
  -- On a cluster the hash is in another slot: the worker read it and passed its two fields (r, s).
  local v = Q.CLUSTER and { p.eng.r, p.eng.s } or redis.call('HMGET', Q.ENGINE_SIGNALS, p.eng.f, p.eng.n)
  if type(v[1]) ~= 'string' then return nil end
  local decoded, reading = pcall(cjson.decode, v[1])
  if not decoded or type(reading) ~= 'table' or reading.ok ~= true or type(reading.at) ~= 'number' then return nil end
  if now - reading.at > fresh_ms then return nil end
  return {
    waiting = tonumber(reading.waiting),
    sent = math.max(0, tonumber(v[2]) or 0),
    kv = tonumber(reading.kvCacheUsage) or 0,
  }
end

local function saturated(s)
  local e = s.engine
  if not e then return false end
  if e.waiting then
    local queued = e.waiting + e.sent
    if (s.eng.mw <= 0 and queued > 0) or (s.eng.mw > 0 and queued >= s.eng.mw) then return true end
  end
  return e.kv >= s.eng.mkv
end
