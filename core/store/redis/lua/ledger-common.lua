-- Shared by admit.lua and settle.lua: the constants redis-ledger-common.ts writes from the
-- TypeScript declarations (WINDOWS, LIMIT_NAMES, WINDOW_HASH_TTL_MS, KEY_SET_SIZE...), then ledger-common.lua,
-- admit.lua, settle.lua and ledger.lua are loaded as one script, in that order (scripts.ts), as
-- Redis scripts cannot import one another.
--
-- K is one request's keys at one level (1 budget hash: the user's, key's or team's, 2 ledger hash,
-- 3 holds zset, 4 history hash, 5 rate-limit hash), KS every key set of the batch, and A its
-- fields, by name (admit.lua and settle.lua list theirs); every step has `now`
-- (ms) and `day`, `week` and `month`, the period indices of `now` (as text: they are written as they are).
--
-- A batch comes as one argument, ARGV[1], JSON: `k`, the key sets of the batch (each a list of
-- keys, once per level and router), and `r`, one object per request: `k`, the position of its key
-- set in `k`, `t`, its kind ('a' or 's'), and its fields. One argument rather than
-- several per request because the client encodes every argument (and decodes every reply
-- element) one by one on the gateway's one thread: about 15 µs a request, against 4 this way. The
-- reply is one JSON string for the same reason. On one Redis the keys travel inside the argument
-- too, and KEYS is empty; on a Redis Cluster (ALERTS_STREAM is then ''), a batch holds the requests
-- of one money home (keys.ts), its keys come as KEYS, all in one slot: `n` sets of KEY_SET_SIZE
-- in order, then the marks of its settlements (settle.lua `sk`), and the reply is {replies, alerts}: the alerts raised, which the gateway writes to the
-- alerts stream, in another slot.
--
-- These scripts run on every request, and Redis spent more time in them than in the commands
-- they run (a redis.call from Lua costs about 1.2 µs more than its command, a number passed to
-- it 0.4 µs to print, a tonumber 0.4 µs to read), so each hash is read with one HMGET and written
-- with one HSET once per batch (see LEDGERS), the state changed in Lua variables in between, and
-- field names are constants.
--
-- Numbers: redis.call and cjson print a Lua number with '%.14g', exact for integers below 1e14;
-- counters and times stay below that and are passed as numbers. Money may not (1e14 micros is
-- 100 million): money() gives the number itself below 1e14 and '%.0f' text above, exact to
-- 2^53 micros.

local function money(n)
  if n < 1e14 and n > -1e14 then return n end
  return string.format('%.0f', n)
end

-- What a batch has read of the hashes its requests share, and what it changed in them. A batch
-- runs atomically, so each hash is read on first use, changed in these tables between its
-- requests, and written back once when the batch ends (flush): the same as reading and writing
-- it for each request, for fewer redis.calls and fewer conversions between text and numbers. A
-- batch usually holds several requests of one user (an application's key).
local LEDGERS = {} -- ledger key -> the ledger, or false for an unknown user
local WINDOW_HASHES = {} -- rate-limit hash -> { values = { field -> number }, written = { window -> true }, expire = bool }
local HISTORY = {} -- history hash -> { period label -> micros charged by the batch }
-- Holds the batch took from a holds zset and changed (a lease's shrinks as its requests
-- settle): zset .. ' ' .. hold id -> { zset, id, micros (text, as in the member), expires }.
-- The member is removed at first use and the final one added back by the flush.
local HOLDS = {}
-- On a cluster: the alerts the batch raised, returned with its replies.
local RAISED = {}

-- A level's ledger (a user's, a key's or a team's), with the budget period rolled forward to the
-- request's (A 2-4). Returns nil when its budget hash (K[1]) is gone, else the ledger the batch's
-- requests of this level share: budget (nil when
-- unlimited), soft (a budget that only alerts, never refuses), alerts (its thresholds in percent,
-- ascending, or nil), spent, reserved, ptype and pidx (the period being counted), alerted (the
-- highest threshold already raised this period) and lease_until (the time until which a lease
-- may still be open, see admit.lua). Whatever changes it sets `dirty`.
-- A new period starts spending from zero; a changed kind of period starts counting periods
-- afresh without clearing what was spent; a clock behind the period already seen changes nothing.
local function read_ledger(K, A)
  local L = LEDGERS[K[2]]
  if L == false then return nil end
  if L == nil then
    local user = redis.call('HMGET', K[1], 'budget', 'period', 'alerts', 'soft')
    if user[1] == false then
      LEDGERS[K[2]] = false
      return nil
    end
    local led = redis.call('HMGET', K[2], 'ptype', 'pidx', 'spent', 'reserved', 'lease_until', 'alerted')
    L = {
      kind = user[2] or '',
      budget = user[1] ~= '' and tonumber(user[1]) or nil,
      soft = user[4] == '1',
      ptype = led[1] or '',
      pidx = led[2] or '0',
      spent = tonumber(led[3] or '0'),
      reserved = tonumber(led[4] or '0'),
      lease_until = tonumber(led[5] or '0'),
      alerted = tonumber(led[6] or '0'),
      dirty = false,
    }
    if user[3] and user[3] ~= '' then
      L.alerts = {}
      for percent in string.gmatch(user[3], '%d+') do L.alerts[#L.alerts + 1] = tonumber(percent) end
    end
    L.pidxn = tonumber(L.pidx)
    LEDGERS[K[2]] = L
  end
  local kind = L.kind
  local pidx = (kind == 'daily' and A.day) or (kind == 'weekly' and A.week) or (kind == 'monthly' and A.month) or '0'
  if L.ptype ~= kind then
    L.ptype, L.pidx, L.pidxn, L.dirty = kind, pidx, tonumber(pidx), true
  else
    local index = tonumber(pidx)
    if index > L.pidxn then
      L.pidx, L.pidxn, L.spent, L.alerted, L.dirty = pidx, index, 0, 0, true
    end
  end
  return L
end

-- A request's levels: its user's (K, A.limits), then those in A.x, each {k, the position of its
-- key set in the batch's KS; n, 'key' or 'team'; limits}. Each level has K, limits, name and L,
-- its ledger (read_ledger). Returns the levels, or nil and true when the user is unknown. A key's
-- or a team's level whose budget hash is gone (deleted since the gateway looked) is left out.
local function read_levels(K, A, KS)
  local L = read_ledger(K, A)
  if L == nil then return nil, true end
  local levels = { { K = K, limits = A.limits, name = 'user', id = A.u, L = L } }
  if A.x ~= nil then
    for _, x in ipairs(A.x) do
      local XK = KS[x.k]
      local XL = read_ledger(XK, A)
      if XL ~= nil then levels[#levels + 1] = { K = XK, limits = x.limits, name = x.n, id = x.id, L = XL } end
    end
  end
  return levels, false
end

-- The label `<kind>:<index>` of the period a ledger counts, as the history hash names it.
local function period_label(L)
  return L.ptype .. ':' .. L.pidx
end

-- Whether a level's hard budget has run out for a request that needs `micros` (its hold at
-- admission, its real cost at settlement): less is left unspent. Spending seldom lands on a hard
-- budget exactly, as the last requests are refused (or cut short) while a little is left, so this
-- is what reaching 100% means for it. Holds of requests in flight are not counted: they may yet
-- settle for less, so a refusal they cause alone is passing, not running out.
local function runs_out(L, micros)
  return L.budget ~= nil and not L.soft and micros > L.budget - L.spent
end

-- Raises the level's alerts whose threshold its spending has now reached, and when its budget
-- ran out (runs_out) those up to 100% too, however much was spent; once per period each:
-- `alerted`, kept in the ledger hash, is the highest raised, so however many gateways settle at
-- once, one step (admit.lua's or settle.lua's, atomic) raises each. An alert is an entry of the
-- ALERTS_STREAM stream (redis-budget-alerts.ts), which the gateways deliver (webhook, metric) and
-- the operator records as an Event; its `key` names it for idempotent delivery.
local function raise_alerts(lv, L, now, user, ran_out)
  for _, percent in ipairs(L.alerts) do
    local reached = L.spent * 100 >= L.budget * percent
    if percent > L.alerted and (reached or (ran_out and percent <= 100)) then
      L.alerted = percent
      L.dirty = true
      local label = period_label(L)
      local alert = cjson.encode({
        key = lv.name .. ':' .. lv.id .. ':' .. label .. ':' .. percent,
        level = lv.name,
        id = lv.id,
        user = user,
        percent = percent,
        budget = money(L.budget),
        spent = money(L.spent),
        exhausted = not reached,
        period = label,
        at = now,
      })
      if ALERTS_STREAM == '' then RAISED[#RAISED + 1] = alert
      else redis.call('XADD', ALERTS_STREAM, 'MAXLEN', '~', ALERTS_KEPT, '*', 'a', alert) end
    end
  end
end

-- WINDOWS (written by redis-ledger-common.ts): by limit name, the sliding-window counters of a
-- rate-limit hash, each with its window in ms and three fields, the window's start (s), the
-- current window's count (c) and the previous one's (p).

-- Sliding-window counters as they stand at `now`: each of `limits` (with `w`, its entry of
-- WINDOWS) gets start, cur and prev, shifted forward by whole windows, and `rolled` when it moved
-- to a new window (or had none). Fields the batch has not seen yet come in one HMGET.
local function read_windows(hash, limits, now)
  if #limits == 0 then return end
  local H = WINDOW_HASHES[hash]
  if H == nil then
    H = { values = {}, written = {}, expire = false }
    WINDOW_HASHES[hash] = H
  end
  local V = H.values
  local names = {}
  for _, l in ipairs(limits) do
    if V[l.w.s] == nil then
      names[#names + 1] = l.w.s
      names[#names + 1] = l.w.c
      names[#names + 1] = l.w.p
    end
  end
  if #names > 0 then
    local raw = redis.call('HMGET', hash, unpack(names))
    for i = 1, #names, 3 do
      V[names[i]], V[names[i + 1]], V[names[i + 2]] = tonumber(raw[i] or '-1'), tonumber(raw[i + 1] or '0'), tonumber(raw[i + 2] or '0')
    end
  end
  for _, l in ipairs(limits) do
    local w = l.w.window
    local start, cur, prev = V[l.w.s], V[l.w.c], V[l.w.p]
    local aligned = now - (now % w)
    l.rolled = start < 0 or aligned - start >= w
    if start < 0 or aligned - start >= 2 * w then start, cur, prev = aligned, 0, 0
    elseif aligned - start >= w then start, cur, prev = aligned, 0, cur end
    l.start, l.cur, l.prev = start, cur, prev
  end
end

-- Adds `l.add` to each window's current count, for the flush to write. When a window rolled (a
-- minute's does every minute of use), the hash's lifetime is set to WINDOW_HASH_TTL_MS: longer
-- than the longest window and the one before it, which is all it has to remember.
local function write_windows(hash, limits)
  if #limits == 0 then return end
  local H = WINDOW_HASHES[hash]
  local V = H.values
  for _, l in ipairs(limits) do
    V[l.w.s], V[l.w.c], V[l.w.p] = l.start, l.cur + l.add, l.prev
    H.written[l.w] = true
    H.expire = H.expire or l.rolled
  end
end

-- Adds a charge to the history of the ledger's period, for the flush to write.
local function add_history(key, L, micros)
  local periods = HISTORY[key]
  if periods == nil then
    periods = {}
    HISTORY[key] = periods
  end
  local label = period_label(L)
  periods[label] = (periods[label] or 0) + micros
end

-- Takes `micros` (text, as the member has it) off the hold `id` in `zset`, leaving `after`
-- (a number; 0 removes it) that expires at `expires`. Returns false when the hold is not there
-- (it expired and was released, or was never made): nothing was reserved for it any more.
local function take_hold(zset, id, micros, after, expires)
  local key = zset .. ' ' .. id
  local H = HOLDS[key]
  if H == nil or H.micros ~= micros then
    if redis.call('ZREM', zset, id .. '|' .. micros) == 0 then return false end
    H = { zset = zset, id = id }
    HOLDS[key] = H
  end
  H.micros, H.expires = tostring(money(after)), expires
  return true
end

-- Writes what the batch changed: one HSET per ledger and per rate-limit hash, one HINCRBY per
-- period charged, one ZADD per hold left smaller.
local function flush()
  for key, L in pairs(LEDGERS) do
    if L and L.dirty then
      redis.call('HSET', key, 'ptype', L.ptype, 'pidx', L.pidx, 'spent', money(L.spent), 'reserved', money(L.reserved), 'lease_until', L.lease_until, 'alerted', L.alerted)
    end
  end
  for _, H in pairs(HOLDS) do
    if H.micros ~= '0' then redis.call('ZADD', H.zset, H.expires, H.id .. '|' .. H.micros) end
  end
  for hash, H in pairs(WINDOW_HASHES) do
    local fields = {}
    for w in pairs(H.written) do
      local V = H.values
      fields[#fields + 1] = w.s
      fields[#fields + 1] = V[w.s]
      fields[#fields + 1] = w.c
      fields[#fields + 1] = V[w.c]
      fields[#fields + 1] = w.p
      fields[#fields + 1] = V[w.p]
    end
    if #fields > 0 then
      redis.call('HSET', hash, unpack(fields))
      if H.expire then redis.call('PEXPIRE', hash, WINDOW_HASH_TTL_MS) end
    end
  end
  for key, periods in pairs(HISTORY) do
    for label, micros in pairs(periods) do redis.call('HINCRBY', key, label, money(micros)) end
  end
end

-- Runs, for each request of the batch in ARGV[1], in order, the step of its kind (`steps`, by
-- kind) on its key set and its arguments, writes what they changed, and returns their replies in
-- that order, as a JSON list.
-- A step that fails (a key of the wrong type) fails the batch, but what the steps before it did
-- is written first, as when each wrote as it went: the holds they added to or took from the
-- sorted sets are already there, and the ledgers must count them.
local function each_request(steps)
  local batch = cjson.decode(ARGV[1])
  local sets = batch.k
  if sets == nil then
    sets = {}
    for i = 1, batch.n * KEY_SET_SIZE, KEY_SET_SIZE do sets[#sets + 1] = { unpack(KEYS, i, i + KEY_SET_SIZE - 1) } end
  end
  local replies = {}
  local ok, failure = pcall(function()
    for _, request in ipairs(batch.r) do
      replies[#replies + 1] = steps[request.t](sets[request.k], request, sets)
    end
  end)
  flush()
  if not ok then error(failure) end
  if ALERTS_STREAM == '' then return cjson.encode({ replies, RAISED }) end
  return cjson.encode(replies)
end
