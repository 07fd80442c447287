-- Admits a batch of requests, each as one step, in order: rolls the user's budget period
-- forward, releases holds of requests that never settled, checks every rate-limit window and the
-- budget, and only when all pass takes the request's rate-limit share and holds its worst-case
-- cost. The gateway gathers the admissions of one turn of its event loop into one call.
--
-- KEYS: for each admission: 1 user hash, 2 ledger hash, 3 holds zset, 4 history hash,
--       5 rate-limit hash
-- ARGV: for each admission: 1 now (ms); 2-4 day, week and month period indices; 5 hold id ('' for none);
--       6 hold micros; 7 hold ttl (ms); 8 tokens counted now;
--       9-12 limits: requests/min, requests/day, tokens/min, tokens/day ('' when not limited)
-- Returns for each admission {'unknown_user'} | {'budget', remaining}
--       | {'rate', limit, retryAfterMs, statuses...} | {'ok', statuses...};
--       statuses are flat (name, limit, remaining, resetMs) groups.

local function admit_one(K, A)
  local now = tonumber(A[1])

  local known, budget = roll_period(K, A)
  if not known then return {'unknown_user'} end

  -- Holds of requests that never settled (a gateway that died) expire and are released.
  local stale = redis.call('ZRANGEBYSCORE', K[3], '-inf', now)
  if #stale > 0 then
    local released = 0
    for _, member in ipairs(stale) do released = released + tonumber(string.match(member, '|(%d+)$')) end
    redis.call('ZREMRANGEBYSCORE', K[3], '-inf', now)
    redis.call('HINCRBY', K[2], 'reserved', -released)
  end

  -- Sliding-window counters: the previous window's count, weighted by how much of it still
  -- overlaps the last W milliseconds, plus the current window's count.
  local LIMITS = {
    { name = 'requests_per_minute', field = 'rpm', window = 60000, arg = 9, unit = 'requests' },
    { name = 'requests_per_day', field = 'rpd', window = 86400000, arg = 10, unit = 'requests' },
    { name = 'tokens_per_minute', field = 'tpm', window = 60000, arg = 11, unit = 'tokens' },
    { name = 'tokens_per_day', field = 'tpd', window = 86400000, arg = 12, unit = 'tokens' },
  }
  local tokens = tonumber(A[8])
  local windows = {}
  for _, l in ipairs(LIMITS) do
    if A[l.arg] ~= '' then
      local limit = tonumber(A[l.arg])
      local w = l.window
      local start, cur, prev = roll_window(K[5], l.field, w, now)
      local elapsed = now - start
      local used = prev * (w - elapsed) / w + cur
      local cost = l.unit == 'requests' and 1 or tokens
      local retry = 0
      if used + cost > limit then
        if cost > limit then retry = w
        elseif cur + cost <= limit then retry = math.ceil(w - elapsed - (limit - cur - cost) * w / prev)
        else retry = math.ceil((w - elapsed) + w * (1 - (limit - cost) / cur)) end
        if retry < 1 then retry = 1 end
      end
      local reset = 0
      if cur + cost > 0 then reset = 2 * w - elapsed elseif prev > 0 then reset = w - elapsed end
      windows[#windows + 1] = { l = l, limit = limit, start = start, cur = cur, prev = prev, used = used, cost = cost, retry = retry, reset = reset }
    end
  end

  local function statuses(out, admitted)
    for _, win in ipairs(windows) do
      local left = win.limit - win.used - (admitted and win.cost or 0)
      if left < 0 then left = 0 end
      out[#out + 1] = win.l.name
      out[#out + 1] = win.limit
      out[#out + 1] = math.floor(left)
      out[#out + 1] = win.reset
    end
    return out
  end

  -- The longest wait decides: the request needs room in every window.
  local worst = nil
  for _, win in ipairs(windows) do
    if win.retry > 0 and (worst == nil or win.retry > worst.retry) then worst = win end
  end
  if worst ~= nil then return statuses({ 'rate', worst.l.name, worst.retry }, false) end

  local holdId, holdMicros = A[5], tonumber(A[6])
  if budget ~= nil and holdId ~= '' then
    local state = redis.call('HMGET', K[2], 'spent', 'reserved')
    local remaining = budget - tonumber(state[1] or '0') - tonumber(state[2] or '0')
    if holdMicros > remaining then
      if remaining < 0 then remaining = 0 end
      return { 'budget', string.format('%.0f', remaining) }
    end
  end

  for _, win in ipairs(windows) do
    redis.call('HSET', K[5], win.l.field .. '.s', win.start, win.l.field .. '.c', win.cur + win.cost, win.l.field .. '.p', win.prev)
  end
  if #windows > 0 then redis.call('PEXPIRE', K[5], 172800000) end
  if holdId ~= '' then
    redis.call('ZADD', K[3], now + tonumber(A[7]), holdId .. '|' .. A[6])
    redis.call('HINCRBY', K[2], 'reserved', A[6])
  end
  return statuses({ 'ok' }, true)
end


return each_request(5, 12, admit_one)
