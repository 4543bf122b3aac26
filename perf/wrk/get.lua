-- GET of a random key among KEYS (default 100000), which preload.lua wrote.
-- QUERY appends to the query string, e.g. "&ack=2&from=3".
local keys = tonumber(os.getenv("KEYS") or "100000")
local query = os.getenv("QUERY") or ""

function init(args)
  math.randomseed(os.time() + tonumber(tostring({}):sub(8), 16))
end

function request()
  return wrk.format("GET", "/v0/entity?id=key" .. math.random(0, keys - 1) .. query)
end
