-- Replaces the catalog if it is still at the revision the writer read (compare-and-set), and
-- tells every gateway on the change channel. The writer sends the whole new catalog, already
-- carrying the next revision, so the script never re-encodes JSON (cjson would turn [] into {}).
--
-- KEYS: 1 catalog (JSON {revision, routers, providers})
-- ARGV: 1 expected revision, 2 new catalog (JSON, revision = expected + 1), 3 change channel
-- Returns the new revision, or -1 when someone else wrote first.

local expected = tonumber(ARGV[1])
local current = redis.call('GET', KEYS[1])
local revision = 0
if current then revision = cjson.decode(current).revision end
if revision ~= expected then return -1 end
redis.call('SET', KEYS[1], ARGV[2])
redis.call('PUBLISH', ARGV[3], expected + 1)
return expected + 1
