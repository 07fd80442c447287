-- settle_one settles one request, one step of a batch (ledger.lua): releases its hold and
-- charges its real cost, never more than the budget has room for (so the spent total can never
-- pass the budget, even if the hold had expired), records the charge in the period's history,
-- and adds the completion tokens to the token rate-limit windows.
--
-- K, the settlement's key set: 1 user hash, 2 ledger hash, 3 holds
--       zset, 4 history hash, 5 rate-limit hash; A, its arguments: 1 now (ms); 2-4 day, week and month
--       period indices; 5 hold id ('' for none); 6 hold micros; 7 actual micros; 8 completion
--       tokens; 9 tokens/min limit, 10 tokens/day limit ('' when not limited); then, for a
--       lease (admit.lua), 11 what is left of its hold after this step (0 ends it) and 12 how
--       long that stays held (ms); and when the lease closes, 13 when it was granted (ms) and
--       14-17 its unused requests/min, requests/day, tokens/min and tokens/day, given back to
--       the windows they were taken from (if those are still the current or the previous one)
-- Returns the micros charged (money()).

local TOKEN_LIMITS = { { w = WINDOWS.tpm, arg = 9 }, { w = WINDOWS.tpd, arg = 10 } }
local RETURNED = { { w = WINDOWS.rpm, arg = 14 }, { w = WINDOWS.rpd, arg = 15 }, { w = WINDOWS.tpm, arg = 16 }, { w = WINDOWS.tpd, arg = 17 } }

-- Gives back a closing lease's unused rate-limit room to the windows it was counted in.
local function give_back(K, A, now)
  local granted = tonumber(A[13])
  local windows = {}
  for _, l in ipairs(RETURNED) do
    local unused = tonumber(A[l.arg])
    if unused > 0 then windows[#windows + 1] = { w = l.w, unused = unused } end
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

local function settle_one(K, A)
  local now = tonumber(A[1])
  local L = read_ledger(K, A)
  if L == nil then return '0' end

  if A[5] ~= '' then
    local after = tonumber(A[11] or '0')
    if take_hold(K[3], A[5], A[6], after, now + tonumber(A[12] or '0')) then
      L.reserved = L.reserved - (tonumber(A[6]) - after)
      L.dirty = true
    end
  end

  local charge = tonumber(A[7])
  if L.budget ~= nil then
    local room = L.budget - L.spent - L.reserved
    if room < 0 then room = 0 end
    if charge > room then charge = room end
  end
  local charged = money(charge)
  if charge > 0 then
    L.spent = L.spent + charge
    L.dirty = true
    add_history(K[4], L, charge)
  end

  local tokens = tonumber(A[8])
  if tokens > 0 then
    local windows = {}
    for _, l in ipairs(TOKEN_LIMITS) do
      if A[l.arg] ~= '' then windows[#windows + 1] = { w = l.w, add = tokens } end
    end
    read_windows(K[5], windows, now)
    write_windows(K[5], windows)
  end
  if A[13] ~= nil and A[13] ~= '' then give_back(K, A, now) end
  return charged
end
