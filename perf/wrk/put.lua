-- PUT of a random key among KEYS (default 100000) with a VALUE_BYTES (default 256) body.
-- QUERY appends to the query string, e.g. "&ack=2&from=3".
local keys = tonumber(os.getenv("KEYS") or "100000")
local value = string.rep("v", tonumber(os.getenv("VALUE_BYTES") or "256"))
local query = os.getenv("QUERY") or ""

function init(args)
  math.randomseed(os.time() + tonumber(tostring({}):sub(8), 16))
  wrk.method = "PUT"
  wrk.body = value
end

function request()
  return wrk.format(nil, "/v0/entity?id=key" .. math.random(0, keys - 1) .. query)
end
