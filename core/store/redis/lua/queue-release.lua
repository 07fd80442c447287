-- A gateway gives back a provider slot as its request ends, however it ended, and records how the
-- provider did in the fleet-wide metrics every worker chooses on: moving averages of time to
-- first token, latency and time per output token, error and timeout rates, the last 50 times to
-- first token (for a p95), the 429s, and the cool-down: after `threshold` failures in a row, or
-- for as long as a backend's retry-after asked, but never longer than the cool-down setting (one
-- 429 asking for an hour must not take a provider out for an hour). The probe let through a
-- cooling provider (queue-common.lua give_slot) ends the cool-down when it is answered well.
-- Workers are told a slot came free.
--
-- KEYS: slots, metrics, recent (Q.* of the provider)
-- ARGV: request id; router name (for the freed channel); outcome: ok | fail | timeout | limited |
--       none (a slot given back unused: no metrics); ttft, latency, time per output token (ms,
--       '' when unknown); retry-after asked (ms, 0 none); threshold; cool-down (ms)
-- Returns {released (1 or 0), cooling started (1 or 0)}.
local id, router, outcome = ARGV[1], ARGV[2], ARGV[3]
local released = redis.call('ZREM', KEYS[1], id)
local cooling = 0
-- A cool-down ended by its probe lets the router's waiting requests go too.
local back = false
if outcome ~= 'none' then
  local now = now_ms()
  local m = KEYS[2]
  local function ewma(field, value, weight)
    local old = tonumber(redis.call('HGET', m, field))
    redis.call('HSET', m, field, old and (old * (1 - weight) + value * weight) or value)
  end
  redis.call('HINCRBY', m, 'n', 1)
  if outcome == 'ok' then
    redis.call('HSET', m, 'fails', 0)
    if redis.call('HGET', m, 'probe_id') == id then
      redis.call('HSET', m, 'cool', 0)
      redis.call('HDEL', m, 'probe_id', 'probe_at')
      back = true
    end
    local ttft, latency, tpot = tonumber(ARGV[4]), tonumber(ARGV[5]), tonumber(ARGV[6])
    if ttft then
      ewma('ttft', ttft, 0.2)
      redis.call('LPUSH', KEYS[3], ttft)
      redis.call('LTRIM', KEYS[3], 0, 49)
    end
    if latency then ewma('latency', latency, 0.2) end
    if tpot then ewma('tpot', tpot, 0.2) end
    ewma('errors', 0, 0.1)
    ewma('timeouts', 0, 0.1)
  else
    ewma('errors', 1, 0.1)
    ewma('timeouts', outcome == 'timeout' and 1 or 0, 0.1)
    local retry_ms = math.min(tonumber(ARGV[7]) or 0, tonumber(ARGV[9]))
    if outcome == 'limited' then
      redis.call('HINCRBY', m, 'limited', 1)
      redis.call('HSET', m, 'limited_at', now)
    end
    local cool = tonumber(redis.call('HGET', m, 'cool')) or 0
    if retry_ms > 0 and now + retry_ms > cool then
      redis.call('HSET', m, 'cool', now + retry_ms)
      cooling = 1
    end
    local fails = redis.call('HINCRBY', m, 'fails', 1)
    if fails >= tonumber(ARGV[8]) then
      redis.call('HSET', m, 'fails', 0)
      redis.call('HSET', m, 'cool', math.max(now + tonumber(ARGV[9]), cool))
      cooling = 1
    end
  end
end
if released == 1 or back then redis.call('PUBLISH', Q.FREED, router) end
return { released, cooling }
