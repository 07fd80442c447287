-- Provider health in the scripts: every write of the health fields of a provider's hash (H.*,
-- declared in provider-fields.ts) is one of these functions, whichever script makes it: a breaker
-- a gateway opened (health-open.lua), a queue-mode release (queue-release.lua) and the probe of a
-- cooling provider the workers let through (queue-common.lua). Loaded before those scripts.
-- `m` is the provider's hash (Q.metrics of the provider, or the script's key).

-- Cools the provider down until `until_ms` (ms since the epoch, as the caller wrote it), for
-- `reason`; a cool-down already longer stays.
local function health_open(m, until_ms, reason)
  redis.call('HSET', m, H.REASON, reason)
  if (tonumber(redis.call('HGET', m, H.COOL_UNTIL)) or 0) < tonumber(until_ms) then redis.call('HSET', m, H.COOL_UNTIL, until_ms) end
end

-- Whether a probe request may go through a cooling provider now: one every H.PROBE_EVERY_MS,
-- fleet-wide. `cool` and `probe_at` as read from the hash.
local function health_probe_due(cool, probe_at, now)
  return cool > now and (tonumber(probe_at) or 0) <= now
end

-- Request `id` goes to the cooling provider as its probe: the next goes no sooner than
-- H.PROBE_EVERY_MS from now, and this one's good answer ends the cool-down (health_answered).
local function health_probe_given(m, id, now)
  redis.call('HSET', m, H.PROBE_AT, now + H.PROBE_EVERY_MS, H.PROBE_ID, id)
end

-- Request `id` was answered: the failures in a row start again from none, and when it was the
-- cooling provider's probe the cool-down ends. Returns whether it ended.
local function health_answered(m, id)
  redis.call('HSET', m, H.FAILS_IN_ROW, 0)
  if redis.call('HGET', m, H.PROBE_ID) ~= id then return false end
  redis.call('HSET', m, H.COOL_UNTIL, 0)
  redis.call('HDEL', m, H.PROBE_ID, H.PROBE_AT)
  return true
end

-- A request failed at `now`: the provider cools down for as long as its retry-after asked
-- (`retry_ms`, already bounded by the cool-down), and for `cooldown_ms` after `threshold` failures
-- in a row. Returns 1 when this failure started (or lengthened) a cool-down, else 0.
local function health_failed(m, now, retry_ms, threshold, cooldown_ms)
  local cooling = 0
  local cool = tonumber(redis.call('HGET', m, H.COOL_UNTIL)) or 0
  if retry_ms > 0 and now + retry_ms > cool then
    redis.call('HSET', m, H.COOL_UNTIL, now + retry_ms)
    cooling = 1
  end
  local fails = redis.call('HINCRBY', m, H.FAILS_IN_ROW, 1)
  if fails >= threshold then
    redis.call('HSET', m, H.FAILS_IN_ROW, 0)
    redis.call('HSET', m, H.COOL_UNTIL, math.max(now + cooldown_ms, cool))
    cooling = 1
  end
  return cooling
end
