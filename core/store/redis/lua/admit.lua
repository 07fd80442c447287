-- admit_one admits one request, one step of a batch (ledger.lua): at every level of the request
-- (its user, and its key and team when they have budgets or limits of their own: read_levels in
-- ledger-common.lua), rolls the budget period forward, releases holds of requests that never
-- settled, checks every rate-limit window and the budget, and only when all pass at every level
-- takes the request's rate-limit share and holds its worst-case cost at each.
--
-- K, the admission's key set (ledger-common.lua); A, its fields (AdmitStep in redis-ledger-admission.ts):
--       now, day, week, month (ledger-common.lua); hold, the hold id ('' for none); micros, its
--       amount (text); ttl, how long it is held (ms); tokens, counted now; limits, by limit name
--       (absent when not limited); lease, the id of the lease asked for ('' for none); size, its
--       size in requests like this one; headroom: a lease is granted only while every limit has
--       room for this many leases beyond it; open_ms, how long the lease may admit, grace
--       included; may_wait, true to answer 'busy' rather than refuse while another gateway's
--       lease may still hold room; u, the user's id (for alerts); x, the request's other levels
--       (read_levels)
-- Returns {'unknown_user'} | {'budget', remaining, level} | {'busy', leaseUntil}
--       | {'rate', limit, retryAfterMs, level, statuses...}
--       | {'ok', lease size granted (0: none), level, remaining, statuses...}: level and remaining
--       are those of the budget with least room after this hold ('' and 0 without a hold or a
--       budget); statuses are flat (name, limit, remaining, resetMs) groups, every level's;
--       amounts and limits are money() (limits may be as large).
--
-- A lease is room for more requests taken in advance: a hold of `size` times this request's, and
-- `size` times its share of every rate-limit window. The gateway admits later requests against
-- it without a round trip (redis-budget-lease.ts), and gives back what it did not use (settle.lua).
-- Leases are granted only far from every limit of every level, so near a limit every admission
-- comes here, and a lease never takes room another user of the same team (or another gateway)
-- needs. A refusal while a lease may still be open at the refusing level answers 'busy': the
-- gateway asks again once the lease has been given back, so that room held by one gateway is not
-- refused by another.

-- Every limit, in LIMIT_NAMES order (written by redis-ledger-common.ts; redis-ledger-admission.ts
-- reads the statuses back in it).
local LIMITS = {}
for _, name in ipairs(LIMIT_NAMES) do LIMITS[#LIMITS + 1] = { name = name, w = WINDOWS[name], unit = WINDOWS[name].unit } end

-- Holds of requests that never settled (a gateway that died) have expired: release them.
-- Only needed when the budget looks too small, as they count as reserved until then.
local function release_stale(K, L, now)
  local stale = redis.call('ZRANGEBYSCORE', K[3], '-inf', now)
  if #stale == 0 then return end
  for _, member in ipairs(stale) do L.reserved = L.reserved - tonumber(string.match(member, '|(%d+)$')) end
  L.dirty = true
  redis.call('ZREMRANGEBYSCORE', K[3], '-inf', now)
end

local function admit_one(K, A, KS)
  local now = A.now
  local levels, unknown = read_levels(K, A, KS)
  if unknown then return {'unknown_user'} end

  -- Sliding-window counters: the previous window's count, weighted by how much of it still
  -- overlaps the last W milliseconds, plus the current window's count.
  local tokens = A.tokens
  local all = {}
  for _, lv in ipairs(levels) do
    local windows = {}
    for _, l in ipairs(LIMITS) do
      local limit = lv.limits[l.name]
      if limit ~= nil then
        windows[#windows + 1] = { l = l, w = l.w, limit = limit, add = l.unit == 'requests' and 1 or tokens, level = lv }
      end
    end
    read_windows(lv.K[5], windows, now)
    lv.windows = windows
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
      all[#all + 1] = win
    end
  end

  local function statuses(out, admitted)
    for _, win in ipairs(all) do
      local left = win.limit - win.used - (admitted and win.add or 0)
      if left < 0 then left = 0 end
      out[#out + 1] = win.l.name
      out[#out + 1] = money(win.limit)
      out[#out + 1] = money(math.floor(left))
      out[#out + 1] = win.reset
    end
    return out
  end

  -- A refusal changes nothing but what the roll forward and the stale holds changed, and the
  -- alerts of a budget that ran out (below).
  -- The longest wait decides: the request needs room in every window of every level.
  local worst = nil
  for _, win in ipairs(all) do
    if win.retry > 0 and (worst == nil or win.retry > worst.retry) then worst = win end
  end
  if worst ~= nil then
    if A.may_wait and now < worst.level.L.lease_until then return { 'busy', worst.level.L.lease_until } end
    return statuses({ 'rate', worst.l.name, worst.retry, worst.level.name }, false)
  end

  -- The tightest level decides: the one with the least room, among those without room enough.
  local holdId, holdMicros = A.hold, tonumber(A.micros)
  local tightest, tightestRoom = nil, nil
  if holdId ~= '' then
    for _, lv in ipairs(levels) do
      local L = lv.L
      if L.budget ~= nil and not L.soft then
        if holdMicros > L.budget - L.spent - L.reserved then release_stale(lv.K, L, now) end
        local room = L.budget - L.spent - L.reserved
        if tightestRoom == nil or room < tightestRoom then tightest, tightestRoom = lv, room end
      end
    end
  end
  if tightest ~= nil and holdMicros > tightestRoom then
    if A.may_wait and now < tightest.L.lease_until then return { 'busy', tightest.L.lease_until } end
    -- A level whose rest is too small for this request has run out: its last thresholds are raised.
    for _, lv in ipairs(levels) do
      local L = lv.L
      if L.alerts ~= nil and runs_out(L, holdMicros) then raise_alerts(lv, L, now, A.u, true) end
    end
    if tightestRoom < 0 then tightestRoom = 0 end
    return { 'budget', money(tightestRoom), tightest.name }
  end

  local lease = 0
  if A.lease ~= '' then
    lease = A.size
    local need = A.headroom * lease
    for _, lv in ipairs(levels) do
      local L = lv.L
      if holdId ~= '' and L.budget ~= nil and not L.soft and L.budget - L.spent - L.reserved - holdMicros < need * holdMicros then lease = 0 end
    end
    for _, win in ipairs(all) do
      if win.limit - win.used - win.add < need * win.add then lease = 0 end
    end
  end
  local reply = { 'ok', lease, tightest and tightest.name or '', tightest and money(tightestRoom - holdMicros) or 0 }
  statuses(reply, true)

  local ttl = A.ttl
  if lease > 0 then
    for _, win in ipairs(all) do win.add = win.add * (1 + lease) end
  end
  local open_until = now + A.open_ms
  for _, lv in ipairs(levels) do
    local L = lv.L
    if holdId ~= '' then
      redis.call('ZADD', lv.K[3], now + ttl, holdId .. '|' .. A.micros)
      L.reserved = L.reserved + holdMicros
      L.dirty = true
    end
    if lease > 0 then
      if holdId ~= '' then
        redis.call('ZADD', lv.K[3], now + ttl, A.lease .. '|' .. money(lease * holdMicros))
        L.reserved = L.reserved + lease * holdMicros
      end
      if open_until > L.lease_until then L.lease_until = open_until end
      L.dirty = true
    end
    write_windows(lv.K[5], lv.windows)
  end
  return reply
end
