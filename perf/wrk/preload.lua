-- Writes keys key0 .. key(KEYS-1) once each, split across wrk's threads; each thread stops once all
-- of its keys are answered. Runs in wrk2 (give a very high -R, e.g. -R10000000) and Debian's wrk:
--   wrk2 -t2 -c64 -d3600s -R10000000 -s preload.lua http://127.0.0.1:8080 -- 2
-- Argument: the step, which must be the number of threads (-t): thread i writes keys i, i+step,
-- i+2*step, ... (default 1, right only with -t1).
-- Env: KEYS (default 100000), VALUE_BYTES (default 256), QUERY (extra query, e.g. "&ack=2&from=3"),
-- KVORUM_TOKEN_FILE (a bearer token to send, as in lib/kvorum.lua).
--
-- Progress on stdout, per thread, every 1000 answers and once when all of its keys are answered:
--   kvorum-preload <thread> <share> <written> <running|done> [<status>=<count> ...]
-- share: the keys of this thread; written: its 2xx answers; then its non-2xx answers by status.
-- wrk/wrk2 keep running for their whole -d after every thread stopped, so whoever runs this stops
-- the tool once each thread printed "done" (./kvorum perf does, and so does perf/range-bench.sh).
-- Keys are not retried: wrk's response() does not say which request it answers, so a non-2xx answer
-- (e.g. 503 under overload) cannot be matched to its key; it is counted and the reader fails.
local keys = tonumber(os.getenv("KEYS") or "100000")
local value = string.rep("v", tonumber(os.getenv("VALUE_BYTES") or "256"))
local query = os.getenv("QUERY") or ""
local PROGRESS_EVERY = 1000
package.path = debug.getinfo(1, "S").source:match("^@?(.-)[^/]*$") .. "lib/?.lua;" .. package.path
local kv = require("kvorum")
local threads = {}

function setup(thread)
  thread:set("id", #threads)
  table.insert(threads, thread)
end

local function report(state)
  local line = "kvorum-preload " .. id .. " " .. share .. " " .. written .. " " .. state
  for status, n in pairs(failed) do
    line = line .. " " .. status .. "=" .. n
  end
  io.write(line .. "\n")
  io.stdout:flush()
end

function init(args)
  step = #args > 0 and tonumber(args[1]) or 1
  next_key = id
  share = id < keys and math.floor((keys - 1 - id) / step) + 1 or 0
  answered, written, failed = 0, 0, {}
  -- wrk and wrk2 call request() once in thread 0's state before any thread runs, only to check the
  -- request's syntax, and never send it: that call must not use up a key.
  syntax_check_pending = id == 0
  wrk.method = "PUT"
  wrk.body = value
  kv.authorize()
  if share == 0 then
    report("done")
  end
end

function request()
  if next_key >= keys then
    -- Nothing left: an empty request leaves this connection idle instead of writing past KEYS.
    return ""
  end
  local k = next_key
  if syntax_check_pending then
    syntax_check_pending = false
  else
    next_key = next_key + step
  end
  return wrk.format(nil, "/v0/entity?id=key" .. k .. query)
end

function response(status, headers, body)
  answered = answered + 1
  if status >= 200 and status < 300 then
    written = written + 1
  else
    failed[status] = (failed[status] or 0) + 1
  end
  if answered >= share then
    report("done")
    wrk.thread:stop()
  elseif answered % PROGRESS_EVERY == 0 then
    report("running")
  end
end
