-- Appends a batch of usage records, each to its user's stream, and adds the batch's totals to
-- the users' and routers' daily totals. The gateway gathers the records of one turn of its event
-- loop into one call and sums them per daily hash first, so recording costs a fraction of a
-- command per request (every redis.call costs more than the command it runs).
-- A record's stream id has the record's time as its milliseconds, so queries can range over ids.
-- A stream id never goes back: a record older than its stream's newest entry (a slow request,
-- another gateway's clock) is filed at Redis's own clock instead, which is never behind the
-- stream. Entries older than the retention are trimmed (approximately: whole macro nodes) and a
-- stream expires when no record came for the retention time. Router totals live outside the
-- users' hash slots: this assumes a single Redis, as findKey does.
--
-- KEYS: the streams of the records (one per record, repeated for records of one user), then the
--       daily totals hashes
-- ARGV: 1 oldest id kept (ms), 2 retention (ms), 3 daily totals' TTL (s), 4 the number of
--       records; then for each record: time (ms) and the record (JSON, the entry's one field
--       `r`: one argument rather than a field/value pair per column); then for each daily totals hash: requests, prompt tokens, completion
--       tokens, cost (micros), kWh, kgCO2eq to add
-- Returns the number of records appended.

local oldest, retention, ttl = ARGV[1], ARGV[2], ARGV[3]
local records = tonumber(ARGV[4])
local at = 5
local streams = {}
for r = 1, records do
  local stream, time, record = KEYS[r], ARGV[at], ARGV[at + 1]
  at = at + 2
  local id = redis.pcall('XADD', stream, 'MINID', '~', oldest, time .. '-*', 'r', record)
  if type(id) == 'table' and id.err then
    redis.call('XADD', stream, 'MINID', '~', oldest, '*', 'r', record)
  end
  streams[stream] = true
end
for stream in pairs(streams) do redis.call('PEXPIRE', stream, retention) end

for k = records + 1, #KEYS do
  local daily = KEYS[k]
  -- The first write of a day's hash gives it its lifetime.
  if redis.call('HINCRBY', daily, 'requests', ARGV[at]) == tonumber(ARGV[at]) then redis.call('EXPIRE', daily, ttl) end
  redis.call('HINCRBY', daily, 'prompt_tokens', ARGV[at + 1])
  redis.call('HINCRBY', daily, 'completion_tokens', ARGV[at + 2])
  redis.call('HINCRBY', daily, 'cost_micros', ARGV[at + 3])
  redis.call('HINCRBYFLOAT', daily, 'kwh', ARGV[at + 4])
  redis.call('HINCRBYFLOAT', daily, 'kgco2eq', ARGV[at + 5])
  at = at + 6
end
return records
