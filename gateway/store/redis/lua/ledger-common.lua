-- Shared by admit.lua and settle.lua, prepended to each when they are loaded (redis-ledger.ts):
-- Redis scripts cannot import one another.
--
-- K and A are one request's keys and arguments (KEYS and ARGV for admit.lua, a slice of them
-- for each settlement of settle.lua): K 1 user hash, 2 ledger hash; A 2-4 the day, week and
-- month period indices.

-- Rolls the user's budget period forward. Returns whether the user exists, their budget (nil
-- when unlimited) and the label of the period being counted (`<kind>:<index>`). A new period starts spending from zero; a changed kind
-- of period starts counting periods afresh without clearing what was spent; a clock behind the
-- period already seen changes nothing.
local function roll_period(K, A)
  local user = redis.call('HMGET', K[1], 'budget', 'period')
  if user[1] == false then return false, nil, nil end
  local budget = user[1] ~= '' and tonumber(user[1]) or nil
  local ptype = user[2] or ''
  local led = redis.call('HMGET', K[2], 'ptype', 'pidx')
  local indices = { daily = A[2], weekly = A[3], monthly = A[4] }
  local pidx = indices[ptype] or '0'
  if (led[1] or '') ~= ptype then
    redis.call('HSET', K[2], 'ptype', ptype, 'pidx', pidx)
  elseif tonumber(pidx) > tonumber(led[2] or '0') then
    redis.call('HSET', K[2], 'pidx', pidx, 'spent', 0)
  else
    pidx = led[2] or '0' -- this clock may be behind: the period already seen is the one counted
  end
  return true, budget, ptype .. ':' .. pidx
end

-- A sliding-window counter as it stands at `now`: shifted forward by whole windows of `w` ms.
-- Returns start, current count, previous count.
local function roll_window(hash, field, w, now)
  local raw = redis.call('HMGET', hash, field .. '.s', field .. '.c', field .. '.p')
  local start, cur, prev = tonumber(raw[1] or '-1'), tonumber(raw[2] or '0'), tonumber(raw[3] or '0')
  local aligned = now - (now % w)
  if start < 0 or aligned - start >= 2 * w then return aligned, 0, 0 end
  if aligned - start >= w then return aligned, 0, cur end
  return start, cur, prev
end

-- Runs `step` once for each request of a batch, in order, each on its own slice of KEYS and
-- ARGV (`keys_per` and `args_per` of them), and returns their replies in that order.
local function each_request(keys_per, args_per, step)
  local replies = {}
  for i = 0, #KEYS / keys_per - 1 do
    local K, A = {}, {}
    for k = 1, keys_per do K[k] = KEYS[i * keys_per + k] end
    for a = 1, args_per do A[a] = ARGV[i * args_per + a] end
    replies[#replies + 1] = step(K, A)
  end
  return replies
end
