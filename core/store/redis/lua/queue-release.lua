-- A gateway gives back a provider slot as its request ends, however it ended, and records how the
-- provider did in the fleet-wide metrics every worker chooses on: moving averages of time to
-- first token, latency and time per output token, error and timeout rates, the last 50 times to
-- first token (for a p95), the 429s, and (health-common.lua) the cool-down: after `threshold`
-- failures in a row, or for as long as a backend's retry-after asked, but never longer than the
-- cool-down setting (one 429 asking for an hour must not take a provider out for an hour). The
-- probe let through a cooling provider (queue-common.lua give_slot) ends the cool-down when it is
-- answered well. Workers are told a slot came free.
--
-- KEYS: slots, metrics, recent (Q.* of the provider)
-- ARGV: request id; router name (for the freed channel); outcome: ok | fail | timeout | limited |
--       none (a slot given back unused: no metrics); ttft, latency, time per output token (ms,
--       '' when unknown); retry-after asked (ms, 0 none); the gateway's cooling policy (its
--       provider health's: core/store/provider-health.ts CoolingPolicy): threshold, cool-down (ms)
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
  redis.call('HINCRBY', m, M.ANSWERS, 1)
  if outcome == 'ok' then
    back = health_answered(m, id)
    local ttft, latency, tpot = tonumber(ARGV[4]), tonumber(ARGV[5]), tonumber(ARGV[6])
    if ttft then
      ewma(M.TTFT_MS, ttft, 0.2)
      redis.call('LPUSH', KEYS[3], ttft)
      redis.call('LTRIM', KEYS[3], 0, 49)
    end
    if latency then ewma(M.LATENCY_MS, latency, 0.2) end
    if tpot then ewma(M.TPOT_MS, tpot, 0.2) end
    ewma(M.ERROR_RATE, 0, 0.1)
    ewma(M.TIMEOUT_RATE, 0, 0.1)
  else
    ewma(M.ERROR_RATE, 1, 0.1)
    ewma(M.TIMEOUT_RATE, outcome == 'timeout' and 1 or 0, 0.1)
    if outcome == 'limited' then
      redis.call('HINCRBY', m, M.LIMITED, 1)
      redis.call('HSET', m, M.LIMITED_AT, now)
    end
    local cooldown_ms = tonumber(ARGV[9])
    cooling = health_failed(m, now, math.min(tonumber(ARGV[7]) or 0, cooldown_ms), tonumber(ARGV[8]), cooldown_ms)
  end
end
if released == 1 or back then redis.call('PUBLISH', Q.FREED, router) end
return { released, cooling }
