-- admit_one admits one request, one step of a batch (ledger.lua): rolls the user's budget period
-- forward, releases holds of requests that never settled, checks every rate-limit window and the
-- budget, and only when all pass takes the request's rate-limit share and holds its worst-case
-- cost.
--
-- K, the admission's key set: 1 user hash, 2 ledger hash, 3 holds zset,
--       4 history hash, 5 rate-limit hash; A, its arguments: 1 now (ms); 2-4 day, week and month period
--       indices; 5 hold id ('' for none); 6 hold micros; 7 hold ttl (ms); 8 tokens counted now;
--       9-12 limits: requests/min, requests/day, tokens/min, tokens/day ('' when not limited);
--       13 lease id ('' when the gateway asks for none); 14 lease size, in requests like this one;
--       15 headroom: a lease is granted only while every limit has room for this many leases
--       beyond it; 16 how long (ms) the lease may admit, grace included; 17 '1' to answer 'busy'
--       rather than refuse while another gateway's lease may still hold room
-- Returns {'unknown_user'} | {'budget', remaining} | {'busy', leaseUntil}
--       | {'rate', limit, retryAfterMs, statuses...} | {'ok', lease size granted (0: none), statuses...};
--       statuses are flat (name, limit, remaining, resetMs) groups; amounts and limits are
--       money() (limits may be as large).
--
-- A lease is room for more requests taken in advance: a hold of `size` times this request's, and
-- `size` times its share of every rate-limit window. The gateway admits later requests against
-- it without a round trip (redis-lease.ts), and gives back what it did not use (settle.lua).
-- Leases are granted only far from every limit, so near a limit every admission comes here. A
-- refusal while a lease may still be open answers 'busy': the gateway asks again once the lease
-- has been given back, so that room held by one gateway is not refused by another.

local LIMITS = {
  { name = 'requests_per_minute', w = WINDOWS.rpm, arg = 9, unit = 'requests' },
  { name = 'requests_per_day', w = WINDOWS.rpd, arg = 10, unit = 'requests' },
  { name = 'tokens_per_minute', w = WINDOWS.tpm, arg = 11, unit = 'tokens' },
  { name = 'tokens_per_day', w = WINDOWS.tpd, arg = 12, unit = 'tokens' },
}

-- Holds of requests that never settled (a gateway that died) have expired: release them.
-- Only needed when the budget looks too small, as they count as reserved until then.
local function release_stale(K, L, now)
  local stale = redis.call('ZRANGEBYSCORE', K[3], '-inf', now)
  if #stale == 0 then return end
  for _, member in ipairs(stale) do L.reserved = L.reserved - tonumber(string.match(member, '|(%d+)$')) end
  L.dirty = true
  redis.call('ZREMRANGEBYSCORE', K[3], '-inf', now)
end

local function admit_one(K, A)
  local now = tonumber(A[1])

  local L = read_ledger(K, A)
  if L == nil then return {'unknown_user'} end

  -- Sliding-window counters: the previous window's count, weighted by how much of it still
  -- overlaps the last W milliseconds, plus the current window's count.
  local tokens = tonumber(A[8])
  local windows = {}
  for _, l in ipairs(LIMITS) do
    if A[l.arg] ~= '' then
      windows[#windows + 1] = { l = l, w = l.w, limit = tonumber(A[l.arg]), add = l.unit == 'requests' and 1 or tokens }
    end
  end
  read_windows(K[5], windows, now)
  for _, win in ipairs(windows) do
    local w, limit, cur, prev, cost = win.w.window, win.limit, win.cur, win.prev, win.add
    local elapsed = now - win.start
    win.used = prev * (w - elapsed) / w + cur
    win.retry = 0
    if win.used + cost > limit then
      if cost > limit then win.retry = w
      elseif cur + cost <= limit then win.retry = math.ceil(w - elapsed - (limit - cur - cost) * w / prev)
      else win.retry = math.ceil((w - elapsed) + w * (1 - (limit - cost) / cur)) end
      if win.retry < 1 then win.retry = 1 end
    end
    win.reset = 0
    if cur + cost > 0 then win.reset = 2 * w - elapsed elseif prev > 0 then win.reset = w - elapsed end
  end

  local function statuses(out, admitted)
    for _, win in ipairs(windows) do
      local left = win.limit - win.used - (admitted and win.add or 0)
      if left < 0 then left = 0 end
      out[#out + 1] = win.l.name
      out[#out + 1] = money(win.limit)
      out[#out + 1] = money(math.floor(left))
      out[#out + 1] = win.reset
    end
    return out
  end

  -- A refusal changes nothing but what the roll forward and the stale holds changed.
  -- The longest wait decides: the request needs room in every window.
  local worst = nil
  for _, win in ipairs(windows) do
    if win.retry > 0 and (worst == nil or win.retry > worst.retry) then worst = win end
  end
  local busy = A[17] == '1' and now < L.lease_until
  if worst ~= nil then
    if busy then return { 'busy', L.lease_until } end
    return statuses({ 'rate', worst.l.name, worst.retry }, false)
  end

  local holdId, holdMicros = A[5], tonumber(A[6])
  if L.budget ~= nil and holdId ~= '' and holdMicros > L.budget - L.spent - L.reserved then
    release_stale(K, L, now)
    local remaining = L.budget - L.spent - L.reserved
    if holdMicros > remaining then
      if busy then return { 'busy', L.lease_until } end
      if remaining < 0 then remaining = 0 end
      return { 'budget', money(remaining) }
    end
  end

  local lease = 0
  if A[13] ~= '' then
    lease = tonumber(A[14])
    local need = tonumber(A[15]) * lease
    if holdId ~= '' and L.budget ~= nil and L.budget - L.spent - L.reserved - holdMicros < need * holdMicros then lease = 0 end
    for _, win in ipairs(windows) do
      if win.limit - win.used - win.add < need * win.add then lease = 0 end
    end
  end
  local reply = statuses({ 'ok', lease }, true)

  local ttl = tonumber(A[7])
  if holdId ~= '' then
    redis.call('ZADD', K[3], now + ttl, holdId .. '|' .. A[6])
    L.reserved = L.reserved + holdMicros
    L.dirty = true
  end
  if lease > 0 then
    for _, win in ipairs(windows) do win.add = win.add * (1 + lease) end
    if holdId ~= '' then
      redis.call('ZADD', K[3], now + ttl, A[13] .. '|' .. money(lease * holdMicros))
      L.reserved = L.reserved + lease * holdMicros
    end
    local open_until = now + tonumber(A[16])
    if open_until > L.lease_until then L.lease_until = open_until end
    L.dirty = true
  end
  write_windows(K[5], windows)
  return reply
end
