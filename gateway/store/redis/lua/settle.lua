-- Settles one request: releases its hold and charges its real cost, never more than the budget
-- has room for (so the spent total can never pass the budget, even if the hold had expired),
-- records the charge in the period's history, and adds the completion tokens to the token
-- rate-limit windows.
--
-- KEYS: 1 user hash, 2 ledger hash, 3 holds zset, 4 history hash, 5 rate-limit hash
-- ARGV: 1 now (ms); 2-4 day, week and month period indices; 5 hold id ('' for none);
--       6 hold micros; 7 actual micros; 8 completion tokens;
--       9 tokens/min limit, 10 tokens/day limit ('' when not limited)
-- Returns the micros charged, as a string.

local now = tonumber(ARGV[1])
local known, budget, period = roll_period()
if not known then return '0' end

if ARGV[5] ~= '' and redis.call('ZREM', KEYS[3], ARGV[5] .. '|' .. ARGV[6]) == 1 then
  redis.call('HINCRBY', KEYS[2], 'reserved', -tonumber(ARGV[6]))
end

local charge = tonumber(ARGV[7])
if budget ~= nil then
  local state = redis.call('HMGET', KEYS[2], 'spent', 'reserved')
  local room = budget - tonumber(state[1] or '0') - tonumber(state[2] or '0')
  if room < 0 then room = 0 end
  if charge > room then charge = room end
end
local charged = string.format('%.0f', charge)
if charge > 0 then
  redis.call('HINCRBY', KEYS[2], 'spent', charged)
  redis.call('HINCRBY', KEYS[4], period, charged)
end

local tokens = tonumber(ARGV[8])
if tokens > 0 then
  local TOKEN_LIMITS = { { field = 'tpm', window = 60000, arg = 9 }, { field = 'tpd', window = 86400000, arg = 10 } }
  for _, l in ipairs(TOKEN_LIMITS) do
    if ARGV[l.arg] ~= '' then
      local w = l.window
      local start, cur, prev = roll_window(KEYS[5], l.field, w, now)
      redis.call('HSET', KEYS[5], l.field .. '.s', start, l.field .. '.c', cur + tokens, l.field .. '.p', prev)
    end
  end
  redis.call('PEXPIRE', KEYS[5], 172800000)
end
return charged
