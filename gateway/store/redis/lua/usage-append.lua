-- Appends a usage record to the user's stream, with the record's time as the entry id's
-- milliseconds so queries can range over ids. A stream id never goes back: a record older than
-- the newest id (a slow request, another gateway's clock) is filed at that newest millisecond.
-- Trims entries older than the retention (approximately: whole macro nodes) and lets the
-- stream expire when no record came for the retention time.
--
-- KEYS: 1 the user's usage stream
-- ARGV: 1 record time (ms), 2 oldest id kept (ms), 3 retention (ms), 4.. field, value, ...
-- Returns the entry id.

local ms = tonumber(ARGV[1])
if redis.call('EXISTS', KEYS[1]) == 1 then
  local info = redis.call('XINFO', 'STREAM', KEYS[1])
  for i = 1, #info, 2 do
    if info[i] == 'last-generated-id' then
      local last = tonumber(string.match(info[i + 1], '^(%d+)-'))
      if last > ms then ms = last end
      break
    end
  end
end
local id = redis.call('XADD', KEYS[1], 'MINID', '~', ARGV[2], string.format('%.0f', ms) .. '-*', unpack(ARGV, 4))
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return id
