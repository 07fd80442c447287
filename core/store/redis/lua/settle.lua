-- settle_one settles one request, one step of a batch (ledger.lua), at every level of the request
-- (read_levels, ledger-common.lua): releases its hold and charges its real cost, never more than
-- the level's budget has room for (so no spent total can pass its budget, even if the hold had
-- expired), records the charge in the period's history, raises the alerts its spending reached, or
-- those up to 100% when the real cost was more than was left (raise_alerts, ledger-common.lua),
-- and adds the completion tokens to the token rate-limit windows.
--
-- K, the settlement's key set (ledger-common.lua); A, its fields (SettleStep in redis-ledger-settlement.ts):
--       now, day, week, month (ledger-common.lua); hold, the hold id ('' for none); micros, its
--       amount (text); charge, the real cost (text); tokens, the completion tokens; limits, by
--       limit name (absent when not limited; only the token limits count here); for a lease
--       (admit.lua), after, what is left of its hold after this step (text; '0' ends it) and ttl,
--       how long that stays held (ms); and when the lease closes, granted_at, when it was granted
--       (ms), and unused, its unused room by limit name, given back to the windows it was taken
--       from (if those are still the current or the previous one); u, the user's id (for alerts);
--       x, the other levels; and with the failover loss bound on (redis-durability.ts), sk, the
--       key marking this settlement done, and keep, how long the mark stays (ms)
-- Returns the micros charged (money()): the least any level was charged. A settlement sent again
-- (its first try's reply, or the replicas' confirmation of it, was lost) finds its mark and
-- returns what the first try charged, charging nothing more.

-- The limits completion tokens count in.
local TOKEN_LIMITS = {}
for _, name in ipairs(LIMIT_NAMES) do
  if WINDOWS[name].unit == 'tokens' then TOKEN_LIMITS[#TOKEN_LIMITS + 1] = { name = name, w = WINDOWS[name] } end
end

-- Gives back a closing lease's unused rate-limit room to the windows it was counted in.
local function give_back(K, A, now)
  local granted = A.granted_at
  local windows = {}
  for _, name in ipairs(LIMIT_NAMES) do
    local unused = A.unused[name] or 0
    if unused > 0 then windows[#windows + 1] = { w = WINDOWS[name], unused = unused } end
  end
  read_windows(K[5], windows, now)
  for _, win in ipairs(windows) do
    local w = win.w.window
    local counted_in = granted - granted % w
    if counted_in == win.start then win.cur = math.max(0, win.cur - win.unused)
    elseif counted_in == win.start - w then win.prev = math.max(0, win.prev - win.unused) end
    win.add = 0
  end
  write_windows(K[5], windows)
end

local function settle_one(K, A, KS)
  if A.sk ~= nil then
    local done = redis.call('GET', A.sk)
    if done then return done end
  end
  local now = A.now
  local levels, unknown = read_levels(K, A, KS)
  if unknown then return '0' end

  -- Each level is charged the real cost, never more than its budget has room for; what the
  -- request is said to have been charged is the least of them (the rest was not covered).
  local charged = nil
  local after = tonumber(A.after or '0')
  local tokens = A.tokens
  for _, lv in ipairs(levels) do
    local L = lv.L
    if A.hold ~= '' then
      if take_hold(lv.K[3], A.hold, A.micros, after, now + (A.ttl or 0)) then
        L.reserved = L.reserved - (tonumber(A.micros) - after)
        L.dirty = true
      end
    end

    local charge = tonumber(A.charge)
    local ran_out = runs_out(L, charge)
    if L.budget ~= nil and not L.soft then
      local room = L.budget - L.spent - L.reserved
      if room < 0 then room = 0 end
      if charge > room then charge = room end
    end
    if charged == nil or charge < charged then charged = charge end
    if charge > 0 then
      L.spent = L.spent + charge
      L.dirty = true
      add_history(lv.K[4], L, charge)
    end
    if L.alerts ~= nil and L.budget ~= nil and (charge > 0 or ran_out) then raise_alerts(lv, L, now, A.u, ran_out) end

    if tokens > 0 then
      local windows = {}
      for _, l in ipairs(TOKEN_LIMITS) do
        if lv.limits[l.name] ~= nil then windows[#windows + 1] = { w = l.w, add = tokens } end
      end
      read_windows(lv.K[5], windows, now)
      write_windows(lv.K[5], windows)
    end
    if A.granted_at ~= nil then give_back(lv.K, A, now) end
  end
  if A.sk ~= nil then redis.call('SET', A.sk, money(charged), 'PX', A.keep) end
  return money(charged)
end
