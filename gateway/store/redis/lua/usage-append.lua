-- Appends a usage record to the user's stream and adds it to the user's and the router's daily
-- totals, in one call (one command per request on the hot path instead of fifteen).
-- The entry id's milliseconds are the record's time, so queries can range over ids. A stream
-- id never goes back: a record older than the newest entry (a slow request, another gateway's
-- clock) is filed at Redis's own clock instead, which is never behind the stream. Entries older
-- than the retention are trimmed (approximately: whole macro nodes) and the stream expires when
-- no record came for the retention time. The router's totals live outside the user's hash slot:
-- this assumes a single Redis, as findKey does.
--
-- KEYS: 1 the user's usage stream, 2 the user's daily totals, 3 the router's daily totals
-- ARGV: 1 record time (ms), 2 oldest id kept (ms), 3 retention (ms), 4 daily totals' TTL (s),
--       5 prompt tokens, 6 completion tokens, 7 cost (micros), 8 kWh, 9 kgCO2eq,
--       10.. the record's field, value pairs
-- Returns the entry id.

local id = redis.pcall('XADD', KEYS[1], 'MINID', '~', ARGV[2], ARGV[1] .. '-*', unpack(ARGV, 10))
if type(id) == 'table' and id.err then
  id = redis.call('XADD', KEYS[1], 'MINID', '~', ARGV[2], '*', unpack(ARGV, 10))
end
redis.call('PEXPIRE', KEYS[1], ARGV[3])

for i = 2, 3 do
  redis.call('HINCRBY', KEYS[i], 'requests', 1)
  redis.call('HINCRBY', KEYS[i], 'prompt_tokens', ARGV[5])
  redis.call('HINCRBY', KEYS[i], 'completion_tokens', ARGV[6])
  redis.call('HINCRBY', KEYS[i], 'cost_micros', ARGV[7])
  redis.call('HINCRBYFLOAT', KEYS[i], 'kwh', ARGV[8])
  redis.call('HINCRBYFLOAT', KEYS[i], 'kgco2eq', ARGV[9])
  redis.call('EXPIRE', KEYS[i], ARGV[4])
end
return id
