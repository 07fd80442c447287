-- settle_one settles one request, one step of a batch (ledger.lua): releases its hold and
-- charges its real cost, never more than the budget has room for (so the spent total can never
-- pass the budget, even if the hold had expired), records the charge in the period's history,
-- and adds the completion tokens to the token rate-limit windows.
--
-- K, the settlement's key set: 1 user hash, 2 ledger hash, 3 holds
--       zset, 4 history hash, 5 rate-limit hash; A, its arguments: 1 now (ms); 2-4 day, week and month
--       period indices; 5 hold id ('' for none); 6 hold micros; 7 actual micros; 8 completion
--       tokens; 9 tokens/min limit, 10 tokens/day limit ('' when not limited)
-- Returns the micros charged (money()).

local TOKEN_LIMITS = { { w = WINDOWS.tpm, arg = 9 }, { w = WINDOWS.tpd, arg = 10 } }

local function settle_one(K, A)
  local now = tonumber(A[1])
  local L = read_ledger(K, A)
  if L == nil then return '0' end

  if A[5] ~= '' and redis.call('ZREM', K[3], A[5] .. '|' .. A[6]) == 1 then
    L.reserved = L.reserved - tonumber(A[6])
    L.dirty = true
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
  return charged
end
