-- Settles a batch of requests, each as one step: releases its hold and charges its real cost,
-- never more than the budget has room for (so the spent total can never pass the budget, even
-- if the hold had expired), records the charge in the period's history, and adds the
-- completion tokens to the token rate-limit windows. The gateway gathers the settlements of one
-- turn of its event loop into one call.
--
-- KEYS: for each settlement: 1 user hash, 2 ledger hash, 3 holds zset, 4 history hash,
--       5 rate-limit hash
-- ARGV: for each settlement: 1 now (ms); 2-4 day, week and month period indices; 5 hold id
--       ('' for none); 6 hold micros; 7 actual micros; 8 completion tokens;
--       9 tokens/min limit, 10 tokens/day limit ('' when not limited)
-- Returns the micros charged for each settlement, as strings.

local function settle_one(K, A)
  local now = tonumber(A[1])
  local known, budget, period = roll_period(K, A)
  if not known then return '0' end

  if A[5] ~= '' and redis.call('ZREM', K[3], A[5] .. '|' .. A[6]) == 1 then
    redis.call('HINCRBY', K[2], 'reserved', -tonumber(A[6]))
  end

  local charge = tonumber(A[7])
  if budget ~= nil then
    local state = redis.call('HMGET', K[2], 'spent', 'reserved')
    local room = budget - tonumber(state[1] or '0') - tonumber(state[2] or '0')
    if room < 0 then room = 0 end
    if charge > room then charge = room end
  end
  local charged = string.format('%.0f', charge)
  if charge > 0 then
    redis.call('HINCRBY', K[2], 'spent', charged)
    redis.call('HINCRBY', K[4], period, charged)
  end

  local tokens = tonumber(A[8])
  if tokens > 0 then
    local TOKEN_LIMITS = { { field = 'tpm', window = 60000, arg = 9 }, { field = 'tpd', window = 86400000, arg = 10 } }
    for _, l in ipairs(TOKEN_LIMITS) do
      if A[l.arg] ~= '' then
        local w = l.window
        local start, cur, prev = roll_window(K[5], l.field, w, now)
        redis.call('HSET', K[5], l.field .. '.s', start, l.field .. '.c', cur + tokens, l.field .. '.p', prev)
      end
    end
    redis.call('PEXPIRE', K[5], 172800000)
  end
  return charged
end


return each_request(5, 10, settle_one)
