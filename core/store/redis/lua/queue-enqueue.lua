-- A gateway adds a request to its router's stream `router.<model_id>`, unless the stream already
-- holds `most` entries no worker has taken (no worker runs, or too few): then the request is
-- refused at once, with when to come back, and the stream never grows without bound.
--
-- KEYS: stream, stats, gateways (Q.* of the router)
-- ARGV: most entries in the stream; the router's wait (ms, the Retry-After before any slot was
--       given); then the entry's fields and values, as XADD takes them
-- Returns {'ok', stream id} or {'full', retry-after seconds}.
-- On a cluster the gateway says here it listens for its answers (queue-common.lua listening()):
-- its first request to the router must find it listening; the gateway says it again while it lives.
local depth = redis.call('XLEN', KEYS[1])
if depth >= tonumber(ARGV[1]) then
  return { 'full', tostring(retry_after(KEYS[2], depth, now_ms(), tonumber(ARGV[2]))) }
end
local fields = {}
for i = 3, #ARGV do fields[#fields + 1] = ARGV[i] end
if Q.CLUSTER then
  for i = 3, #ARGV - 1, 2 do
    if ARGV[i] == 'gw' then redis.call('HSET', KEYS[3], ARGV[i + 1], now_ms() + Q.LISTENING_TTL_MS) end
  end
end
return { 'ok', redis.call('XADD', KEYS[1], '*', unpack(fields)) }
