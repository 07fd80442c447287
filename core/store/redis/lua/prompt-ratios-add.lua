-- Adds prompt-ratio observations to the one hash of every router's histogram (keys.promptRatios),
-- fields `<bucket>:<router>` -> count, and halves a router's counts once they add up past the
-- limit, so older observations fade (store/prompt-ratios.ts).
-- KEYS: 1 the hash. ARGV: 1 JSON [[router, [[bucket, count], ...]], ...]; 2 the halving total.
local key = KEYS[1]
local limit = tonumber(ARGV[2])
for _, entry in ipairs(cjson.decode(ARGV[1])) do
  local router = entry[1]
  for _, bc in ipairs(entry[2]) do
    redis.call('HINCRBY', key, bc[1] .. ':' .. router, bc[2])
  end
end
local totals, fields = {}, {}
local all = redis.call('HGETALL', key)
for i = 1, #all, 2 do
  local field = all[i]
  local colon = string.find(field, ':', 1, true)
  local router = string.sub(field, colon + 1)
  totals[router] = (totals[router] or 0) + tonumber(all[i + 1])
  fields[#fields + 1] = { field, router, tonumber(all[i + 1]) }
end
for _, f in ipairs(fields) do
  if totals[f[2]] > limit then
    local half = math.floor(f[3] / 2)
    if half == 0 then redis.call('HDEL', key, f[1]) else redis.call('HSET', key, f[1], half) end
  end
end
return #fields
