-- Shared by admit.lua and settle.lua, prepended to each when they are loaded (redis-ledger.ts):
-- Redis scripts cannot import one another.
--
-- K and A are one request's keys and arguments, both lists of strings: K 1 user hash, 2 ledger
-- hash; A 2-4 the day, week and month period indices.
--
-- A batch comes as one argument, ARGV[1], JSON: `k`, the key sets of the batch (each a list of
-- keys, once per user and router), and `r`, one list per request: the position of its key set
-- in `k`, then its arguments, all strings. One argument rather than several per request because
-- the client encodes every argument (and decodes every reply element) one by one on the gateway's
-- one thread: about 15 µs a request, against 4 this way. The reply is one JSON string for the
-- same reason. The keys
-- travel inside the argument, not in KEYS: this, like the usage totals per router, assumes a
-- single Redis (not Cluster), whose scripts may touch any key.
--
-- These scripts run on every request, and Redis spent more time in them than in the commands
-- they run (a redis.call costs about a microsecond more than its command, a string.format as
-- much), so each hash is read with one HMGET and written with one HSET, the state changed in
-- Lua variables in between, and field names are constants.
--
-- Numbers: redis.call and cjson print a Lua number with '%.14g', exact for integers below 1e14;
-- counters and times stay below that and are passed as numbers. Money may not (1e14 micros is
-- 100 million): money() gives the number itself below 1e14 and '%.0f' text above, exact to
-- 2^53 micros.

local function money(n)
  if n < 1e14 and n > -1e14 then return n end
  return string.format('%.0f', n)
end

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

-- The sliding-window counters of a rate-limit hash: each has its window in ms and three fields,
-- the window's start (s), the current window's count (c) and the previous one's (p).
local WINDOWS = {
  rpm = { window = 60000, s = 'rpm.s', c = 'rpm.c', p = 'rpm.p' },
  rpd = { window = 86400000, s = 'rpd.s', c = 'rpd.c', p = 'rpd.p' },
  tpm = { window = 60000, s = 'tpm.s', c = 'tpm.c', p = 'tpm.p' },
  tpd = { window = 86400000, s = 'tpd.s', c = 'tpd.c', p = 'tpd.p' },
}

-- Sliding-window counters as they stand at `now`, read in one HMGET: each of `limits` (with `w`,
-- its entry of WINDOWS) gets start, cur and prev, shifted forward by whole windows, and `rolled`
-- when it moved to a new window (or had none).
local function read_windows(hash, limits, now)
  if #limits == 0 then return end
  local names = {}
  for _, l in ipairs(limits) do
    names[#names + 1] = l.w.s
    names[#names + 1] = l.w.c
    names[#names + 1] = l.w.p
  end
  local raw = redis.call('HMGET', hash, unpack(names))
  for i, l in ipairs(limits) do
    local w = l.w.window
    local start, cur, prev = tonumber(raw[i * 3 - 2] or '-1'), tonumber(raw[i * 3 - 1] or '0'), tonumber(raw[i * 3] or '0')
    local aligned = now - (now % w)
    l.rolled = start < 0 or aligned - start >= w
    if start < 0 or aligned - start >= 2 * w then start, cur, prev = aligned, 0, 0
    elseif aligned - start >= w then start, cur, prev = aligned, 0, cur end
    l.start, l.cur, l.prev = start, cur, prev
  end
end

-- Adds `l.add` to each window's current count and writes them all in one HSET. When a window
-- rolled (a minute's does every minute of use), the hash's lifetime is set to two days: longer
-- than a day window and the one before it, which is all it has to remember.
local function write_windows(hash, limits)
  if #limits == 0 then return end
  local fields = {}
  local rolled = false
  for _, l in ipairs(limits) do
    fields[#fields + 1] = l.w.s
    fields[#fields + 1] = l.start
    fields[#fields + 1] = l.w.c
    fields[#fields + 1] = l.cur + l.add
    fields[#fields + 1] = l.w.p
    fields[#fields + 1] = l.prev
    rolled = rolled or l.rolled
  end
  redis.call('HSET', hash, unpack(fields))
  if rolled then redis.call('PEXPIRE', hash, 172800000) end
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
