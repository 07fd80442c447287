-- Shared by admit.lua and settle.lua, prepended to each when they are loaded (redis-ledger.ts):
-- Redis scripts cannot import one another.
--
-- K and A are one request's keys and arguments, both lists of strings: K 1 user hash, 2 ledger
-- hash; A 2-4 the day, week and month period indices.
--
-- A batch comes as one argument, ARGV[1], JSON: `k`, the key sets of the batch (each a list of
-- keys, once per user and router), and `r`, one list per request: the position of its key set
-- in `k`, then its arguments, all strings. One argument rather than several per request because
-- the client encodes every argument (and decodes every reply element) one by one, which cost the
-- gateway more than the script; the reply is one JSON string for the same reason. The keys
-- travel inside the argument, not in KEYS: this, like the usage totals per router, assumes a
-- single Redis (not Cluster), whose scripts may touch any key.
--
-- Every redis.call costs more than the command it runs, and these scripts run on every request,
-- so each hash is read with one HMGET and written with one HSET: the state is changed in Lua
-- variables in between. Money is written with '%.0f', as a Lua number given to redis.call would
-- be formatted with '%.14g' (1e+12); amounts stay exact below 2^53 micros.

local function money(n) return string.format('%.0f', n) end

-- Reads the user's budget and the ledger, with the budget period rolled forward. Returns nil for
-- an unknown user, else the ledger: budget (nil when unlimited), spent, reserved, period (the
-- label `<kind>:<index>` being counted) and the fields the roll changed, for write_ledger. A new
-- period starts spending from zero; a changed kind of period starts counting periods afresh
-- without clearing what was spent; a clock behind the period already seen changes nothing.
local function read_ledger(K, A)
  local user = redis.call('HMGET', K[1], 'budget', 'period')
  if user[1] == false then return nil end
  local ptype = user[2] or ''
  local led = redis.call('HMGET', K[2], 'ptype', 'pidx', 'spent', 'reserved')
  local L = {
    budget = user[1] ~= '' and tonumber(user[1]) or nil,
    spent = tonumber(led[3] or '0'),
    reserved = tonumber(led[4] or '0'),
    changed = {},
  }
  local indices = { daily = A[2], weekly = A[3], monthly = A[4] }
  local pidx = indices[ptype] or '0'
  if (led[1] or '') ~= ptype then
    L.changed = { 'ptype', ptype, 'pidx', pidx }
  elseif tonumber(pidx) > tonumber(led[2] or '0') then
    L.changed = { 'pidx', pidx }
    L.spent = 0
  else
    pidx = led[2] or '0' -- this clock may be behind: the period already seen is the one counted
  end
  L.period = ptype .. ':' .. pidx
  return L
end

-- Writes the ledger back in one HSET.
local function write_ledger(K, L)
  local fields = L.changed
  fields[#fields + 1] = 'spent'
  fields[#fields + 1] = money(L.spent)
  fields[#fields + 1] = 'reserved'
  fields[#fields + 1] = money(L.reserved)
  redis.call('HSET', K[2], unpack(fields))
end

-- Sliding-window counters as they stand at `now`, read in one HMGET: each of `limits` (with
-- `field` and `window` in ms) gets start, cur and prev, shifted forward by whole windows.
local function read_windows(hash, limits, now)
  if #limits == 0 then return end
  local names = {}
  for _, l in ipairs(limits) do
    names[#names + 1] = l.field .. '.s'
    names[#names + 1] = l.field .. '.c'
    names[#names + 1] = l.field .. '.p'
  end
  local raw = redis.call('HMGET', hash, unpack(names))
  for i, l in ipairs(limits) do
    local w = l.window
    local start, cur, prev = tonumber(raw[i * 3 - 2] or '-1'), tonumber(raw[i * 3 - 1] or '0'), tonumber(raw[i * 3] or '0')
    local aligned = now - (now % w)
    if start < 0 or aligned - start >= 2 * w then start, cur, prev = aligned, 0, 0
    elseif aligned - start >= w then start, cur, prev = aligned, 0, cur end
    l.start, l.cur, l.prev = start, cur, prev
  end
end

-- Adds `l.add` to each window's current count and writes them all in one HSET; the hash lives
-- two days past its last write.
local function write_windows(hash, limits)
  if #limits == 0 then return end
  local fields = {}
  for _, l in ipairs(limits) do
    fields[#fields + 1] = l.field .. '.s'
    fields[#fields + 1] = money(l.start)
    fields[#fields + 1] = l.field .. '.c'
    fields[#fields + 1] = money(l.cur + l.add)
    fields[#fields + 1] = l.field .. '.p'
    fields[#fields + 1] = money(l.prev)
  end
  redis.call('HSET', hash, unpack(fields))
  redis.call('PEXPIRE', hash, 172800000)
end

-- Runs `step` once for each request of the batch in ARGV[1], in order, on its key set and its
-- arguments, and returns their replies in that order, as a JSON list.
local function each_request(step)
  local batch = cjson.decode(ARGV[1])
  local replies = {}
  for _, request in ipairs(batch.r) do
    local A = {}
    for i = 2, #request do A[i - 1] = request[i] end
    replies[#replies + 1] = step(batch.k[request[1]], A)
  end
  return cjson.encode(replies)
end
