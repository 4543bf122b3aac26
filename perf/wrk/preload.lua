-- Writes keys key0 .. key(KEYS-1) once each, split across wrk's threads, then stops.
-- Env: KEYS (default 100000), VALUE_BYTES (default 256), QUERY (extra query, e.g. "&ack=2&from=3").
local keys = tonumber(os.getenv("KEYS") or "100000")
local value = string.rep("v", tonumber(os.getenv("VALUE_BYTES") or "256"))
local query = os.getenv("QUERY") or ""
local threads = {}

function setup(thread)
  thread:set("id", #threads)
  table.insert(threads, thread)
end

function init(args)
  next_key = id
  step = #args > 0 and tonumber(args[1]) or 1
  wrk.method = "PUT"
  wrk.body = value
end

function request()
  local k = next_key
  next_key = next_key + step
  return wrk.format(nil, "/v0/entity?id=key" .. k .. query)
end

function response(status, headers, body)
  if next_key >= keys then
    wrk.thread:stop()
  end
end
