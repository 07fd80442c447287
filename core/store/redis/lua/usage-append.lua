-- Appends a batch of usage records, each to its user's stream, and adds the batch's totals to
-- the users' and routers' daily totals. The gateway gathers the records of one turn of its event
-- loop into one call and sums them per daily hash first, so recording costs a fraction of a
-- command per request (every redis.call costs more than the command it runs).
-- A record's stream id has the record's time as its milliseconds, so queries can range over ids.
-- A stream id never goes back: a record older than its stream's newest entry (a slow request,
-- another gateway's clock) is filed at Redis's own clock instead, which is never behind the
-- stream. Entries older than the retention are trimmed (approximately: whole macro nodes) and a
-- stream expires when no record came for the retention time. Router totals live outside the
-- users' hash slots: on a Redis Cluster the gateway sends one call per slot, each holding the
-- streams and daily totals of that slot, all of them passed as KEYS (redis-usage-log.ts).
--
-- ARGV: 1 the batch (JSON): `oldest` id kept (ms), `retention` (ms), daily totals' `ttl` (s),
--       `streams` (each record's user stream), `times` (each record's time, ms), `daily` (for each
--       daily totals hash: key, requests, prompt tokens, completion tokens, cost in micros, kWh,
--       kgCO2eq, uncovered cost in micros, prompt tokens read from and written to a prompt cache
--       to add, all as text); 2 the records (JSON), one per line, in the same order.
--       Two arguments whatever the batch's size: the client encodes arguments one by one. The
--       keys travel inside them; on a cluster they are KEYS too (empty on one Redis).
-- Returns the number of records appended.

local batch = cjson.decode(ARGV[1])
local records = ARGV[2]
local oldest, retention, ttl = batch.oldest, batch.retention, batch.ttl
local streams = {}
local from = 1
for r, stream in ipairs(batch.streams) do
  local stop = string.find(records, '\n', from, true)
  local record = stop and string.sub(records, from, stop - 1) or string.sub(records, from)
  from = (stop or #records) + 1
  local id = redis.pcall('XADD', stream, 'MINID', '~', oldest, batch.times[r] .. '-*', 'r', record)
  if type(id) == 'table' and id.err then
    redis.call('XADD', stream, 'MINID', '~', oldest, '*', 'r', record)
  end
  streams[stream] = true
end
for stream in pairs(streams) do redis.call('PEXPIRE', stream, retention) end

for _, d in ipairs(batch.daily) do
  local daily = d[1]
  -- The first write of a day's hash gives it its lifetime.
  if redis.call('HINCRBY', daily, 'requests', d[2]) == tonumber(d[2]) then redis.call('EXPIRE', daily, ttl) end
  redis.call('HINCRBY', daily, 'prompt_tokens', d[3])
  redis.call('HINCRBY', daily, 'completion_tokens', d[4])
  redis.call('HINCRBY', daily, 'cost_micros', d[5])
  redis.call('HINCRBYFLOAT', daily, 'kwh', d[6])
  redis.call('HINCRBYFLOAT', daily, 'kgco2eq', d[7])
  if d[8] ~= '0' then redis.call('HINCRBY', daily, 'uncovered_micros', d[8]) end
  -- Prompt-cache counts: written only when some (a hash without them reads as 0, as before they were kept).
  if d[9] ~= nil and d[9] ~= '0' then redis.call('HINCRBY', daily, 'cached_tokens', d[9]) end
  if d[10] ~= nil and d[10] ~= '0' then redis.call('HINCRBY', daily, 'cache_write_tokens', d[10]) end
end
return #batch.streams
