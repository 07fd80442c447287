-- Appends a batch of usage records: each to its user's stream, and to its user's and router's
-- daily totals. The gateway gathers the records of one turn of its event loop into one call, so
-- recording costs a fraction of a command per request.
-- A record's stream id has the record's time as its milliseconds, so queries can range over ids.
-- A stream id never goes back: a record older than its stream's newest entry (a slow request,
-- another gateway's clock) is filed at Redis's own clock instead, which is never behind the
-- stream. Entries older than the retention are trimmed (approximately: whole macro nodes) and a
-- stream expires when no record came for the retention time. Router totals live outside the
-- users' hash slots: this assumes a single Redis, as findKey does.
--
-- KEYS: for each record: its user's stream, its user's daily totals, its router's daily totals
-- ARGV: 1 oldest id kept (ms), 2 retention (ms), 3 daily totals' TTL (s), then for each record:
--       time (ms), prompt tokens, completion tokens, cost (micros), kWh, kgCO2eq, the number of
--       field/value pairs that follow, and those pairs
-- Returns the number of records appended.

local oldest, retention, ttl = ARGV[1], ARGV[2], ARGV[3]
local at = 4
local records = #KEYS / 3
for r = 0, records - 1 do
  local stream, userDaily, routerDaily = KEYS[r * 3 + 1], KEYS[r * 3 + 2], KEYS[r * 3 + 3]
  local time, prompt, completion, cost, kwh, kg = ARGV[at], ARGV[at + 1], ARGV[at + 2], ARGV[at + 3], ARGV[at + 4], ARGV[at + 5]
  local pairs = tonumber(ARGV[at + 6])
  local fields = {}
  for i = 1, pairs * 2 do fields[i] = ARGV[at + 6 + i] end
  at = at + 7 + pairs * 2

  local id = redis.pcall('XADD', stream, 'MINID', '~', oldest, time .. '-*', unpack(fields))
  if type(id) == 'table' and id.err then
    redis.call('XADD', stream, 'MINID', '~', oldest, '*', unpack(fields))
  end
  redis.call('PEXPIRE', stream, retention)
  for _, daily in ipairs({ userDaily, routerDaily }) do
    redis.call('HINCRBY', daily, 'requests', 1)
    redis.call('HINCRBY', daily, 'prompt_tokens', prompt)
    redis.call('HINCRBY', daily, 'completion_tokens', completion)
    redis.call('HINCRBY', daily, 'cost_micros', cost)
    redis.call('HINCRBYFLOAT', daily, 'kwh', kwh)
    redis.call('HINCRBYFLOAT', daily, 'kgco2eq', kg)
    redis.call('EXPIRE', daily, ttl)
  end
end
return records
